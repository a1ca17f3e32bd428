//! The trail's activity over the last day, minute by minute, kept in memory: decisions by
//! outcome, denials by tool and by actor, violations and refusals. A task follows the trail
//! (a sidecar's own, or each node's in the fleet store) from a cursor per trail, counting each
//! event once with one aggregate read per step ([`crate::query::Tally`]), so that the console's
//! overview shows a day of a busy trail without reading the day again.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, PoisonError, RwLock};
use std::time::Duration;

use chrono::{DateTime, NaiveDateTime, SecondsFormat, Utc};
use tokio::sync::watch;

use super::Trails;
use super::trails::ReadResult;
use crate::backoff::Backoff;
use crate::query::{Tally, TrailHead};
use crate::tick::{Next, Periodic, Ticker};
use crate::trail::{Group, Kind, Outcome};

/// Minutes kept: a day, and the minute under way.
const KEPT_MINUTES: i64 = 24 * 60 + 1;
/// Distinct names counted per minute for each list; the rest are counted as [`OTHERS`].
const MAX_NAMES: usize = 256;
/// The name the names beyond [`MAX_NAMES`] are counted under.
pub const OTHERS: &str = "(others)";
/// The most events one read counts, so that a reader never holds a long transaction.
const STEP: i64 = 100_000;
/// The pause between steps once caught up.
const EVERY: Duration = Duration::from_secs(1);

/// How many outcomes there are: the width of a count by outcome.
pub const OUTCOMES: usize = Outcome::ALL.len();

/// The activity counted so far; cloning is shallow.
#[derive(Debug, Clone, Default)]
pub struct Activity(Arc<RwLock<Counted>>);

#[derive(Debug, Default)]
struct Counted {
    /// By minute since the epoch.
    minutes: BTreeMap<i64, Minute>,
    /// The last seq counted of each trail: `""` for a sidecar's own, else the node's id.
    cursors: BTreeMap<String, i64>,
    /// Whether every trail was counted up to its head once.
    caught_up: bool,
}

#[derive(Debug, Clone, Default)]
struct Minute {
    decisions: [u64; OUTCOMES],
    violations: u64,
    refusals: u64,
    denied_tools: HashMap<String, u64>,
    denied_actors: HashMap<String, u64>,
}

/// The activity of a window, for display.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Summary {
    /// Each bucket's first minute (since the epoch) and its decisions by outcome, in
    /// [`Outcome::ALL`] order; oldest first.
    pub buckets: Vec<(i64, [u64; OUTCOMES])>,
    /// The window's decisions by outcome.
    pub decisions: [u64; OUTCOMES],
    pub violations: u64,
    /// Requests refused as malformed (`invalid_request`) or for who made them
    /// (`access_denied`).
    pub refusals: u64,
    /// The most denied first.
    pub denied_tools: Vec<(String, u64)>,
    pub denied_actors: Vec<(String, u64)>,
    /// Whether the count has caught up with the trail since it started.
    pub caught_up: bool,
}

impl Minute {
    fn add(&mut self, tally: Tally) {
        let outcome = tally.outcome.as_deref().and_then(|o| o.parse::<Outcome>().ok());
        match (tally.kind.parse::<Kind>().map(Kind::group), outcome) {
            (Ok(Group::Decision), Some(outcome)) => {
                self.decisions[outcome as usize] += tally.count;
                if let Some(tool) = tally.tool {
                    count(&mut self.denied_tools, tool, tally.count);
                }
                if let Some(actor) = tally.actor_id {
                    count(&mut self.denied_actors, actor, tally.count);
                }
            }
            (Ok(Group::Violation), _) => self.violations += tally.count,
            (Ok(Group::Refusal), _) => self.refusals += tally.count,
            (Ok(Group::Decision), None) | (Err(()), _) => {}
            (Ok(Group::Execution | Group::Approval | Group::Keeping), _) => {}
        }
    }
}

/// Adds `n` to `name`'s count, or to [`OTHERS`]' once `MAX_NAMES` names are counted.
fn count(counts: &mut HashMap<String, u64>, name: String, n: u64) {
    let full = counts.len() >= MAX_NAMES && !counts.contains_key(&name);
    *counts.entry(if full { OTHERS.to_owned() } else { name }).or_default() += n;
}

/// The minute since the epoch of a tally's `YYYY-MM-DDTHH:MM`.
fn minute_of(text: &str) -> Option<i64> {
    let time = NaiveDateTime::parse_from_str(text, "%Y-%m-%dT%H:%M").ok()?;
    Some(time.and_utc().timestamp().div_euclid(60))
}

/// The minute since the epoch of `time`.
pub fn minute(time: DateTime<Utc>) -> i64 {
    time.timestamp().div_euclid(60)
}

/// The `top` largest counts, largest first (then by name).
fn largest(counts: HashMap<String, u64>, top: usize) -> Vec<(String, u64)> {
    let mut counts: Vec<_> = counts.into_iter().collect();
    counts.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    counts.truncate(top);
    counts
}

impl Activity {
    fn read(&self) -> std::sync::RwLockReadGuard<'_, Counted> {
        self.0.read().unwrap_or_else(PoisonError::into_inner)
    }

    fn write(&self) -> std::sync::RwLockWriteGuard<'_, Counted> {
        self.0.write().unwrap_or_else(PoisonError::into_inner)
    }

    /// The `minutes` up to and including `now` (a minute since the epoch), in buckets of
    /// `bucket` minutes, with the `top` most denied tools and actors.
    pub fn summary(&self, now: i64, minutes: i64, bucket: i64, top: usize) -> Summary {
        let bucket = bucket.max(1);
        let first = now - minutes + 1;
        let counted = self.read();
        let mut summary = Summary { caught_up: counted.caught_up, ..Summary::default() };
        summary.buckets = (0..(minutes + bucket - 1) / bucket)
            .map(|i| (first + i * bucket, [0; OUTCOMES]))
            .collect();
        let (mut tools, mut actors) = (HashMap::new(), HashMap::new());
        for (&at, minute) in counted.minutes.range(first..=now) {
            let (_, decisions) = &mut summary.buckets[((at - first) / bucket) as usize];
            for (i, n) in minute.decisions.iter().enumerate() {
                decisions[i] += n;
                summary.decisions[i] += n;
            }
            summary.violations += minute.violations;
            summary.refusals += minute.refusals;
            for (name, n) in &minute.denied_tools {
                *tools.entry(name.clone()).or_default() += n;
            }
            for (name, n) in &minute.denied_actors {
                *actors.entry(name.clone()).or_default() += n;
            }
        }
        summary.denied_tools = largest(tools, top);
        summary.denied_actors = largest(actors, top);
        summary
    }

    /// The last seq counted of `trail`.
    fn cursor(&self, trail: &str) -> Option<i64> {
        self.read().cursors.get(trail).copied()
    }

    /// Counts `tallies`, the events of `trail` up to `through`.
    fn add(&self, trail: &str, through: i64, tallies: Vec<Tally>) {
        let mut counted = self.write();
        for tally in tallies {
            let Some(at) = minute_of(&tally.minute) else { continue };
            counted.minutes.entry(at).or_default().add(tally);
        }
        counted.cursors.insert(trail.to_owned(), through);
    }

    /// Forgets the minutes before the day up to `now`.
    fn prune(&self, now: i64) {
        let mut counted = self.write();
        let kept = counted.minutes.split_off(&(now - KEPT_MINUTES + 1));
        counted.minutes = kept;
    }
}

/// Counts `trails` into `activity` until `stopping` turns true: a day back at first, then each
/// event as it lands.
pub async fn follow(activity: Activity, trails: Arc<dyn Trails>, stopping: watch::Receiver<bool>) {
    let counting = Counting { activity, trails, backoff: Backoff::new(EVERY) };
    Ticker::new(counting, Next::After(Duration::ZERO)).run(stopping).await;
}

/// The task's rounds: a step over every trail, a pause after it.
struct Counting {
    activity: Activity,
    trails: Arc<dyn Trails>,
    backoff: Backoff,
}

impl Periodic for Counting {
    async fn round(&mut self, _last: bool) -> Next {
        let pause = match step(&self.activity, &*self.trails).await {
            Ok(()) => {
                self.activity.write().caught_up = true;
                let (pause, recovered) = self.backoff.succeeded(false);
                if recovered {
                    tracing::info!("counting the trail's activity again");
                }
                pause
            }
            Err(error) => {
                let (pause, new) = self.backoff.failed(error.to_string());
                if new {
                    tracing::warn!(%error, "cannot count the trail's activity");
                }
                pause
            }
        };
        Next::After(pause)
    }
}

/// Counts every trail up to its head as it is now.
async fn step(activity: &Activity, trails: &dyn Trails) -> ReadResult<()> {
    let now = Utc::now();
    activity.prune(minute(now));
    let since = now - chrono::Duration::minutes(KEPT_MINUTES);
    let since = since.to_rfc3339_opts(SecondsFormat::Micros, true);
    for TrailHead { node, seq: head } in trails.heads().await? {
        let start = async {
            let first = trails.first_seq_since(&node, &since).await;
            Ok(first?.map_or(head, |seq| seq - 1))
        };
        catch_up(activity, &node, head, start, |after, through| {
            let (node, since) = (node.clone(), since.clone());
            async move { trails.tally(&node, after, through, &since).await }
        })
        .await?;
    }
    Ok(())
}

/// Counts `trail` from its cursor (or from `start`, the seq before the day, the first time) up
/// to `head`, a step at a time.
async fn catch_up<F, T>(
    activity: &Activity,
    trail: &str,
    head: i64,
    start: impl Future<Output = ReadResult<i64>>,
    tally: F,
) -> ReadResult<()>
where
    F: Fn(i64, i64) -> T,
    T: Future<Output = ReadResult<Vec<Tally>>>,
{
    let mut cursor = match activity.cursor(trail) {
        Some(cursor) => cursor,
        None => start.await?,
    };
    while cursor < head {
        let through = head.min(cursor + STEP);
        activity.add(trail, through, tally(cursor, through).await?);
        cursor = through;
    }
    if activity.cursor(trail).is_none() {
        activity.add(trail, cursor, Vec::new());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tally(minute: &str, kind: &str, outcome: Option<&str>, tool: Option<&str>) -> Tally {
        Tally {
            minute: minute.into(),
            kind: kind.into(),
            outcome: outcome.map(Into::into),
            tool: tool.map(Into::into),
            actor_id: tool.map(|_| "mallory".into()),
            count: 2,
        }
    }

    #[test]
    fn minutes_add_up_into_buckets_and_lists() {
        let activity = Activity::default();
        let now = minute_of("2026-12-02T10:59").unwrap();
        activity.add(
            "",
            9,
            vec![
                tally("2026-12-02T10:00", "decision", Some("allow"), None),
                tally("2026-12-02T10:59", "decision", Some("deny"), Some("rm")),
                tally("2026-12-02T10:30", "decision", Some("deny"), Some("curl")),
                tally("2026-12-02T10:30", "decision", Some("deny"), Some("rm")),
                tally("2026-12-02T10:31", "violation", None, None),
                tally("2026-12-02T10:31", "access_denied", None, None),
                // Before the window.
                tally("2026-12-02T09:59", "decision", Some("allow"), None),
            ],
        );
        let summary = activity.summary(now, 60, 15, 5);
        assert_eq!(summary.buckets.len(), 4);
        assert_eq!(summary.buckets[0].0, minute_of("2026-12-02T10:00").unwrap());
        assert_eq!(summary.buckets[0].1[Outcome::Allow as usize], 2);
        assert_eq!(summary.buckets[2].1[Outcome::Deny as usize], 4);
        assert_eq!(summary.buckets[3].1[Outcome::Deny as usize], 2);
        assert_eq!(summary.decisions[Outcome::Deny as usize], 6);
        assert_eq!(summary.decisions[Outcome::Allow as usize], 2);
        assert_eq!((summary.violations, summary.refusals), (2, 2));
        assert_eq!(summary.denied_tools, vec![("rm".to_owned(), 4), ("curl".to_owned(), 2)]);
        assert_eq!(summary.denied_actors, vec![("mallory".to_owned(), 6)]);
        assert_eq!(activity.cursor(""), Some(9));
    }

    #[test]
    fn names_beyond_the_cap_are_counted_as_others_and_old_minutes_go() {
        let activity = Activity::default();
        let tallies = (0..MAX_NAMES + 10)
            .map(|i| tally("2026-12-02T10:00", "decision", Some("deny"), Some(&format!("t{i}"))))
            .collect();
        activity.add("", 1, tallies);
        let now = minute_of("2026-12-02T10:00").unwrap();
        let summary = activity.summary(now, 60, 1, MAX_NAMES + 10);
        assert_eq!(summary.denied_tools.len(), MAX_NAMES + 1);
        assert_eq!(summary.denied_tools[0], (OTHERS.to_owned(), 20));
        activity.prune(now + KEPT_MINUTES);
        assert!(activity.summary(now, 60, 1, 5).denied_tools.is_empty());
    }
}
