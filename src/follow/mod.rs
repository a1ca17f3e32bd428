//! The followers: everything that follows the trail after the commit path has written it. One
//! loop ([`Follower`]) reads committed events from where a [`Sink`] stands and hands them to
//! it: it wakes on the writer's commit signal (not on a timer), owns the batch size (halved
//! when a sink finds a batch too large, grown back after), the pauses after trouble, the
//! once-per-trouble log, the lag and delivery metrics named by sink, and an orderly stop. It
//! reads through the read-only connections and never touches the writer, so a destination
//! that is down, refusing or slow delays no decision and loses no event: the trail is the
//! buffer.
//!
//! The sinks, one file each: [`index`] (the auditors' index beside the trail), [`otlp`] (log
//! records to an OpenTelemetry collector), [`fleet`] (batches through the fleet's ingest
//! service), [`subscribe`] (`Audit/Subscribe`'s live streams). A new sink implements [`Sink`]
//! and is registered in `server::lifecycle`.

pub mod archive;
pub mod fleet;
pub mod index;
pub mod otlp;
mod sink;
pub mod subscribe;

use std::time::Duration;

use tokio::sync::watch;

pub use sink::{Sink, Taken, Trouble};

use crate::backoff::Backoff;
use crate::metrics::{Delivered, FollowerMetrics, Metrics, SinkNames};
use crate::store::Reader;
use crate::trail::Filter;

/// How often a follower looks when no commit can wake it: once the writer has stopped.
const LOOK_AGAIN: Duration = Duration::from_secs(1);

/// The least time between two rounds of a sink that ships (fleet, OTLP), so that under load a
/// batch carries the commits of this long rather than one (each round costs the destination a
/// request, and the OTLP cursor a synced write), while a commit after a pause this long still
/// goes at once.
pub const COALESCE: Duration = Duration::from_millis(20);

/// What a follower reads: the trail, and the writer's signal of each commit (the last seq).
#[derive(Debug, Clone)]
pub struct Trail {
    pub reader: Reader,
    pub commits: watch::Receiver<i64>,
}

/// A sink with what its loop needs: which events, how many at a time, the pauses, the
/// metrics.
#[derive(Debug)]
pub struct Follower<S> {
    sink: S,
    filter: Filter,
    batch: u32,
    every: Duration,
    look: Option<Duration>,
    gap: Duration,
    metrics: Option<FollowerMetrics>,
    /// Told where the destination stands, as it moves, for a sink that holds retention
    /// ([`Sink::HOLDS`]): nothing leaves the file before each destination that must have it
    /// has it.
    stands: Option<watch::Sender<i64>>,
    /// At a stop, how long a round in flight may still take before it is cut (`None`: it
    /// finishes, however long).
    stop_within: Option<Duration>,
}

impl<S: Sink> Follower<S> {
    /// Follows every event into `sink`, `batch` at a time; after trouble it pauses `every`,
    /// doubled per failure up to 30 s.
    pub fn new(sink: S, batch: u32, every: Duration) -> Self {
        let batch = batch.max(1);
        let (filter, gap) = (Filter::default(), Duration::ZERO);
        let stands = S::HOLDS.map(|_| watch::Sender::new(0));
        let (metrics, stop_within) = (None, None);
        Self { sink, filter, batch, every, look: None, gap, metrics, stands, stop_within }
    }

    /// Only the events `filter` selects.
    pub fn filtered(self, filter: Filter) -> Self {
        Self { filter, ..self }
    }

    /// Also looks every `look` while no commit comes, for a sink whose [`Sink::caught_up`]
    /// work does not come with a commit (the witnesses' cosignatures).
    pub fn looking_every(self, look: Duration) -> Self {
        Self { look: Some(look), ..self }
    }

    /// Starts a round woken by a commit no sooner than `gap` after the last one began, so that
    /// under load one round takes the commits of `gap` together (a lone commit after a quiet
    /// spell is still taken at once).
    pub fn coalescing(self, gap: Duration) -> Self {
        Self { gap, ..self }
    }

    /// At a stop, cuts a round still in flight after `within`, for a sink whose destination
    /// keeps its own cursor and takes a batch whole or not at all (the fleet store): what it
    /// did not acknowledge stays on the trail and goes after the restart.
    pub fn stopping_within(self, within: Duration) -> Self {
        Self { stop_within: Some(within), ..self }
    }

    /// Counts its batches and lag in `metrics`, under the sink's name and `names`.
    pub fn measured(self, metrics: &Metrics, names: SinkNames) -> Self {
        Self { metrics: Some(metrics.follower(S::NAME, names)), ..self }
    }

    /// For a sink that holds retention ([`Sink::HOLDS`]), the holder retention asks: the last
    /// seq the destination took, each time it takes more (not where it says it stands when the
    /// follower resumes: only what it acknowledged taking).
    pub fn holder(&self) -> Option<Holder> {
        let name = S::HOLDS?;
        let stands = self.stands.as_ref()?.subscribe();
        Some(Holder { name, stands })
    }

    /// Follows until `stopping` turns true or the sink's receiver is gone. A round in flight
    /// finishes first, so that what the destination took is what the sink's cursor says.
    pub async fn run(mut self, trail: Trail, mut stopping: watch::Receiver<bool>) {
        let Trail { reader, mut commits } = trail;
        let mut cursor: Option<i64> = None;
        // Where the destination stood before trouble, for the log.
        let mut stood = 0;
        let mut batch = self.batch;
        let mut backoff = Backoff::new(self.every);
        // A pause after trouble, or none: then it waits for the next commit.
        let mut pause = Some(Duration::ZERO);
        let mut began = tokio::time::Instant::now();
        loop {
            let wake = async {
                match pause {
                    Some(pause) => tokio::time::sleep(pause).await,
                    None => {
                        committed(&mut commits, self.look).await;
                        tokio::time::sleep_until(began + self.gap).await;
                    }
                }
            };
            tokio::select! {
                biased;
                () = stopped(&mut stopping) => break,
                () = self.sink.gone() => break,
                () = wake => {}
            }
            // Every commit up to here is seen by the read below: a later one wakes the next wait.
            commits.borrow_and_update();
            began = tokio::time::Instant::now();
            let within = self.stop_within;
            let cut = async {
                match within {
                    Some(within) => {
                        stopped(&mut stopping).await;
                        tokio::time::sleep(within).await;
                    }
                    None => std::future::pending().await,
                }
            };
            let round = tokio::select! {
                round = self.round(&reader, &commits, &mut cursor, batch) => round,
                () = cut => {
                    tracing::warn!(
                        sink = S::NAME,
                        to = self.sink.destination(),
                        "stopped with a round unanswered: what it did not take goes after the restart"
                    );
                    break;
                }
            };
            match round {
                Ok(more) => {
                    batch = batch.saturating_mul(2).min(self.batch);
                    let recovered;
                    (_, recovered) = backoff.succeeded(more);
                    pause = more.then_some(Duration::ZERO);
                    if recovered {
                        tracing::info!(
                            sink = S::NAME,
                            to = self.sink.destination(),
                            "{}",
                            S::AGAIN
                        );
                    }
                }
                Err(Trouble::Gone) => break,
                Err(trouble) => {
                    // A batch found too large goes again in halves, down to one event;
                    // anything else goes again later, from where the destination stands.
                    if matches!(trouble, Trouble::TooLarge(_)) {
                        batch = (batch / 2).max(1);
                    }
                    stood = cursor.take().unwrap_or(stood);
                    // The lag counts from the first event the destination is not known to
                    // hold, reached or not: a node that never reached it alarms too.
                    self.lag(&reader, stood, &commits).await;
                    let message = trouble.to_string();
                    let (after, new) = backoff.failed(message.clone());
                    pause = Some(after);
                    if new {
                        self.tell(&trouble, &message, stood);
                    }
                }
            }
        }
        self.sink.close().await;
    }
}

impl<S: Sink> Follower<S> {
    /// Tells the log of new trouble (once per kind of trouble, not once per try): a refusal
    /// as an error, anything else as the sink being behind from `stood`.
    fn tell(&self, trouble: &Trouble, message: &str, stood: i64) {
        let (sink, to) = (S::NAME, self.sink.destination());
        match trouble {
            Trouble::Refused(_) => tracing::error!(sink, to, "{message}"),
            Trouble::TooLarge(_) | Trouble::Failed(_) | Trouble::Gone => {
                let doing = S::DOING;
                tracing::warn!(sink, to, seq = stood, "{doing} is behind: {message}")
            }
        }
    }

    /// Hands the sink one batch after `cursor` (asked of the sink when there is none);
    /// whether more are waiting.
    async fn round(
        &mut self,
        reader: &Reader,
        commits: &watch::Receiver<i64>,
        cursor: &mut Option<i64>,
        batch: u32,
    ) -> Result<bool, Trouble> {
        let from = match *cursor {
            Some(from) => from,
            None => {
                self.sink.resume(reader).await.inspect_err(|trouble| self.count(trouble.into()))?
            }
        };
        *cursor = Some(from);
        if self.sink.waits(reader, from).await.inspect_err(|t| self.count(t.into()))? {
            self.sink.caught_up(reader, from).await.inspect_err(|t| self.count(t.into()))?;
            return Ok(false);
        }
        let events = match reader.query(&self.filter, from, batch).await {
            Ok(events) => events,
            Err(error) => {
                let message = format!("cannot read the trail: {error}");
                return match self.sink.unreadable(error).await {
                    true => Err(Trouble::Failed(message)),
                    false => Err(Trouble::Gone),
                };
            }
        };
        let Some(last) = events.last().map(|e| e.seq) else {
            self.lag(reader, from, commits).await;
            self.sink.caught_up(reader, from).await.inspect_err(|t| self.count(t.into()))?;
            return Ok(false);
        };
        let full = events.len() == batch as usize;
        let taken = match self.sink.take(reader, events).await {
            Ok(taken) => taken,
            Err(trouble) => {
                self.count((&trouble).into());
                self.lag(reader, from, commits).await;
                return Err(trouble);
            }
        };
        self.count(Delivered::Taken(taken.counted));
        *cursor = Some(taken.through);
        self.stands(taken.through);
        self.lag(reader, taken.through, commits).await;
        let more = !taken.waits && (full || taken.through < last);
        if !more {
            self.sink
                .caught_up(reader, taken.through)
                .await
                .inspect_err(|t| self.count(t.into()))?;
        }
        Ok(more)
    }

    fn stands(&self, through: i64) {
        if let Some(stands) = &self.stands {
            stands.send_if_modified(|stood| std::mem::replace(stood, through) != through);
        }
    }

    fn count(&self, delivered: Delivered) {
        if let Some(metrics) = &self.metrics {
            metrics.batch(delivered);
        }
    }

    /// Sets the lag metrics: the events after `through` up to the last commit, and the first
    /// one's age.
    async fn lag(&self, reader: &Reader, through: i64, commits: &watch::Receiver<i64>) {
        let Some(metrics) = &self.metrics else { return };
        let head = *commits.borrow();
        let behind = (head - through).max(0).unsigned_abs();
        let age = match behind {
            0 => 0.0,
            _ => reader.event(through + 1).await.ok().flatten().map_or(0.0, |e| e.age_seconds()),
        };
        metrics.lag(through, behind, age);
    }
}

impl From<&Trouble> for Delivered {
    fn from(trouble: &Trouble) -> Self {
        match trouble {
            Trouble::Refused(_) => Delivered::Refused,
            Trouble::TooLarge(_) | Trouble::Failed(_) | Trouble::Gone => Delivered::Failed,
        }
    }
}

/// Resolves at the next commit after the last one seen; from the moment the writer stops,
/// every [`LOOK_AGAIN`]. With `look`, also after that long without one.
async fn committed(commits: &mut watch::Receiver<i64>, look: Option<Duration>) {
    let timer = async {
        match look {
            Some(look) => tokio::time::sleep(look).await,
            None => std::future::pending().await,
        }
    };
    tokio::select! {
        moved = commits.changed() => {
            if moved.is_err() {
                tokio::time::sleep(LOOK_AGAIN).await;
            }
        }
        () = timer => {}
    }
}

/// Resolves once `stopping` turns true, or no one is left to turn it.
async fn stopped(stopping: &mut watch::Receiver<bool>) {
    let _ = stopping.wait_for(|stop| *stop).await;
}

/// A destination that must take every event before it may leave the file under retention,
/// as retention asks it (registered by its follower: [`Follower::holder`]).
#[derive(Debug, Clone)]
pub struct Holder {
    name: &'static str,
    stands: watch::Receiver<i64>,
}

impl Holder {
    /// Its name in what retention says it waits for.
    pub fn name(&self) -> &'static str {
        self.name
    }

    /// The last seq it has taken (0 before it has taken anything).
    pub fn taken(&self) -> i64 {
        *self.stands.borrow()
    }
}

#[cfg(test)]
mod tests {
    use std::sync::{Arc, Mutex};

    use super::*;
    use crate::config::{Durability, WriterConfig};
    use crate::store::Store;
    use crate::trail::{Event, Kind, Record};

    /// A destination that refuses batches over `most` as too large and keeps what it took.
    #[derive(Debug, Clone)]
    struct Kept {
        most: usize,
        took: Arc<Mutex<Vec<(usize, i64)>>>,
        moved: Arc<tokio::sync::Notify>,
    }

    impl Sink for Kept {
        const NAME: &'static str = "kept";
        const DOING: &'static str = "keeping";
        const AGAIN: &'static str = "keeping again";

        async fn resume(&mut self, _reader: &Reader) -> Result<i64, Trouble> {
            Ok(self.took.lock().unwrap().last().map_or(0, |(_, seq)| *seq))
        }

        async fn take(&mut self, _reader: &Reader, events: Vec<Event>) -> Result<Taken, Trouble> {
            if events.len() > self.most {
                return Err(Trouble::TooLarge(format!("{} events", events.len())));
            }
            let mut took = self.took.lock().unwrap();
            took.extend(events.iter().map(|e| (events.len(), e.seq)));
            self.moved.notify_one();
            Ok(Taken {
                through: events[events.len() - 1].seq,
                counted: events.len() as u64,
                waits: false,
            })
        }
    }

    #[tokio::test]
    async fn every_event_reaches_the_sink_once_in_order_batches_halved_and_woken_by_commits() {
        let dir = tempfile::tempdir().unwrap();
        let metrics = Arc::new(Metrics::default());
        let config = WriterConfig::default();
        let path = dir.path().join("trail.db");
        let (store, thread) =
            Store::open(&path, Durability::Normal, &config, metrics.clone(), None).await.unwrap();
        let records = (0..20).map(|_| Record::new(Kind::PolicyLoaded)).collect();
        store.writer.append(records).await.unwrap();

        let kept = Kept { most: 5, took: Arc::default(), moved: Arc::default() };
        let trail = Trail { reader: store.reader.clone(), commits: store.writer.committed() };
        let (stop, stopping) = watch::channel(false);
        let names = crate::metrics::SinkNames {
            delivered: "kept_events",
            delivered_help: "kept",
            taken: "kept",
            destination: "the test",
            position: "kept_seq",
        };
        let follower =
            Follower::new(kept.clone(), 16, Duration::from_millis(1)).measured(&metrics, names);
        let following = tokio::spawn(follower.run(trail, stopping));
        let seen = |n: usize| {
            let kept = kept.clone();
            async move {
                while kept.took.lock().unwrap().len() < n {
                    let moved = kept.moved.notified();
                    if kept.took.lock().unwrap().len() >= n {
                        break;
                    }
                    tokio::time::timeout(Duration::from_secs(10), moved).await.unwrap();
                }
            }
        };
        seen(20).await;
        // No timer runs once caught up: the next event comes with its commit.
        store.writer.append(vec![Record::new(Kind::PolicyLoaded)]).await.unwrap();
        seen(21).await;
        let _ = stop.send(true);
        following.await.unwrap();

        let took = kept.took.lock().unwrap().clone();
        let seqs: Vec<i64> = took.iter().map(|(_, seq)| *seq).collect();
        assert_eq!(seqs, (1..=21).collect::<Vec<_>>(), "each event once, in order");
        assert!(took.iter().all(|(batch, _)| *batch <= 5), "16 halved to 8, then 4: {took:?}");
        let text = metrics.encode();
        assert!(text.contains("toolgate_kept_batches_total{result=\"failed\"}"), "{text}");
        assert!(text.contains("toolgate_kept_kept_events_total 21"), "{text}");
        assert!(text.contains("toolgate_kept_lag_events 0"), "{text}");
        store.reader.close().await;
        drop(store);
        thread.join().await;
    }
}
