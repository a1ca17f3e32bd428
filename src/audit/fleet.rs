//! Verification of the fleet store, node by node: each node's chain (every event's hash
//! recomputed from its content, every link), its Merkle tree recomputed from the events, and
//! each of its checkpoints against that tree, their signatures checked with the verifier key
//! the node was registered with, and (when witnesses are given) the last checkpoint's
//! cosignatures by them.

use crate::fleet::store::{FleetError, FleetStore};
use crate::fleet::tree_of;
use crate::trail::cosignature::Witnesses;
use crate::trail::note::NoteVerifier;
use crate::trail::{Frontier, Kind, Link, Prefix, Problem, Verifier, decode};

use super::verify::read_checkpoint;
use crate::trail::Report;

/// Events read per page.
const PAGE: u32 = 1000;

/// Verifies `node` (every node when `None`): one report per node, in node order.
pub async fn verify_fleet(
    store: &FleetStore,
    node: Option<&str>,
    witnesses: &Witnesses,
) -> Result<Vec<(String, Report)>, FleetError> {
    let mut reports = Vec::new();
    for status in store.nodes().await? {
        if node.is_some_and(|n| n != status.node_id) {
            continue;
        }
        let key = status.verifier_key.as_deref().map(NoteVerifier::parse).transpose();
        let keys: Vec<NoteVerifier> = key.clone().ok().flatten().into_iter().collect();
        let (mut report, last) = verify_node(store, &status.node_id, &keys).await?;
        if witnesses.required > 0 {
            let valid = match last {
                Some((seq, note)) => {
                    let lines = store.cosignature_lines(&status.node_id, seq).await?;
                    witnesses.count(&note, &lines)
                }
                None => 0,
            };
            if valid < witnesses.required {
                let required = witnesses.required;
                report.problems.push(Problem::TooFewCosignatures { required, valid });
            }
        }
        if let Err(e) = key {
            // A registered key that does not read is a finding, not a reason to check less.
            let why = format!("the node's registered verifier key does not read: {e}");
            report.problems.push(Problem::CheckpointUnsigned { seq: 0, why });
        }
        reports.push((status.node_id, report));
    }
    Ok(reports)
}

/// The node's report, and its last checkpoint that verified (seq and note).
async fn verify_node(
    store: &FleetStore,
    node: &str,
    keys: &[NoteVerifier],
) -> Result<(Report, Option<(i64, String)>), FleetError> {
    let mut report = Report { signatures_checked: !keys.is_empty(), ..Report::default() };
    let (mut verifier, mut tree, mut after) = (Verifier::default(), Frontier::default(), 0);
    // Retention dropped the node's first events: its chain and tree go on from the cut, each
    // cut starting where the one before ended, and nothing stored at or below it.
    let cuts = store.cuts(node).await?;
    for (before, cut) in std::iter::once(0).chain(cuts.iter().map(|c| c.through)).zip(&cuts) {
        if cut.first != before + 1 {
            report.problems.push(Problem::PruneUnrecorded { seq: cut.through });
        }
    }
    if let Some(cut) = cuts.last() {
        let below = store.held_through(node, cut.through).await?;
        if below > 0 {
            report.problems.push(Problem::BelowCut { seq: cut.through, count: below });
        }
    }
    if let Some(cut) = cuts.into_iter().next_back() {
        let start = decode(&cut.hash).zip(tree_of(cut.through, &cut.edge));
        let Some((hash, cut_tree)) = start else {
            let why = "the record of retention's last cut of the node does not read".into();
            report.problems.push(Problem::CheckpointUnsigned { seq: cut.through, why });
            return Ok((report, None));
        };
        report.pruned = Some(Prefix {
            through: cut.through,
            seq: cut.checkpoint,
            hash,
            root: cut_tree.root(),
            archive: cut.archive,
        });
        (verifier, tree, after) =
            (Verifier::starting_at(cut.through + 1, hash), cut_tree, cut.through);
    }
    let mut covered = after;
    let mut last = None;
    loop {
        let events = store.events(node, after, PAGE).await?;
        for event in &events {
            if event.record.kind == Kind::Checkpoint {
                let note = event.record.note.as_deref().unwrap_or_default();
                let read = read_checkpoint(note, keys, "not signed by the node's key");
                match read {
                    Ok(cp) if cp.size != tree.size() => report
                        .problems
                        .push(Problem::CheckpointMisplaced { seq: event.seq, size: cp.size }),
                    Ok(cp) if cp.root != tree.root() => report
                        .problems
                        .push(Problem::CheckpointRoot { size: cp.size, seq: event.seq }),
                    Ok(_) => {
                        report.checkpoints += 1;
                        covered = event.seq;
                        last = Some((event.seq, note.to_owned()));
                    }
                    Err(why) => {
                        report.problems.push(Problem::CheckpointUnsigned { seq: event.seq, why })
                    }
                }
            }
            report.problems.extend(verifier.check_link(&Link::of(event)));
            tree.push(&decode(&event.hash).unwrap_or_default());
            report.checked += 1;
            report.last = Some((event.seq, event.hash.clone()));
        }
        match events.last() {
            Some(last) if events.len() == PAGE as usize => after = last.seq,
            _ => break,
        }
    }
    report.uncovered = report.last.as_ref().map_or(0, |(seq, _)| (seq - covered).unsigned_abs());
    Ok((report, last))
}
