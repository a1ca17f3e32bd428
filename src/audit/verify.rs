//! Verification of the trail (a `seq` range of it) and of a CSV export, reporting every broken
//! place rather than the first.

use std::io::Read;

use futures_util::StreamExt;

use crate::store::{PAGE, Pruning, Reader, StoreError};
use crate::trail::checkpoint::Checkpoint;
use crate::trail::csv::CsvError;
use crate::trail::export::{CsvChecks, ExportCheck};
use crate::trail::note::{Note, NoteVerifier};
use crate::trail::{Anchors, Frontier, Hash, Prefix, Problem, Report, Verifier, decode};

/// Why a verification could not be carried out (as opposed to finding problems).
#[derive(Debug, thiserror::Error)]
pub enum VerifyError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(transparent)]
    Csv(#[from] CsvError),
}

/// Verifies the trail's events from `from` to `to` (the head when `None`): the chain, the
/// Merkle tree recomputed from the events against every checkpoint on the trail (their
/// signatures too, with `anchors.key`), and, with `anchors.checkpoint`, that the trail extends
/// a checkpoint kept elsewhere. `progress` is called with the number of events checked after
/// each page.
pub async fn verify_trail(
    reader: &Reader,
    from: i64,
    to: Option<i64>,
    anchors: &Anchors,
    mut progress: impl FnMut(u64),
) -> Result<Report, StoreError> {
    // A prune recorded during the walk may have deleted rows under it: walked again from
    // where the file now starts, until a walk sees no prune (a few times at most).
    let mut report = walk(reader, from, to, anchors, &mut progress).await?;
    for _ in 0..WALKS {
        let floor = report.pruned.as_ref().map_or(0, |p| p.through);
        match reader.pruned().await? {
            Some(now) if now.through > floor => {
                report = walk(reader, from, to, anchors, &mut progress).await?;
            }
            _ => break,
        }
    }
    Ok(report)
}

/// How many times a verification walks again after prunes during its walk.
const WALKS: usize = 4;

async fn walk(
    reader: &Reader,
    from: i64,
    to: Option<i64>,
    anchors: &Anchors,
    progress: &mut impl FnMut(u64),
) -> Result<Report, StoreError> {
    let mut report = Report::default();
    // Events pruned from the file are verified from the one after them, linked to the hash
    // the prune event records; the first checkpoint kept signs the root of their tree.
    report.pruned = prefix(reader, &mut report.problems).await?;
    let floor = report.pruned.as_ref().map_or(0, |p| p.through);
    let from = from.max(1).max(floor + 1);
    let mut verifier = starting(reader, from, &mut report).await?;
    // Up to the head as it is now; events appended meanwhile are for the next verification.
    let head = reader.head().await?.map_or(0, |h| h.seq);
    let last = to.map_or(head, |to| to.min(head));
    if let Some(to) = to
        && to > head
    {
        report.problems.push(Problem::Gap { from: (head + 1).max(from), to });
    }
    let mut roots = stored_roots(reader, anchors, head, &mut report).await?;
    vouched(&roots, anchors, &mut report);
    if let Some(given) = &anchors.checkpoint {
        if given.size < floor.unsigned_abs() {
            report.problems.push(Problem::CheckpointPruned { size: given.size });
        }
        roots.push((given.size, 0, given.root));
        roots.sort_by_key(|&(size, seq, _)| (size, seq));
    }
    // The tree up to the first event checked: recomputed from the events when the walk starts
    // at 1, from the stored nodes otherwise.
    let mut tree = if from == 1 {
        Frontier::default()
    } else {
        reader.frontier((from - 1).unsigned_abs()).await?
    };
    // The next root to compare, by its place in `roots` (sorted by size).
    let mut due = roots.partition_point(|&(size, ..)| size < tree.size());
    compare(&tree, &roots, &mut due, &mut report);
    if let Some(prefix) = report.pruned.as_ref().filter(|p| p.through == from - 1)
        && tree.root() != prefix.root
    {
        report.problems.push(Problem::PruneUnrecorded { seq: prefix.seq });
    }
    let page = i64::from(PAGE);
    let ranges =
        (from..=last).step_by(PAGE as usize).map(|first| (first, (first + page - 1).min(last)));
    // Two pages are read at once, on two connections, while the one before is checked.
    let mut pages = futures_util::stream::iter(ranges)
        .map(|(first, last)| {
            let reader = reader.clone();
            async move { reader.links(first, last).await }
        })
        .buffered(2);
    while let Some(links) = pages.next().await {
        let links = links?;
        for link in &links {
            report.problems.extend(verifier.check_link(link));
            tree.push_leaf(link.leaf);
            compare(&tree, &roots, &mut due, &mut report);
        }
        report.checked += links.len() as u64;
        if let Some(link) = links.last() {
            report.last = Some((link.seq, link.hash.map(hex::encode).unwrap_or_default()));
        }
        progress(report.checked);
    }
    report.problems.extend(anchors.too_few_cosignatures());
    if let Some(given) = &anchors.checkpoint {
        let events = head.unsigned_abs();
        if given.size > events {
            report.problems.push(Problem::ShorterThanCheckpoint { size: given.size, events });
        }
    }
    Ok(report)
}

/// The chain's verifier from `from`: from the start, from the hash a prune recorded, or from
/// the event before (a gap when it is missing).
async fn starting(reader: &Reader, from: i64, report: &mut Report) -> Result<Verifier, StoreError> {
    Ok(if from == 1 {
        Verifier::default()
    } else if let Some(prefix) = report.pruned.as_ref().filter(|p| p.through == from - 1) {
        Verifier::starting_at(from, prefix.hash)
    } else {
        match reader.event(from - 1).await? {
            Some(before) => Verifier::starting_at(from, decode(&before.hash).unwrap_or_default()),
            None => {
                report.problems.push(Problem::Gap { from: from - 1, to: from - 1 });
                Verifier::starting_unlinked(from)
            }
        }
    })
}

/// With keys, a prune is believed only where signed checkpoints vouch for it: the first event
/// kept signs what was pruned, and a later one covers the prune event itself.
fn vouched(roots: &[(u64, i64, Hash)], anchors: &Anchors, report: &mut Report) {
    if let Some(prefix) = report.pruned.as_ref().filter(|_| !anchors.keys.is_empty()) {
        let through = prefix.through.unsigned_abs();
        let signs_cut =
            roots.iter().any(|&(size, seq, _)| size == through && seq == prefix.through + 1);
        let covers = roots.iter().any(|&(size, ..)| size >= prefix.seq.unsigned_abs());
        if !signs_cut || !covers {
            report.problems.push(Problem::PruneUnsigned { seq: prefix.seq });
        }
    }
}

/// Compares the tree with the roots due at its size, moving `due` past them.
fn compare(tree: &Frontier, roots: &[(u64, i64, Hash)], due: &mut usize, report: &mut Report) {
    while let Some(&(size, seq, root)) = roots.get(*due) {
        if size > tree.size() {
            break;
        }
        if size == tree.size() && tree.root() != root {
            report.problems.push(Problem::CheckpointRoot { size, seq });
        }
        *due += 1;
    }
}

/// The last prune, as its event on the chain records it, checked against the file's record
/// of it (which lets the rows go): a difference is a problem, and the event is believed.
async fn prefix(
    reader: &Reader,
    problems: &mut Vec<Problem>,
) -> Result<Option<Prefix>, StoreError> {
    let Some(pruned) = reader.pruned().await? else { return Ok(None) };
    let event = reader.event(pruned.seq).await?;
    let read = event.as_ref().and_then(Pruning::of).and_then(|p| {
        Some(Prefix {
            through: p.through,
            seq: pruned.seq,
            hash: decode(&p.hash)?,
            root: decode(&p.root)?,
            archive: p.archive,
        })
    });
    match read {
        Some(prefix)
            if prefix.through == pruned.through && hex::encode(prefix.hash) == pruned.hash =>
        {
            Ok(Some(prefix))
        }
        _ => {
            problems.push(Problem::PruneUnrecorded { seq: pruned.seq });
            // Verified from where the file's record says, so that the rest is still checked.
            let hash = decode(&pruned.hash).unwrap_or_default();
            let archive = String::new();
            let root = reader.frontier(pruned.through.unsigned_abs()).await?.root();
            let (through, seq) = (pruned.through, pruned.seq);
            Ok(Some(Prefix { through, seq, hash, root, archive }))
        }
    }
}

/// The trail's own checkpoints as (size, seq, root), each read, its signature checked with
/// `anchors.key`, and its place checked (it covers every event before it).
async fn stored_roots(
    reader: &Reader,
    anchors: &Anchors,
    head: i64,
    report: &mut Report,
) -> Result<Vec<(u64, i64, crate::trail::Hash)>, StoreError> {
    let mut roots: Vec<(u64, i64, Hash)> = Vec::new();
    let events = reader.checkpoints().await?;
    report.signatures_checked = !anchors.keys.is_empty();
    let covered = events.last().map_or(0, |e| e.seq);
    report.uncovered = (head - covered).unsigned_abs();
    for event in events {
        let seq = event.seq;
        let note = event.record.note.unwrap_or_default();
        let read = read_checkpoint(&note, &anchors.keys, "no signature by a key given with --key");
        match read {
            Ok(checkpoint) if checkpoint.size == (seq - 1).unsigned_abs() => {
                report.checkpoints += 1;
                roots.push((checkpoint.size, seq, checkpoint.root));
            }
            Ok(checkpoint) => {
                report.problems.push(Problem::CheckpointMisplaced { seq, size: checkpoint.size })
            }
            Err(why) => report.problems.push(Problem::CheckpointUnsigned { seq, why }),
        }
    }
    Ok(roots)
}

/// A checkpoint event's note read: signed by one of `keys` (when any is given; `unsigned`
/// says why not), or merely read when none is.
pub(crate) fn read_checkpoint(
    note: &str,
    keys: &[NoteVerifier],
    unsigned: &str,
) -> Result<Checkpoint, String> {
    if keys.is_empty() {
        return Checkpoint::read(note).map_err(|e| e.to_string());
    }
    match Note::parse(note) {
        Ok(parsed) if keys.iter().any(|key| parsed.signed_by(key)) => {
            Checkpoint::from_text(&parsed.text).map_err(|e| e.to_string())
        }
        Ok(_) => Err(unsigned.to_owned()),
        Err(e) => Err(e.to_string()),
    }
}

/// Verifies a CSV export read from `input` (the trail crate's [`ExportCheck`]) and, with
/// `trail`, that every row stands unchanged in that trail.
pub async fn verify_csv(
    input: impl Read,
    checks: CsvChecks<'_>,
    trail: Option<&Reader>,
    mut progress: impl FnMut(u64),
) -> Result<Report, VerifyError> {
    let mut export = ExportCheck::new(input, checks)?;
    while let Some(event) = export.next_row()? {
        if let Some(trail) = trail {
            match trail.event(event.seq).await? {
                None => export.found(Problem::NotInTrail { seq: event.seq }),
                Some(stored) if stored != event => {
                    export.found(Problem::DiffersFromTrail { seq: event.seq });
                }
                Some(_) => {}
            }
        }
        if export.checked() % u64::from(PAGE) == 0 {
            progress(export.checked());
        }
    }
    progress(export.checked());
    Ok(export.finish())
}
