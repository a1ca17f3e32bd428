//! Retention: the task that lets old events leave the trail's file under `[retention]`'s rules,
//! and only what may go. Every `check_every_ms` it finishes any prune a stop cut short, then
//! asks the rules how far they want the file pruned (`rules.rs`: by age, by bytes, in whole
//! segments cut at signed checkpoints), bounds that by what is safe (the archive's signed
//! checkpoint, every destination that must take the events, every witness's cosignature),
//! checks the archive holds that range exactly as the file does (`archive::check::holds`),
//! records the prune as an event, and deletes the range a batch per commit. A legal hold stops
//! it all. It never delays a decision: each step is one short append, queued like any other.
//! The fleet store's retention, by partition, is `fleet.rs`.

pub mod carry;
pub mod fleet;
mod rules;

use std::time::Duration;

use prometheus_client::metrics::gauge::Gauge;
use tokio::sync::watch;

use crate::archive::Archive;
use crate::archive::check::{self, HoldsError};
use crate::config::RetentionConfig;
use crate::follow::Holder;
use crate::metrics::Metrics;
use crate::store::{Pruning, Reader, StoreError, Writer};
use crate::tick::{Next, Periodic, Ticker};
use crate::trail::note::NoteVerifier;
use crate::trail::{Event, Kind, Record};

pub use rules::{Segment, Want};

/// The fault suite's pause between two batches of deletions, so that a test can stop the
/// process in the middle of a prune. Only the tests set it.
const PAUSE_ENV: &str = "TOOLGATE_FAULT_PRUNE_PAUSE_MS";

/// Why a round of retention could not finish (it is tried again the next round).
#[derive(Debug, thiserror::Error)]
pub enum RetentionError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("cannot check the archive: {0}")]
    Holds(#[from] HoldsError),
}

/// The retention task's parts (no `Debug`: it holds the signing key).
pub struct Retention {
    pub config: RetentionConfig,
    pub archive: Archive,
    /// The log's verifier key: the archive's checkpoint must be signed with it.
    pub key: NoteVerifier,
    /// The log's signer: a checkpoint follows each prune at once, so that the prune event is
    /// covered by a signed checkpoint as soon as it is on the trail.
    pub signer: std::sync::Arc<crate::trail::note::NoteSigner>,
    pub reader: Reader,
    pub writer: Writer,
    /// Each destination that must take an event before it may leave the file.
    pub holders: Vec<Holder>,
    /// The verifier keys of the witnesses configured: each must have cosigned a checkpoint
    /// covering a range before it may leave the file.
    pub witnesses: Vec<String>,
}

/// What a round did.
#[derive(Debug, PartialEq, Eq)]
enum Round {
    /// Nothing to prune, or a hold.
    Kept,
    /// Events 1 through this left the file.
    Pruned(i64),
    /// The rules want more gone than is safe yet: what stands in the way.
    Waiting(String),
}

/// The task's rounds, and what it has said of a wait.
struct Retaining {
    retention: Retention,
    through: Gauge,
    waiting: Gauge,
    every: Duration,
    said: Said,
}

/// What the log has been told of the current wait.
#[derive(Default)]
struct Said {
    /// When the wait began.
    since: Option<tokio::time::Instant>,
    /// Whether the long wait's warning is out.
    warned: bool,
    /// What holds it, as last said.
    why: String,
}

impl Periodic for Retaining {
    async fn round(&mut self, _last: bool) -> Next {
        // A wait this long is no lag: the log says so at warning level.
        const LONG: Duration = Duration::from_secs(600);
        let said = &mut self.said;
        match self.retention.round().await {
            Ok(Round::Waiting(why)) => {
                let began = *said.since.get_or_insert_with(tokio::time::Instant::now);
                self.waiting.set(i64::try_from(began.elapsed().as_secs()).unwrap_or(i64::MAX));
                if why != said.why {
                    tracing::info!("retention waits: {why}");
                    said.why = why;
                }
                if began.elapsed() >= LONG && !said.warned {
                    tracing::warn!(
                        "retention has waited {} s and prunes nothing until it is resolved: {}",
                        began.elapsed().as_secs(),
                        said.why
                    );
                    said.warned = true;
                }
            }
            Ok(round) => {
                if let Round::Pruned(seq) = round {
                    tracing::info!(through = seq, "pruned the trail");
                }
                (said.since, said.warned) = (None, false);
                self.waiting.set(0);
            }
            Err(error) => tracing::warn!(%error, "retention round failed; trying again"),
        }
        if let Ok(Some(pruned)) = self.retention.reader.pruned().await {
            self.through.set(pruned.through);
        }
        Next::After(self.every)
    }
}

impl Retention {
    /// Applies the rules every `check_every_ms` until `stopping` turns true.
    pub async fn run(self, metrics: &Metrics, stopping: watch::Receiver<bool>) {
        let through = metrics.gauge(
            "retention_pruned_through_seq",
            "The last seq pruned from the trail's file (0: none)",
        );
        let hold = metrics.gauge("retention_legal_hold", "1 while a legal hold stops pruning");
        hold.set(i64::from(self.config.legal_hold));
        let waiting = metrics.gauge(
            "retention_waiting_seconds",
            "How long the rules have wanted more gone than is safe yet (an archive, a fleet \
             store or a witness behind: the log says which), 0 when they do not",
        );
        let every = Duration::from_millis(self.config.check_every_ms.max(100));
        tracing::info!(
            max_age_days = self.config.max_age_days,
            max_bytes = self.config.max_bytes,
            legal_hold = self.config.legal_hold,
            "retention on"
        );
        let said = Said::default();
        let retaining = Retaining { retention: self, through, waiting, every, said };
        Ticker::new(retaining, Next::After(Duration::ZERO)).run(stopping).await;
    }

    async fn round(&self) -> Result<Round, RetentionError> {
        // A hold stops every deletion, even of a prune recorded before it.
        if self.config.legal_hold {
            return Ok(Round::Kept);
        }
        // A prune a stop cut short is finished before anything else.
        self.delete().await?;
        let pruned = self.reader.pruned().await?.map_or(0, |p| p.through);
        let now = chrono::Utc::now();
        let all = self.segments(pruned).await?;
        let segments = rules::settled(all.clone(), self.config.min_age_minutes, now);
        let used = self.reader.bytes_in_use().await?;
        let head = self.reader.head().await?.map_or(0, |h| h.seq);
        let wanted = |segments: &[Segment]| {
            let want = rules::want(&self.config, segments, pruned, head, used, now);
            want.and_then(|want| Some((want.target(segments)?, want)))
        };
        let Some((_, want)) = wanted(&segments) else {
            return Ok(match wanted(&all) {
                Some((target, _)) => Round::Waiting(format!(
                    "events through seq {target} are younger than min_age_minutes ({})",
                    self.config.min_age_minutes
                )),
                None => Round::Kept,
            });
        };
        let (safe, why) = self.safe().await?;
        let Some(segment) = want.within(&segments, safe, pruned, self.config.segment_events) else {
            let held = want.target(&segments).is_some_and(|target| target > safe.max(pruned));
            return Ok(if held { Round::Waiting(why) } else { Round::Kept });
        };
        let problems =
            check::holds(&self.archive, &self.key, &self.reader, pruned + 1, segment.through)
                .await?;
        if !problems.is_empty() {
            return Ok(Round::Waiting(format!(
                "the archive does not hold events {}–{} as the trail does: {}",
                pruned + 1,
                segment.through,
                problems.join("; ")
            )));
        }
        // What the state rebuilt at start needs of the range: the cut may come down before a
        // pending approval's request (then to the last cut before it).
        let previous = match self.reader.pruned().await? {
            Some(last) => self.reader.event(last.seq).await?.as_ref().and_then(Pruning::of),
            None => None,
        };
        let previous = previous.unwrap_or_default();
        let carry = carry::carry(&self.reader, segment.through, previous.clone()).await?;
        let Some(segment) =
            segments.iter().rfind(|s| s.through <= carry.through && s.through > pruned)
        else {
            return Ok(Round::Waiting("events wait for an approval still pending".into()));
        };
        let carry = match carry.through == segment.through {
            true => carry,
            // Counted again from what the last prune carried, to the lower cut.
            false => carry::carry(&self.reader, segment.through, previous).await?,
        };
        if let Err(why) = self.record(pruned + 1, segment, &want, carry).await? {
            return Ok(Round::Waiting(why.into()));
        }
        crate::trust::publisher::append(&self.writer, &self.signer).await?;
        self.delete().await?;
        Ok(Round::Pruned(segment.through))
    }

    /// The places the file may be cut: each signed checkpoint after the last prune (the
    /// events before it are one or more segments).
    async fn segments(&self, pruned: i64) -> Result<Vec<Segment>, StoreError> {
        let checkpoints = self.reader.checkpoints().await?;
        Ok(checkpoints
            .iter()
            .filter(|c| c.seq - 1 > pruned && signs(c, &self.key) == Some(c.seq - 1))
            .map(|c| Segment { through: c.seq - 1, checkpoint: c.seq, ts: c.ts.clone() })
            .collect())
    }

    /// How far the file may be pruned now: the least of the archive's signed checkpoint, each
    /// destination's position, each witness's cosigned size; and what holds it there.
    async fn safe(&self) -> Result<(i64, String), RetentionError> {
        let archived = match self.archive.get("checkpoint").await.map_err(HoldsError::from)? {
            Some(note) => crate::trail::checkpoint::Checkpoint::open(
                &String::from_utf8_lossy(&note),
                &self.key,
            )
            .map_or(0, |c| c.size),
            None => 0,
        };
        let mut bound = (i64::try_from(archived).unwrap_or(i64::MAX), "the archive".to_owned());
        for holder in &self.holders {
            let taken = holder.taken();
            if taken < bound.0 {
                bound = (taken, format!("the {} destination", holder.name()));
            }
        }
        for witness in &self.witnesses {
            let size = self.reader.cosigned_size(witness).await?;
            let size = i64::try_from(size).unwrap_or(i64::MAX);
            if size < bound.0 {
                bound = (size, format!("witness {witness}'s cosignature"));
            }
        }
        let why = format!("events after seq {} wait for {}", bound.0, bound.1);
        Ok((bound.0, why))
    }

    /// Appends what `carry` carries and the `prune` event of events `first` through
    /// `segment.through`; why not, when the writer refused it.
    async fn record(
        &self,
        first: i64,
        segment: &Segment,
        want: &Want,
        carry: carry::Carry,
    ) -> Result<Result<(), &'static str>, StoreError> {
        let root = self.reader.root(segment.through.unsigned_abs()).await?;
        let (location, checkpoint, through) =
            (self.archive.location().to_owned(), segment.checkpoint, segment.through);
        let why = want.why();
        let carry::Carry { pins, sessions, reads, read_to, .. } = carry;
        let (pinned, carried) = (pins.len(), sessions.len());
        let event = self
            .writer
            .record_prune(through, read_to, pins, move |hash| Record {
                reason: Some(format!(
                    "events {first}–{through} left this file ({why}): they are archived at \
                     {location} and verified there, and the checkpoint at seq {checkpoint} \
                     signs the tree of them"
                )),
                request: Some(
                    Pruning {
                        first,
                        through,
                        hash: hash.to_owned(),
                        root: hex::encode(root),
                        checkpoint,
                        archive: location,
                        sessions,
                        reads,
                    }
                    .to_json(),
                ),
                ..Record::new(Kind::Prune)
            })
            .await?;
        let event = match event {
            Ok(event) => event,
            Err(why) => return Ok(Err(why)),
        };
        tracing::info!(seq = event.seq, first, through, pinned, carried, "prune recorded");
        Ok(Ok(()))
    }

    /// Deletes what the last prune lets go, a batch per commit.
    async fn delete(&self) -> Result<(), StoreError> {
        let pause = pause();
        while self.writer.delete_pruned().await?.any() {
            if !pause.is_zero() {
                tokio::time::sleep(pause).await;
            }
        }
        Ok(())
    }
}

/// The tree size a checkpoint event's note signs with the log's key, if it is signed.
fn signs(checkpoint: &Event, key: &NoteVerifier) -> Option<i64> {
    let note = checkpoint.record.note.as_deref().unwrap_or_default();
    let opened = crate::trail::checkpoint::Checkpoint::open(note, key).ok()?;
    i64::try_from(opened.size).ok()
}

/// [`PAUSE_ENV`], or none.
fn pause() -> Duration {
    let ms = std::env::var(PAUSE_ENV).ok().and_then(|v| v.parse().ok()).unwrap_or(0);
    Duration::from_millis(ms)
}
