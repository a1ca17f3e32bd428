//! Verification of the trail (a `seq` range of it) and of a CSV export, reporting every broken
//! place rather than the first.

use std::io::{self, BufRead, BufReader, Read};

use sha2::{Digest, Sha256};

use super::{Manifest, ProofsReader};
use crate::store::{PAGE, Reader, StoreError};
use crate::trail::csv::{self, CsvError};
use futures_util::StreamExt;

use crate::trail::{Event, Frontier, Problem, Verifier, decode, verify_inclusion};
use crate::trust::checkpoint::Checkpoint;
use crate::trust::note::{Note, NoteVerifier};

/// What a verification found.
#[derive(Debug, Default)]
pub struct Report {
    /// Events (or rows) checked.
    pub checked: u64,
    pub problems: Vec<Problem>,
    /// The last event checked: its `seq` and `hash`.
    pub last: Option<(i64, String)>,
    /// The checkpoints on the trail whose root was checked against the tree.
    pub checkpoints: u64,
    /// Whether their signatures were checked (a verifier key was given).
    pub signatures_checked: bool,
    /// The events after the last checkpoint on the trail: what a lone file can still hide a
    /// rewrite of. For an export with proofs: the rows after the checkpoint's tree.
    pub uncovered: u64,
    /// An export's rows proven in the checkpoint's tree by their inclusion proofs.
    pub proven: u64,
    /// Whether an export's manifest signature was checked (and verified, or a problem says not).
    pub manifest_signed: bool,
}

/// What a trail's verification checks beyond its chain.
#[derive(Debug, Clone, Default)]
pub struct Anchors {
    /// A checkpoint kept elsewhere, its signature already checked: the trail must extend it.
    pub checkpoint: Option<Checkpoint>,
    /// The log's verifier keys, the current one and those it replaced: every checkpoint on
    /// the trail must be signed by one of them. Empty: signatures are not checked.
    pub keys: Vec<NoteVerifier>,
    /// The witnesses whose cosignature of `checkpoint` verified, and how many are required.
    pub cosigned: usize,
    pub cosignatures_required: usize,
}

impl Report {
    /// Whether nothing is wrong.
    pub fn intact(&self) -> bool {
        self.problems.is_empty()
    }
}

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
    let from = from.max(1);
    let mut report = Report::default();
    let mut verifier = if from == 1 {
        Verifier::default()
    } else {
        match reader.event(from - 1).await? {
            Some(before) => Verifier::starting_at(from, decode(&before.hash).unwrap_or_default()),
            None => {
                report.problems.push(Problem::Gap { from: from - 1, to: from - 1 });
                Verifier::starting_unlinked(from)
            }
        }
    };
    // Up to the head as it is now; events appended meanwhile are for the next verification.
    let head = reader.head().await?.map_or(0, |h| h.seq);
    let last = to.map_or(head, |to| to.min(head));
    if let Some(to) = to
        && to > head
    {
        report.problems.push(Problem::Gap { from: (head + 1).max(from), to });
    }
    let mut roots = stored_roots(reader, anchors, head, &mut report).await?;
    if let Some(given) = &anchors.checkpoint {
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
            while let Some(&(size, seq, root)) = roots.get(due) {
                if size > tree.size() {
                    break;
                }
                if size == tree.size() && tree.root() != root {
                    report.problems.push(Problem::CheckpointRoot { size, seq });
                }
                due += 1;
            }
        }
        report.checked += links.len() as u64;
        if let Some(link) = links.last() {
            report.last = Some((link.seq, link.hash.map(hex::encode).unwrap_or_default()));
        }
        progress(report.checked);
    }
    if anchors.cosigned < anchors.cosignatures_required {
        report.problems.push(Problem::TooFewCosignatures {
            required: anchors.cosignatures_required,
            valid: anchors.cosigned,
        });
    }
    if let Some(given) = &anchors.checkpoint {
        let events = head.unsigned_abs();
        if given.size > events {
            report.problems.push(Problem::ShorterThanCheckpoint { size: given.size, events });
        }
    }
    Ok(report)
}

/// The trail's own checkpoints as (size, seq, root), each read, its signature checked with
/// `anchors.key`, and its place checked (it covers every event before it).
async fn stored_roots(
    reader: &Reader,
    anchors: &Anchors,
    head: i64,
    report: &mut Report,
) -> Result<Vec<(u64, i64, crate::trail::Hash)>, StoreError> {
    let mut roots = Vec::new();
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
pub(super) fn read_checkpoint(
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

fn check(verifier: &mut Verifier, report: &mut Report, event: Event) {
    report.problems.extend(verifier.check(&event));
    report.checked += 1;
    report.last = Some((event.seq, event.hash));
}

/// What a CSV export is checked against, beyond its own rows.
#[derive(Default)]
pub struct CsvChecks<'a> {
    /// The export was filtered: gaps are expected.
    pub filtered: bool,
    /// Every row must stand unchanged in this trail.
    pub trail: Option<&'a Reader>,
    /// The file must match this manifest (and its signature one of `anchors.keys`).
    pub manifest: Option<&'a Manifest>,
    /// Every row the checkpoint covers must be proven in its tree by `proofs`.
    pub anchors: Anchors,
    pub proofs: Option<ProofsReader<Box<dyn BufRead + Send>>>,
}

/// Verifies a CSV export read from `input`.
///
/// A whole-trail export verifies as a chain: gaps are missing rows. With `filtered` (or a
/// manifest whose filter is not empty) gaps are expected, and each row's own hash, the links
/// between rows whose `seq` follow each other, and the order are checked. With `trail`, every
/// row must also stand unchanged in that trail; with `manifest`, the file must match it; with
/// a checkpoint, every row it covers must be proven in its tree.
pub async fn verify_csv(
    input: impl Read,
    checks: CsvChecks<'_>,
    mut progress: impl FnMut(u64),
) -> Result<Report, VerifyError> {
    let CsvChecks { filtered, trail, manifest, anchors, mut proofs } = checks;
    let signed = !anchors.keys.is_empty();
    let filtered = filtered || manifest.is_some_and(|m| !m.filter.is_empty());
    let mut verifier = if filtered { Verifier::filtered() } else { Verifier::default() };
    let mut report = Report::default();
    let mut input = BufReader::new(HashingReader { inner: input, hasher: Sha256::new() });
    let bom =
        input.fill_buf().map_err(::csv::Error::from).map_err(CsvError::from)?.starts_with(csv::BOM);
    if bom {
        input.consume(csv::BOM.len());
    }
    // The csv reader records a row's line before it consumes the `\n` of the CR LF that ended
    // the row before, so in a CR LF file (as toolgate writes them) it counts every row after
    // the header one line short. Errors name the physical line.
    let crlf = {
        let start = input.fill_buf().map_err(::csv::Error::from).map_err(CsvError::from)?;
        start.iter().position(|&b| b == b'\n').is_some_and(|at| at > 0 && start[at - 1] == b'\r')
    };
    let mut rows = ::csv::ReaderBuilder::new()
        .has_headers(false)
        .flexible(true)
        .from_reader(input)
        .into_records();
    let header = match rows.next() {
        Some(header) => csv::check_header(&header.map_err(CsvError::from)?)?,
        None => return Err(CsvError::Header.into()),
    };
    let mut first_seq = None;
    // A proof read ahead of its row (its row is missing from the file).
    let mut pending = None;
    for row in rows.by_ref() {
        let event = match row.map_err(CsvError::from).and_then(|row| header.parse(&row)) {
            Ok(event) => event,
            Err(CsvError::Row { line, message }) => {
                let line = line + u64::from(crlf);
                report.problems.push(Problem::Unreadable { line, message });
                continue;
            }
            Err(e) => return Err(e.into()),
        };
        first_seq.get_or_insert(event.seq);
        if let Some(checkpoint) = &anchors.checkpoint {
            prove(&event, checkpoint, proofs.as_mut(), &mut pending, &mut report);
        }
        if let Some(trail) = trail {
            match trail.event(event.seq).await? {
                None => report.problems.push(Problem::NotInTrail { seq: event.seq }),
                Some(stored) if stored != event => {
                    report.problems.push(Problem::DiffersFromTrail { seq: event.seq });
                }
                Some(_) => {}
            }
        }
        check(&mut verifier, &mut report, event);
        if report.checked % u64::from(PAGE) == 0 {
            progress(report.checked);
        }
    }
    progress(report.checked);
    report.signatures_checked = signed;
    let last_seq = report.last.as_ref().map(|(seq, _)| *seq);
    if let Some(checkpoint) = &anchors.checkpoint {
        let rows_end = last_seq.unwrap_or(0).unsigned_abs();
        if !filtered && rows_end < checkpoint.size {
            report
                .problems
                .push(Problem::ShorterThanCheckpoint { size: checkpoint.size, events: rows_end });
        }
    }
    if anchors.cosigned < anchors.cosignatures_required {
        report.problems.push(Problem::TooFewCosignatures {
            required: anchors.cosignatures_required,
            valid: anchors.cosigned,
        });
    }
    if let Some(manifest) = manifest {
        let mut claims = Vec::new();
        if let (Some(expected), Some(proofs)) = (&manifest.proofs_sha256, proofs.as_mut()) {
            // Read to the end, so that the hash covers the whole proofs file.
            while let Ok(Some(_)) = proofs.next_proof() {}
            claims.push(("proofs_sha256", *expected != proofs.sha256()));
        }
        if !anchors.keys.is_empty() {
            report.manifest_signed = true;
            if !manifest.signed_by(&anchors.keys) {
                report.problems.push(Problem::ManifestMismatch {
                    what:
                        "its signature is missing, not by a --key, or no longer matches its fields"
                            .into(),
                });
            }
        }
        if !filtered
            && let (Some(head), Some(last)) = (manifest.head_seq, last_seq)
            && last < head
        {
            report.problems.push(Problem::ManifestMismatch {
                what: format!(
                    "the export ends at seq {last}, before the head it claims (seq {head}): rows were cut off"
                ),
            });
        }
        // The whole file was read: the hash covers every byte of it.
        let sha256 = hex::encode(rows.into_reader().into_inner().into_inner().hasher.finalize());
        let mismatches = [
            ("csv_sha256", manifest.csv_sha256 != sha256),
            ("rows", manifest.rows != report.checked),
            ("first_seq", manifest.first_seq != first_seq),
            ("last_seq", manifest.last_seq != last_seq),
            ("bom", manifest.bom != bom),
        ]
        .into_iter()
        .chain(claims);
        for (what, differs) in mismatches {
            if differs {
                report.problems.push(Problem::ManifestMismatch {
                    what: format!("{what} differs from the file"),
                });
            }
        }
    }
    Ok(report)
}

/// Checks the row `event` against `checkpoint`: proven by its proof when the checkpoint's tree
/// covers it, counted as uncovered otherwise.
fn prove(
    event: &Event,
    checkpoint: &Checkpoint,
    proofs: Option<&mut ProofsReader<Box<dyn BufRead + Send>>>,
    pending: &mut Option<(i64, Vec<crate::trail::Hash>)>,
    report: &mut Report,
) {
    let seq = event.seq;
    if seq < 1 || seq.unsigned_abs() > checkpoint.size {
        report.uncovered += 1;
        return;
    }
    // The proofs are in the rows' order: skip those of rows missing from the file.
    let mut proof = None;
    if let Some(proofs) = proofs {
        while pending.as_ref().is_none_or(|(at, _)| *at < seq) {
            match proofs.next_proof() {
                Ok(Some(next)) => *pending = Some(next),
                Ok(None) => break,
                Err(message) => {
                    report.problems.push(Problem::Unreadable { line: 0, message });
                    break;
                }
            }
        }
        if pending.as_ref().is_some_and(|(at, _)| *at == seq) {
            proof = pending.take().map(|(_, proof)| proof);
        }
    }
    let proven = proof.zip(decode(&event.hash)).is_some_and(|(proof, hash)| {
        let leaf = crate::trail::leaf_hash(&hash);
        verify_inclusion(&leaf, seq.unsigned_abs() - 1, checkpoint.size, &proof, &checkpoint.root)
    });
    if proven {
        report.proven += 1;
    } else {
        report.problems.push(Problem::NotProven { seq });
    }
}

struct HashingReader<R> {
    inner: R,
    hasher: Sha256,
}

impl<R: Read> Read for HashingReader<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.hasher.update(&buf[..n]);
        Ok(n)
    }
}
