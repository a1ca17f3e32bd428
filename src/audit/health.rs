//! The chain checked as the trail grows, for the console's "verified up to seq N at T": a task
//! that verifies a sidecar's trail whole at first, then from where the last check ended (the
//! link to the event before, the tree from the stored nodes, the checkpoints on the way) as
//! events land, and whole again every hour; on a fleet server, each node's trail whole, whenever
//! its head moved. A problem found stays on show until a whole verification finds none.

use std::collections::BTreeMap;
use std::sync::{Arc, PoisonError, RwLock};
use std::time::{Duration, Instant};

use chrono::{DateTime, Utc};
use tokio::sync::watch;

use super::{Anchors, Report, Trails, verify_fleet, verify_trail};
use crate::trust::note::NoteVerifier;

/// The pause between checks of what landed since the last.
const EVERY: Duration = Duration::from_secs(2);
/// How often a sidecar's trail is verified whole again.
const WHOLE_EVERY: Duration = Duration::from_secs(3600);
/// Problems kept per trail for display.
const MAX_PROBLEMS: usize = 20;

/// The last check of each trail; cloning is shallow.
#[derive(Debug, Clone, Default)]
pub struct ChainHealth(Arc<RwLock<BTreeMap<String, Check>>>);

/// What the checks of one trail found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Check {
    /// The last event verified: every event up to it was found intact (unless `problems`).
    pub through: i64,
    /// When the last check ended.
    pub at: DateTime<Utc>,
    /// Events the last check read.
    pub checked: u64,
    /// When the last whole verification ended.
    pub whole_at: DateTime<Utc>,
    /// The checkpoints on the trail whose roots were checked, and whether their signatures
    /// were (with the sidecar's own key).
    pub checkpoints: u64,
    pub signatures_checked: bool,
    /// What was found broken, as `seq N: …`, the first [`MAX_PROBLEMS`]; and how many in all.
    pub problems: Vec<String>,
    pub problem_count: usize,
}

impl Check {
    /// Whether nothing was found broken.
    pub fn intact(&self) -> bool {
        self.problem_count == 0
    }
}

impl ChainHealth {
    /// The last check of each trail (`""` for a sidecar's own, else by node id).
    pub fn checks(&self) -> BTreeMap<String, Check> {
        self.0.read().unwrap_or_else(PoisonError::into_inner).clone()
    }

    fn get(&self, trail: &str) -> Option<Check> {
        self.0.read().unwrap_or_else(PoisonError::into_inner).get(trail).cloned()
    }

    /// Records `report`, of the whole trail (`whole`) or of the events after the last check.
    fn record(&self, trail: &str, report: &Report, whole: bool) {
        let now = Utc::now();
        let mut checks = self.0.write().unwrap_or_else(PoisonError::into_inner);
        let before = checks.get(trail).filter(|_| !whole).cloned();
        let mut problems: Vec<String> = before.as_ref().map_or(Vec::new(), |c| c.problems.clone());
        problems.extend(report.problems.iter().map(ToString::to_string));
        problems.truncate(MAX_PROBLEMS);
        let through = report.last.as_ref().map(|(seq, _)| *seq);
        let check = Check {
            through: through.or(before.as_ref().map(|c| c.through)).unwrap_or(0),
            at: now,
            checked: report.checked,
            whole_at: before.as_ref().map_or(now, |c| c.whole_at),
            checkpoints: report.checkpoints + before.as_ref().map_or(0, |c| c.checkpoints),
            signatures_checked: report.signatures_checked,
            problem_count: before.as_ref().map_or(0, |c| c.problem_count) + report.problems.len(),
            problems,
        };
        checks.insert(trail.to_owned(), check);
    }
}

/// Checks `trails` into `health` until `stopping` turns true; a sidecar's checkpoints are
/// checked against `key` when it signs them.
pub async fn watch(
    health: ChainHealth,
    trails: Trails,
    key: Option<NoteVerifier>,
    mut stopping: watch::Receiver<bool>,
) {
    let anchors = Anchors { keys: key.into_iter().collect(), ..Anchors::default() };
    let mut whole_at: Option<Instant> = None;
    let mut heads: BTreeMap<String, i64> = BTreeMap::new();
    loop {
        let checked = match &trails {
            Trails::One(reader) => {
                let whole = whole_at.is_none_or(|at| at.elapsed() >= WHOLE_EVERY);
                let head = reader.head().await.map(|h| h.map_or(0, |h| h.seq));
                let last = health.get("").map_or(0, |c| c.through);
                match head {
                    Ok(head) if !whole && head <= last => Ok(()),
                    Ok(_) => {
                        let from = if whole { 1 } else { last + 1 };
                        let report = verify_trail(reader, from, None, &anchors, |_| {}).await;
                        report.map(|report| {
                            health.record("", &report, whole);
                            if whole {
                                whole_at = Some(Instant::now());
                            }
                        })
                    }
                    Err(e) => Err(e),
                }
                .map_err(|e| e.to_string())
            }
            Trails::Fleet(store) => check_fleet(&health, store, &mut heads).await,
        };
        if let Err(e) = checked {
            tracing::warn!(error = e, "cannot check the trail's chain");
        }
        tokio::select! {
            _ = tokio::time::sleep(EVERY) => {}
            _ = stopping.wait_for(|stop| *stop) => return,
        }
    }
}

/// Verifies, whole, each node whose head moved since its last check.
async fn check_fleet(
    health: &ChainHealth,
    store: &crate::fleet::store::FleetStore,
    heads: &mut BTreeMap<String, i64>,
) -> Result<(), String> {
    for (node, head) in store.heads().await.map_err(|e| e.to_string())? {
        if heads.get(&node) == Some(&head) {
            continue;
        }
        let reports = verify_fleet(store, Some(&node), &Default::default()).await;
        for (node, report) in reports.map_err(|e| e.to_string())? {
            health.record(&node, &report, true);
        }
        heads.insert(node, head);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trail::Problem;

    #[test]
    fn a_problem_stays_until_a_whole_verification_finds_none() {
        let health = ChainHealth::default();
        let broken = Report {
            checked: 10,
            problems: vec![Problem::HashMismatch { seq: 4 }],
            last: Some((10, "h".into())),
            ..Report::default()
        };
        health.record("", &broken, true);
        let later = Report { checked: 5, last: Some((15, "h".into())), ..Report::default() };
        health.record("", &later, false);
        let check = health.get("").unwrap();
        assert_eq!((check.through, check.problem_count), (15, 1));
        assert!(check.problems[0].contains("seq 4"), "{:?}", check.problems);
        health.record("", &later, true);
        assert!(health.get("").unwrap().intact());
    }
}
