//! The chain checked as the trail grows, for the console's "verified up to seq N at T": a task
//! that verifies a sidecar's trail whole at first, then from where the last check ended (the
//! link to the event before, the tree from the stored nodes, the checkpoints on the way) as
//! events land, and whole again every hour. Checkpoints' roots are checked against the tree,
//! not their signatures: the server knows only its key in force, and the checkpoints signed
//! before a rotation would read as forged. Before each step it checks that the last event it
//! verified is still there with the hash it had: a trail cut short or rewritten behind it is a
//! problem at once (and verified whole again), not an hour later. On a fleet server, each node's
//! trail whole, whenever its head moved, at most once a minute. A problem found stays on show
//! until a whole verification finds none.

use std::collections::BTreeMap;
use std::sync::{Arc, PoisonError, RwLock};
use std::time::{Duration, Instant};

use chrono::{DateTime, Utc};
use tokio::sync::watch;

use super::Trails;
use super::trails::ReadResult;

use crate::query::TrailHead;
use crate::tick::{Next, Periodic, Ticker};
use crate::trail::Report;

/// The pause between checks of what landed since the last.
const EVERY: Duration = Duration::from_secs(2);
/// How often a sidecar's trail is verified whole again.
const WHOLE_EVERY: Duration = Duration::from_secs(3600);
/// Problems kept per trail for display.
const MAX_PROBLEMS: usize = 20;
/// How often at most a fleet node's trail is verified whole again.
const NODE_EVERY: Duration = Duration::from_secs(60);

/// The last check of each trail; cloning is shallow.
#[derive(Debug, Clone, Default)]
pub struct ChainHealth(Arc<RwLock<BTreeMap<String, Check>>>);

/// What the checks of one trail found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Check {
    /// The last event verified: every event up to it was found intact (unless `problems`),
    /// and its hash then.
    pub through: i64,
    pub hash: String,
    /// When the last check ended.
    pub at: DateTime<Utc>,
    /// When the last whole verification ended.
    pub whole_at: DateTime<Utc>,
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
        let (through, hash) = match (&report.last, &before) {
            (Some((seq, hash)), _) => (*seq, hash.clone()),
            (None, Some(before)) => (before.through, before.hash.clone()),
            (None, None) => (0, String::new()),
        };
        let check = Check {
            through,
            hash,
            at: now,
            whole_at: before.as_ref().map_or(now, |c| c.whole_at),
            problem_count: before.as_ref().map_or(0, |c| c.problem_count) + report.problems.len(),
            problems,
        };
        checks.insert(trail.to_owned(), check);
    }

    /// Adds a problem found outside a verification to `trail`'s check.
    fn flag(&self, trail: &str, problem: String) {
        let mut checks = self.0.write().unwrap_or_else(PoisonError::into_inner);
        if let Some(check) = checks.get_mut(trail) {
            if check.problems.len() < MAX_PROBLEMS {
                check.problems.push(problem);
            }
            check.problem_count += 1;
        }
    }
}

/// Checks `trails` into `health` until `stopping` turns true.
pub async fn watch(health: ChainHealth, trails: Arc<dyn Trails>, stopping: watch::Receiver<bool>) {
    let (whole_at, heads) = (None, BTreeMap::new());
    let checking = Checking { health, trails, whole_at, heads };
    Ticker::new(checking, Next::After(Duration::ZERO)).run(stopping).await;
}

/// The task's rounds, and when it last checked what.
struct Checking {
    health: ChainHealth,
    trails: Arc<dyn Trails>,
    /// When a sidecar's trail was last verified whole.
    whole_at: Option<Instant>,
    /// Each fleet node's head when last checked, and when.
    heads: BTreeMap<String, (i64, Instant)>,
}

impl Periodic for Checking {
    async fn round(&mut self, _last: bool) -> Next {
        let checked = match self.trails.is_fleet() {
            false => check_trail(&self.health, &*self.trails, &mut self.whole_at).await,
            true => check_fleet(&self.health, &*self.trails, &mut self.heads).await,
        };
        if let Err(e) = checked {
            tracing::warn!(error = %e, "cannot check the trail's chain");
        }
        Next::After(EVERY)
    }
}

/// Verifies a sidecar's trail: whole when it is due (or when the last event verified is no
/// longer what it was), else the events that landed since the last check.
async fn check_trail(
    health: &ChainHealth,
    trail: &dyn Trails,
    whole_at: &mut Option<Instant>,
) -> ReadResult<()> {
    let mut whole = whole_at.is_none_or(|at| at.elapsed() >= WHOLE_EVERY);
    let head = trail.head("").await?.map_or(0, |h| h.seq);
    let last = health.get("").filter(|c| c.through > 0);
    let mut flagged = false;
    if let Some(last) = &last {
        let now = trail.event("", last.through).await?;
        let pruned = trail.pruned("").await?;
        let problem = match now {
            // Gone under the retention rules: its prune is on the chain, which is verified.
            None if last.through <= pruned => None,
            None => Some(format!(
                "seq {}: the trail ends before this event, verified at {}: it was cut short",
                last.through, last.at
            )),
            Some(event) if event.hash != last.hash => Some(format!(
                "seq {}: its hash is not the one it had when it was verified at {}: the trail \
                 was rewritten",
                last.through, last.at
            )),
            Some(_) => None,
        };
        if let Some(problem) = problem {
            health.flag("", problem);
            (flagged, whole) = (true, true);
        }
    }
    let through = last.as_ref().map_or(0, |c| c.through);
    if !whole && head <= through {
        return Ok(());
    }
    let from = if whole { 1 } else { through + 1 };
    let report = trail.verify("", from, None).await;
    let report = report?;
    // A whole verification after a rewrite found above adds to that finding: a history
    // rewritten with its hashes recomputed verifies, and the finding must stay.
    health.record("", &report, whole && !flagged);
    if whole {
        *whole_at = Some(Instant::now());
    }
    Ok(())
}

/// Verifies, whole, each node whose head moved since its last check (at most once a minute).
async fn check_fleet(
    health: &ChainHealth,
    store: &dyn Trails,
    heads: &mut BTreeMap<String, (i64, Instant)>,
) -> ReadResult<()> {
    for TrailHead { node, seq: head } in store.heads().await? {
        let due = match heads.get(&node) {
            Some((seen, at)) => *seen != head && at.elapsed() >= NODE_EVERY,
            None => true,
        };
        if !due {
            continue;
        }
        match store.verify(&node, 1, None).await {
            Ok(report) => health.record(&node, &report, true),
            // A node with events but not registered: nothing to check it against.
            Err(crate::error::Error::NotFound(_)) => {}
            Err(e) => return Err(e),
        }
        heads.insert(node, (head, Instant::now()));
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
