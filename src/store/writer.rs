//! The single writer of the trail. Callers hand it records through a bounded queue; a dedicated
//! thread drains whatever is waiting into one `BEGIN IMMEDIATE` transaction (group commit),
//! assigns each event its `seq`, time and hashes, commits, and only then answers every caller of
//! the group. A failed commit answers them all with an error and leaves the chain's head where it
//! was. A dedicated thread with rusqlite costs a few microseconds per event, where an async
//! driver would pay a thread hop per statement.

use std::path::Path;
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use chrono::{SecondsFormat, Utc};
use rusqlite::{Connection, OptionalExtension, TransactionBehavior, params_from_iter};
use tokio::sync::{mpsc, oneshot, watch};

use super::StoreError;
use super::lookup::{Lookup, Lookups};
use super::recent::Recent;
use super::row::{self, INSERT};
use crate::config::{Durability, WriterConfig};
use crate::metrics::Metrics;
use crate::trail::checkpoint::Checkpoint;
use crate::trail::note::NoteSigner;
use crate::trail::{Chain, Event, Frontier, Hash, Kind, Record, decode};

/// Builds a job's records inside the writer's transaction, reading what it needs through a
/// [`Lookup`] that sees every event before it, committed or in the same group.
type Build = Box<dyn FnOnce(&Lookup<'_>) -> Result<Vec<Record>, StoreError> + Send>;

struct Job {
    build: Build,
    reply: oneshot::Sender<Result<Vec<Event>, StoreError>>,
}

/// How often the writer itself signs a checkpoint: once `every_events` events wait uncovered,
/// right behind the call whose events made it due, inside the same transaction, so that no
/// burst (one group may hold hundreds of events) stretches the gap between two checkpoints.
/// One call's events are never split (a call appends one to three; a prune carries more). The
/// checkpoints that time and shutdown make due are the publisher's (`trust::publisher`).
#[derive(Clone)]
pub struct Cadence {
    pub signer: Arc<NoteSigner>,
    pub every_events: u64,
}

/// A cheaply cloneable handle that appends to the trail.
#[derive(Debug, Clone)]
pub struct Writer {
    queue: mpsc::Sender<Job>,
    timeout: Duration,
    /// The seq of the last committed event (0 for an empty trail), as each commit moves it.
    committed: watch::Receiver<i64>,
}

/// The writer's thread (and its checkpointer); joining it waits until the queue is drained
/// and the connections closed.
#[derive(Debug)]
pub struct WriterThread {
    writer: JoinHandle<()>,
    checkpointer: JoinHandle<()>,
}

impl WriterThread {
    /// Waits for the writer to commit what it holds and stop. It stops once every [`Writer`]
    /// handle is dropped.
    pub async fn join(self) {
        let Self { writer, checkpointer } = self;
        // A panicking thread already logged its panic; there is nothing more to do with it.
        let _ = tokio::task::spawn_blocking(move || {
            let _ = writer.join();
            let _ = checkpointer.join();
        })
        .await;
    }
}

impl Writer {
    /// Opens the write connection and starts the writer thread, which holds `lock` until it
    /// has committed what it holds and stopped.
    pub(super) fn start(
        path: &Path,
        durability: Durability,
        config: &WriterConfig,
        metrics: Arc<Metrics>,
        lock: super::lock::TrailLock,
        cadence: Option<Cadence>,
    ) -> Result<(Self, WriterThread), StoreError> {
        let mut conn = Connection::open(path)?;
        conn.pragma_update(None, "journal_mode", "WAL")?;
        let synchronous = match durability {
            Durability::Full => "FULL",
            Durability::Normal => "NORMAL",
        };
        conn.pragma_update(None, "synchronous", synchronous)?;
        // Checkpoints happen on their own thread (see `checkpoint`), not inside commits.
        conn.pragma_update(None, "wal_autocheckpoint", 0)?;
        // A commit appends: it touches the right edge of `events` and of `tree_nodes`, and the
        // lookups that miss the writer's memory read a few pages more. 4 MiB holds those; the
        // 32 MiB this was while the auditors' indexes were written here only held memory.
        conn.pragma_update(None, "cache_size", -4 * 1024)?;
        conn.busy_timeout(super::BUSY_TIMEOUT)?;
        let chain = head(&conn)?;
        let tree = super::tree::catch_up(&mut conn, chain.seq)?;
        let covered = last_checkpoint(&conn)?;
        let head = Tip { chain, tree, covered };
        metrics.trail_length(head.chain.seq);
        let (stop_checkpoints, checkpoints) = std::sync::mpsc::channel();
        let (checkpointer, emptier) = super::wal::start(path, checkpoints)?;
        let (queue, jobs) = mpsc::channel(config.queue_capacity.max(1));
        let max_batch = config.max_batch.max(1);
        let delay = commit_delay();
        let (moved, committed) = watch::channel(head.chain.seq);
        let batching = Batching { max_batch, delay, emptier, moved, cadence };
        let recent = Recent::new(head.chain.seq, super::recent::BOUND);
        let lookups = Lookups { recent, index: super::index::reading(path) };
        let writer = std::thread::Builder::new()
            .name("trail-writer".into())
            .spawn(move || {
                run(conn, jobs, head, batching, lookups, &metrics);
                drop(stop_checkpoints);
                drop(lock);
            })
            .map_err(|e| StoreError::Thread(e.to_string()))?;
        let thread = WriterThread { writer, checkpointer };
        Ok((Self { queue, timeout: config.commit_timeout(), committed }, thread))
    }

    /// The same writer with another commit deadline: for appends no caller waits on, such as
    /// the `policy_loaded` event at start, which a slow disk should delay rather than fail.
    pub fn with_timeout(&self, timeout: Duration) -> Self {
        Self { timeout, ..self.clone() }
    }

    /// The seq of the last committed event, changed after each commit: for the readers that
    /// follow the trail as it grows (the live stream, the exporters).
    pub fn committed(&self) -> watch::Receiver<i64> {
        self.committed.clone()
    }

    /// Appends records and waits until they are committed; returns the events as stored.
    pub async fn append(&self, records: Vec<Record>) -> Result<Vec<Event>, StoreError> {
        self.append_with(move |_| Ok(records)).await
    }

    /// Appends the records that `build` makes from the trail as it stands at that point of the
    /// writer's transaction, and waits until they are committed. `build` runs on the writer
    /// thread, so everything it decides is serialized with every other append.
    pub async fn append_with<F>(&self, build: F) -> Result<Vec<Event>, StoreError>
    where
        F: FnOnce(&Lookup<'_>) -> Result<Vec<Record>, StoreError> + Send + 'static,
    {
        let (reply, answer) = oneshot::channel();
        let job = Job { build: Box::new(build), reply };
        // A full queue means the writer is far behind: refuse at once rather than pile up
        // callers (and memory) behind it.
        self.queue.try_send(job).map_err(|e| match e {
            mpsc::error::TrySendError::Full(_) => StoreError::Overloaded,
            mpsc::error::TrySendError::Closed(_) => StoreError::Closed,
        })?;
        let committed = async { answer.await.map_err(|_| StoreError::Closed)? };
        tokio::time::timeout(self.timeout, committed).await.map_err(|_| StoreError::Timeout)?
    }
}

/// Where the trail ends: the chain's head and the tree's frontier, which move together, and
/// the seq of the last checkpoint, which covers every event before it.
#[derive(Debug, Clone)]
struct Tip {
    chain: Chain,
    tree: Frontier,
    covered: i64,
}

/// The head of the chain as the file holds it.
fn head(conn: &Connection) -> Result<Chain, StoreError> {
    let last: Option<(i64, String)> = conn
        .query_row("SELECT seq, hash FROM events ORDER BY seq DESC LIMIT 1", [], |row| {
            Ok((row.get("seq")?, row.get("hash")?))
        })
        .optional()?;
    let Some((seq, hash)) = last else {
        return Ok(Chain::default());
    };
    let hash = decode(&hash).ok_or(StoreError::Corrupt { seq, what: "hash" })?;
    Ok(Chain { seq, hash })
}

/// The seq of the last checkpoint on the trail (0 for none), through the checkpoints' index.
fn last_checkpoint(conn: &Connection) -> Result<i64, StoreError> {
    let sql = "SELECT seq FROM events WHERE kind = 'checkpoint' ORDER BY seq DESC LIMIT 1";
    Ok(conn.query_row(sql, [], |row| row.get(0)).optional()?.unwrap_or(0))
}

/// The fault suite's stand-in for a slow disk: a delay before every commit, from the
/// environment variable [`COMMIT_DELAY_ENV`], which only the tests set. It is deliberately not
/// a configuration key: nobody configures a slow disk.
fn commit_delay() -> Duration {
    let ms = std::env::var(COMMIT_DELAY_ENV).ok().and_then(|v| v.parse().ok()).unwrap_or(0);
    if ms > 0 {
        tracing::warn!(ms, "{COMMIT_DELAY_ENV} is set: every commit is delayed (a fault test)");
    }
    Duration::from_millis(ms)
}

/// The environment variable of [`commit_delay`].
pub const COMMIT_DELAY_ENV: &str = "TOOLGATE_FAULT_COMMIT_DELAY_MS";

/// How the writer forms its groups, and what it does between them.
struct Batching {
    max_batch: usize,
    /// The fault tests' stand-in for a slow disk ([`commit_delay`]); zero otherwise.
    delay: Duration,
    emptier: super::wal::Emptier,
    /// Told the head's seq after each commit.
    moved: watch::Sender<i64>,
    cadence: Option<Cadence>,
}

fn run(
    mut conn: Connection,
    mut jobs: mpsc::Receiver<Job>,
    mut head: Tip,
    Batching { max_batch, delay, mut emptier, moved, cadence }: Batching,
    mut lookups: Lookups,
    metrics: &Metrics,
) {
    let mut batch = Vec::with_capacity(max_batch);
    // `undelivered` records still to commit: with the next group, or at once when none waits.
    let mut unanswered = Vec::new();
    while let Some(job) = jobs.blocking_recv() {
        if !delay.is_zero() {
            std::thread::sleep(delay);
        }
        batch.push(job);
        while batch.len() < max_batch {
            match jobs.try_recv() {
                Ok(job) => batch.push(job),
                Err(_) => break,
            }
        }
        metrics.queue_depth(jobs.len());
        commit(&mut conn, &mut head, &mut lookups, &mut batch, &mut unanswered, &cadence, metrics);
        if !unanswered.is_empty() && jobs.is_empty() {
            commit(
                &mut conn,
                &mut head,
                &mut lookups,
                &mut batch,
                &mut unanswered,
                &cadence,
                metrics,
            );
        }
        moved.send_if_modified(|seq| std::mem::replace(seq, head.chain.seq) != head.chain.seq);
        emptier.empty_if_full(&conn);
    }
    if !unanswered.is_empty() {
        commit(&mut conn, &mut head, &mut lookups, &mut batch, &mut unanswered, &cadence, metrics);
        moved.send_replace(head.chain.seq);
    }
    // The last word is a checkpoint: whatever committed after the publisher's last one (a
    // late call's events, an `undelivered` record) is covered before the trail closes.
    if let Some(cadence) = cadence.filter(|_| head.chain.seq > head.covered) {
        let last: Build = Box::new(move |lookup| {
            let (size, root) = lookup.tree_head();
            Ok(vec![checkpoint_record(&cadence.signer, size, root)?])
        });
        match write_group(&mut conn, &mut head, &mut lookups, vec![last], None) {
            Ok(_) => {
                moved.send_replace(head.chain.seq);
            }
            Err(error) => tracing::error!(%error, "the trail's last checkpoint was not committed"),
        }
    }
    tracing::debug!(seq = head.chain.seq, "trail writer stopped");
}

/// The `undelivered` record of a caller's events that were committed after it stopped waiting.
fn undelivered(events: &[Event]) -> Option<Record> {
    let (first, last) = (events.first()?, events.last()?);
    let subject = events.iter().find(|e| e.record.decision_id.is_some()).unwrap_or(first);
    let r = &subject.record;
    let seqs = match first.seq == last.seq {
        true => format!("seq {}", first.seq),
        false => format!("seqs {}–{}", first.seq, last.seq),
    };
    Some(Record {
        decision_id: r.decision_id.clone(),
        session_id: r.session_id.clone(),
        task_type: r.task_type.clone(),
        actor_id: r.actor_id.clone(),
        actor_kind: r.actor_kind.clone(),
        tool: r.tool.clone(),
        action: r.action.clone(),
        reason: Some(format!(
            "{seqs} ({}) committed after the caller had stopped waiting (the commit outlived \
             commit_timeout_ms, or the call was cancelled): the caller was never given this answer",
            r.kind
        )),
        ..Record::new(Kind::Undelivered)
    })
}

/// Commits one group, with the `unanswered` records waiting, and answers its callers. A caller
/// that no longer listens leaves its `undelivered` record in `unanswered`.
fn commit(
    conn: &mut Connection,
    head: &mut Tip,
    lookups: &mut Lookups,
    batch: &mut Vec<Job>,
    unanswered: &mut Vec<Record>,
    cadence: &Option<Cadence>,
    metrics: &Metrics,
) {
    let before = head.clone();
    let mut replies = Vec::with_capacity(batch.len());
    let mut builds = Vec::with_capacity(batch.len() + 1);
    for job in batch.drain(..) {
        replies.push(job.reply);
        builds.push(job.build);
    }
    let jobs = builds.len();
    if !unanswered.is_empty() {
        let records = unanswered.clone();
        builds.push(Box::new(move |_| Ok(records)));
    }
    let started = std::time::Instant::now();
    match write_group(conn, head, lookups, builds, cadence.as_ref()) {
        Ok(groups) => {
            unanswered.clear();
            metrics.committed(groups.iter().flatten(), started.elapsed());
            // The trail's length counts the writer's own checkpoints too, not only the callers'.
            metrics.trail_length(head.chain.seq);
            tracing::debug!(
                jobs,
                seq = head.chain.seq,
                elapsed_us = started.elapsed().as_micros() as u64,
                "committed"
            );
            for (reply, events) in replies.into_iter().zip(groups) {
                // A caller that gave up (timed out, or its call was cancelled) no longer
                // listens: its events stand, and the trail says that it never heard of them.
                if let Err(Ok(events)) = reply.send(Ok(events)) {
                    unanswered.extend(undelivered(&events));
                }
            }
        }
        Err(error) => {
            lookups.recent.forget_after(before.chain.seq);
            *head = before;
            metrics.commit_failed();
            tracing::error!(%error, "trail commit failed; answering the group with an error");
            for reply in replies {
                let _ = reply.send(Err(StoreError::CommitFailed));
            }
        }
    }
}

fn write_group(
    conn: &mut Connection,
    head: &mut Tip,
    lookups: &mut Lookups,
    builds: Vec<Build>,
    cadence: Option<&Cadence>,
) -> Result<Vec<Vec<Event>>, StoreError> {
    let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
    let mut groups = Vec::with_capacity(builds.len());
    for build in builds {
        let lookup = Lookup {
            tx: &tx,
            tree: &head.tree,
            covered: head.covered,
            recent: &lookups.recent,
            index: lookups.index.as_ref(),
        };
        let records = build(&lookup)?;
        let mut events = Vec::with_capacity(records.len());
        for record in records {
            events.push(put(&tx, head, lookups, record)?);
        }
        // The checkpoint the job's events make due goes in right behind them: never among one
        // job's events (a prune predicts its own seq), and the trail's, not the caller's.
        if let Some(cadence) = cadence
            && head.chain.seq - head.covered
                >= i64::try_from(cadence.every_events).unwrap_or(i64::MAX)
        {
            match checkpoint_record(&cadence.signer, head.tree.size(), head.tree.root()) {
                Ok(record) => {
                    put(&tx, head, lookups, record)?;
                }
                // A checkpoint is an attestation the publisher can make later; it never fails
                // the callers' events. (Signing cannot fail for a key that parsed.)
                Err(error) => {
                    tracing::error!(%error, "the writer's checkpoint did not sign");
                    head.covered = head.chain.seq;
                }
            }
        }
        groups.push(events);
    }
    tx.commit()?;
    Ok(groups)
}

/// The `checkpoint` record of the tree of `size` events with `root`, signed.
pub fn checkpoint_record(signer: &NoteSigner, size: u64, root: Hash) -> Result<Record, StoreError> {
    let checkpoint = Checkpoint { origin: signer.key().name.clone(), size, root };
    let note = checkpoint
        .sign(signer)
        .map_err(|_| StoreError::Tree("a checkpoint's text did not sign"))?;
    Ok(Record { note: Some(note), ..Record::new(Kind::Checkpoint) })
}

/// Appends one record at the head: the event and the tree nodes its leaf completes.
fn put(
    tx: &rusqlite::Transaction<'_>,
    head: &mut Tip,
    lookups: &mut Lookups,
    record: Record,
) -> Result<Event, StoreError> {
    // INVARIANT: the head only moves forward inside a transaction; `commit` puts it back when
    // the transaction fails. The event and the tree nodes its leaf completes are committed
    // together.
    let ts = Utc::now().to_rfc3339_opts(SecondsFormat::Micros, true);
    let (event, next) = head.chain.link(record, uuid::Uuid::now_v7().to_string(), ts);
    tx.prepare_cached(&INSERT)?.execute(params_from_iter(row::params(&event)))?;
    super::tree::insert(tx, &head.tree.push(&next.hash))?;
    let key = (event.record.kind == Kind::Decision)
        .then(|| super::index::idempotency_key(event.record.request.as_deref()))
        .flatten();
    lookups.recent.remember(&event, key);
    head.chain = next;
    if event.record.kind == Kind::Checkpoint {
        head.covered = event.seq;
    }
    Ok(event)
}
