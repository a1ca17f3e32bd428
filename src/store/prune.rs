//! Pruning the file (migration 0009): the `prune` event and its row in `pruned`, committed
//! together, then the rows at or below its `through` deleted a batch per commit, and the pages
//! they held given back. The tree keeps the nodes of its frontier at `through` (every root and
//! proof of a larger tree is made from them and the nodes after) and its leaves' hashes go;
//! the nodes at the levels of hash tiles (8, 16, …: one per 256 events) stay, for the
//! archive's partial tiles above level 0. Which range may go, and when,
//! is `crate::retention`'s to decide; this file only writes what it is told.

use rusqlite::{Connection, OptionalExtension, Transaction, params};

use super::lookup::Lookup;
use super::{Reader, StoreError, Writer};
use crate::trail::{Event, Frontier, Kind, Node, Record};

/// Rows deleted per commit: a millisecond or two of the writer's time, so that a prune shares
/// the writer with the decisions rather than holding it.
const DELETE_BATCH: i64 = 500;

/// The most free pages given back to the file system per commit (4 MiB of 4 KiB pages).
const GIVE_BACK_STEP: i64 = 1024;

/// What one batch of deletions did.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Deleted {
    /// Events deleted.
    pub events: u64,
    /// Free pages given back to the file system.
    pub pages: u64,
}

impl Deleted {
    /// Whether the batch did anything (else the prune is done).
    pub fn any(self) -> bool {
        self.events + self.pages > 0
    }
}

/// The last prune on the file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pruned {
    /// Events 1 through this have left the file.
    pub through: i64,
    /// The `prune` event that recorded it.
    pub seq: i64,
    /// The chain hash of event `through` (hex): what the first event kept links to.
    pub hash: String,
}

impl Writer {
    /// Appends `carried` (what the state rebuilt at start needs of the range) and then the
    /// `prune` event `record` makes for events 1 through `through` (given the hash of event
    /// `through`), with the row that lets them be deleted. Appends nothing, and says why, when
    /// the range does not end before the head or extend the last prune, or when a tool
    /// definition came after `read_to` (what was carried is stale): a prune never fails the
    /// decisions committed with it.
    pub async fn record_prune(
        &self,
        through: i64,
        read_to: i64,
        carried: Vec<Record>,
        record: impl FnOnce(&str) -> Record + Send + 'static,
    ) -> Result<Result<Event, &'static str>, StoreError> {
        let (reply, refused) = tokio::sync::oneshot::channel();
        let events = self
            .append_with(move |lookup| {
                let tx = lookup.transaction();
                let last = last(tx)?.map_or(0, |p| p.through);
                let (size, _) = lookup.tree_head();
                let head = i64::try_from(size).map_err(|_| StoreError::Tree("size"))?;
                let defined: Option<i64> = tx
                    .query_row(
                        "SELECT seq FROM events WHERE seq > ?1 AND kind = 'tool_defined' LIMIT 1",
                        [read_to],
                        |row| row.get(0),
                    )
                    .optional()?;
                let why = if through <= last || through >= head {
                    Some("a prune must extend the last and end before the head")
                } else if defined.is_some() {
                    Some("a tool definition came since the pins were read")
                } else {
                    None
                };
                if let Some(why) = why {
                    let _ = reply.send(why);
                    return Ok(Vec::new());
                }
                let hash: String =
                    tx.query_row("SELECT hash FROM events WHERE seq = ?1", [through], |row| {
                        row.get(0)
                    })?;
                // The prune event comes after what it carries.
                let seq = head + 1 + i64::try_from(carried.len()).unwrap_or(0);
                tx.execute(
                    "INSERT INTO pruned (through, seq, hash) VALUES (?1, ?2, ?3)",
                    params![through, seq, hash],
                )?;
                let mut records = carried;
                records.push(record(&hash));
                Ok(records)
            })
            .await?;
        match events.into_iter().last() {
            Some(event) => Ok(Ok(event)),
            None => Ok(Err(refused.await.unwrap_or("the prune was not appended"))),
        }
    }

    /// Deletes up to [`DELETE_BATCH`] of the rows the last prune lets go, and gives up to
    /// [`GIVE_BACK_STEP`] free pages back to the file system while more than a quarter of the
    /// file is free (below that, new events fill them: giving them back would move the newest
    /// pages into the holes, writing as much again as was pruned); what it did.
    pub async fn delete_pruned(&self) -> Result<Deleted, StoreError> {
        let (reply, deleted) = tokio::sync::oneshot::channel();
        self.append_with(move |lookup: &Lookup<'_>| {
            // In a savepoint of its own: a batch that fails is undone alone, and the decisions
            // committed with it are not failed for it.
            let tx = lookup.transaction();
            tx.execute_batch("SAVEPOINT prune")?;
            let done = delete_batch(tx);
            match &done {
                Ok(_) => tx.execute_batch("RELEASE prune")?,
                Err(_) => tx.execute_batch("ROLLBACK TO prune; RELEASE prune")?,
            }
            let _ = reply.send(done);
            Ok(Vec::new())
        })
        .await?;
        deleted.await.map_err(|_| StoreError::Closed)?
    }
}

impl Reader {
    /// The last prune on the file, if any (none on a file older than pruning).
    pub async fn pruned(&self) -> Result<Option<Pruned>, StoreError> {
        self.with(|conn| match has_pruned(conn)? {
            true => last(conn),
            false => Ok(None),
        })
        .await
    }

    /// The bytes of the file's pages in use (not its free pages, which new events fill).
    pub async fn bytes_in_use(&self) -> Result<u64, StoreError> {
        self.with(|conn| {
            let pragma =
                |name: &str| conn.pragma_query_value(None, name, |row| row.get::<_, i64>(0));
            let pages = pragma("page_count")? - pragma("freelist_count")?;
            Ok::<_, rusqlite::Error>((pages.max(0) * pragma("page_size")?).unsigned_abs())
        })
        .await
    }

    /// At most `limit` events after `after` whose kind is one of `kinds`, in seq order: one
    /// pass over the file for what a prune must carry, where a filter by one kind would take
    /// one pass each.
    pub async fn of_kinds(
        &self,
        kinds: &'static [Kind],
        after: i64,
        limit: u32,
    ) -> Result<Vec<Event>, StoreError> {
        // The kinds' names are the trail's own fixed set, never input.
        let names: Vec<String> = kinds.iter().map(|k| format!("'{}'", k.as_str())).collect();
        let sql = format!(
            "{} WHERE seq > ?1 AND kind IN ({}) ORDER BY seq LIMIT ?2",
            *super::row::SELECT,
            names.join(", ")
        );
        self.with(move |conn| {
            conn.prepare_cached(&sql)?
                .query_map(params![after, limit], super::row::event)?
                .collect()
        })
        .await
    }

    /// Each (actor, session)'s decisions up to `through`: how many, how many denied, the last
    /// one's time; counted by SQLite in one pass, for what a prune carries.
    pub async fn sessions_through(
        &self,
        through: i64,
    ) -> Result<Vec<(String, String, u64, u64, String)>, StoreError> {
        self.with(move |conn| {
            conn.prepare_cached(
                "SELECT coalesce(actor_id, ''), coalesce(session_id, ''), count(*),
                        sum(outcome = 'deny'), max(ts)
                   FROM events WHERE seq <= ?1 AND kind = 'decision'
                  GROUP BY actor_id, session_id",
            )?
            .query_map([through], |row| {
                let count = |i| row.get::<_, i64>(i).map(i64::unsigned_abs);
                Ok((row.get(0)?, row.get(1)?, count(2)?, count(3)?, row.get(4)?))
            })?
            .collect()
        })
        .await
    }

    /// The first event the file holds, if any.
    pub async fn first_seq(&self) -> Result<Option<i64>, StoreError> {
        self.with(|conn| conn.query_row("SELECT min(seq) FROM events", [], |row| row.get(0))).await
    }
}

/// A session's counts carried past a cut; on the trail an array in this field order.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(from = "(String, String, u64, u64, i64)", into = "(String, String, u64, u64, i64)")]
pub struct Session {
    pub actor: String,
    pub session: String,
    pub calls: u64,
    pub denials: u64,
    /// The session's last call (µs).
    pub last_us: i64,
}

impl From<(String, String, u64, u64, i64)> for Session {
    fn from((actor, session, calls, denials, last_us): (String, String, u64, u64, i64)) -> Self {
        Self { actor, session, calls, denials, last_us }
    }
}

impl From<Session> for (String, String, u64, u64, i64) {
    fn from(s: Session) -> Self {
        (s.actor, s.session, s.calls, s.denials, s.last_us)
    }
}

/// A data class carried past a cut; on the trail an array in this field order.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(from = "(String, i64, i64)", into = "(String, i64, i64)")]
pub struct CarriedRead {
    pub class: String,
    /// The seq of the first execution that read it.
    pub first_seq: i64,
    /// The time (µs) of the session's last read or call, which keeps it live.
    pub live_us: i64,
}

impl From<(String, i64, i64)> for CarriedRead {
    fn from((class, first_seq, live_us): (String, i64, i64)) -> Self {
        Self { class, first_seq, live_us }
    }
}

impl From<CarriedRead> for (String, i64, i64) {
    fn from(r: CarriedRead) -> Self {
        (r.class, r.first_seq, r.live_us)
    }
}

/// A session's data classes carried past a cut; on the trail an array in this field order.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(from = "(String, String, Vec<CarriedRead>)", into = "(String, String, Vec<CarriedRead>)")]
pub struct SessionReads {
    pub actor: String,
    pub session: String,
    pub classes: Vec<CarriedRead>,
}

impl From<(String, String, Vec<CarriedRead>)> for SessionReads {
    fn from((actor, session, classes): (String, String, Vec<CarriedRead>)) -> Self {
        Self { actor, session, classes }
    }
}

impl From<SessionReads> for (String, String, Vec<CarriedRead>) {
    fn from(r: SessionReads) -> Self {
        (r.actor, r.session, r.classes)
    }
}

/// What a `prune` event's `request` records (docs/trail-format.md, "Pruned trails"), as
/// canonical JSON in this field order: the one shape its writer and every reader use.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Pruning {
    /// The first event pruned.
    #[serde(default)]
    pub first: i64,
    /// The last event pruned.
    pub through: i64,
    /// The chain hash of event `through` (hex).
    pub hash: String,
    /// The root of the tree of the first `through` events (hex).
    pub root: String,
    /// The signed checkpoint event the cut stands before (`through + 1`).
    #[serde(default)]
    pub checkpoint: i64,
    /// Where the events went.
    pub archive: String,
    /// Each live session's counts up to the cut, which a gate's facts start from (none in a
    /// prune recorded before they were carried).
    #[serde(default)]
    pub sessions: Vec<Session>,
    /// Each session's data classes read up to the cut (`state::facts`), when any were.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub reads: Vec<SessionReads>,
}

impl Pruning {
    /// What `event` records, when it is a `prune` event whose request reads as one.
    pub fn of(event: &Event) -> Option<Self> {
        let request = event.record.request.as_deref().filter(|_| event.record.kind == Kind::Prune);
        serde_json::from_str(request?).ok()
    }

    /// The event's `request`.
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }
}

/// Whether the file has the `pruned` table (an auditor may read a trail no server migrated).
fn has_pruned(conn: &Connection) -> rusqlite::Result<bool> {
    conn.query_row(
        "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'pruned'",
        [],
        |row| row.get::<_, i64>(0),
    )
    .map(|n| n > 0)
}

fn last(conn: &Connection) -> rusqlite::Result<Option<Pruned>> {
    conn.query_row(
        "SELECT through, seq, hash FROM pruned ORDER BY through DESC LIMIT 1",
        [],
        |row| Ok(Pruned { through: row.get(0)?, seq: row.get(1)?, hash: row.get(2)? }),
    )
    .optional()
}

/// One batch of [`Writer::delete_pruned`], in the writer's transaction.
fn delete_batch(tx: &Transaction<'_>) -> Result<Deleted, StoreError> {
    let Some(pruned) = last(tx)? else { return Ok(Deleted::default()) };
    let first: Option<i64> = tx.query_row("SELECT min(seq) FROM events", [], |row| row.get(0))?;
    let events = match first.filter(|first| *first <= pruned.through) {
        Some(first) => delete_rows(tx, &pruned, first)?,
        None => 0,
    };
    Ok(Deleted { events, pages: give_back(tx)? })
}

/// Deletes the events from `first` on, up to [`DELETE_BATCH`] and `pruned.through`, and the
/// tree's nodes of their leaves that nothing needs any more.
fn delete_rows(tx: &Transaction<'_>, pruned: &Pruned, first: i64) -> Result<u64, StoreError> {
    let end = (first + DELETE_BATCH - 1).min(pruned.through);
    let deleted = tx.execute("DELETE FROM events WHERE seq >= ?1 AND seq <= ?2", [first, end])?;
    // The nodes the same leaves completed (leaf = seq - 1), but the frontier's and those at
    // the levels of hash tiles above level 0 (one in 256: what the archive's partial tiles
    // are made of): numbers this function made, so they are written into the statement.
    let keep: Vec<String> = frontier(pruned.through)?
        .iter()
        .map(|(leaf, level)| format!("({leaf}, {level})"))
        .collect();
    tx.execute(
        &format!(
            "DELETE FROM tree_nodes WHERE leaf >= ?1 AND leaf <= ?2 AND (level = 0 OR level % 8 != 0)
               AND (leaf, level) NOT IN (VALUES {})",
            keep.join(", ")
        ),
        [first - 1, end - 1],
    )?;
    Ok(deleted as u64)
}

/// The (leaf, level) keys of the frontier's nodes of the tree of `size` leaves.
fn frontier(size: i64) -> Result<Vec<(i64, u32)>, StoreError> {
    let size = u64::try_from(size).map_err(|_| StoreError::Tree("size"))?;
    let mut keys = Vec::new();
    Frontier::of(size, |Node { level, index }| {
        let last = ((index + 1) << level) - 1;
        keys.push((i64::try_from(last).map_err(|_| StoreError::Tree("size"))?, level));
        Ok::<_, StoreError>([0; 32])
    })?;
    Ok(keys)
}

/// Gives free pages back to the file system (up to [`GIVE_BACK_STEP`], while more than a
/// quarter of the file is free), where the file was made to (`auto_vacuum = INCREMENTAL`,
/// every file created since migration 0009); an older file keeps them and fills them with new
/// events first. How many it gave back.
fn give_back(tx: &Transaction<'_>) -> rusqlite::Result<u64> {
    let pragma =
        |name: &str| tx.query_row(&format!("PRAGMA {name}"), [], |row| row.get::<_, i64>(0));
    let (mode, free, pages) =
        (pragma("auto_vacuum")?, pragma("freelist_count")?, pragma("page_count")?);
    if mode != 2 || free * 4 <= pages {
        return Ok(0);
    }
    let step = free.min(GIVE_BACK_STEP);
    // A page per row: every row is stepped through, or only the first page goes. (A pragma
    // takes no parameter: the number is this function's.)
    let mut stmt = tx.prepare(&format!("PRAGMA incremental_vacuum({step})"))?;
    let mut rows = stmt.query([])?;
    while rows.next()?.is_some() {}
    Ok(step.unsigned_abs())
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::audit::verify_trail;
    use crate::config::{Durability, WriterConfig};
    use crate::store::Store;
    use crate::trail::{Anchors, Kind};

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_prune_deletes_its_range_keeps_the_frontier_gives_pages_back_and_verifies() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("t.db");
        let metrics = Arc::new(crate::metrics::Metrics::default());
        let config = WriterConfig::default();
        let (store, thread) =
            Store::open(&db, Durability::Normal, &config, metrics, None).await.unwrap();
        let (writer, reader) = (&store.writer, &store.reader);
        let decision =
            |n: usize| Record { reason: Some("x".repeat(n)), ..Record::new(Kind::Decision) };
        for _ in 0..10 {
            writer.append((0..1000).map(|_| decision(200)).collect()).await.unwrap();
        }
        let root = reader.root(7_777).await.unwrap();
        let before = reader.bytes_in_use().await.unwrap();
        // Not past the head, and nothing is deleted before a prune is recorded.
        let prune = |through| {
            writer.record_prune(through, 10_000, Vec::new(), |_| Record::new(Kind::Prune))
        };
        assert!(prune(10_000).await.unwrap().is_err());
        assert!(!writer.delete_pruned().await.unwrap().any());

        let event = prune(7_777).await.unwrap().unwrap();
        assert_eq!(event.seq, 10_001);
        let mut deleted = 0;
        while let Some(done) = Some(writer.delete_pruned().await.unwrap()).filter(|d| d.any()) {
            deleted += done.events;
        }
        assert_eq!(deleted, 7_777);
        assert_eq!(reader.first_seq().await.unwrap(), Some(7_778));
        assert!(reader.bytes_in_use().await.unwrap() < before / 2, "the pages went back");
        let conn = rusqlite::Connection::open(&db).unwrap();
        let free: i64 = conn.pragma_query_value(None, "freelist_count", |r| r.get(0)).unwrap();
        let pages: i64 = conn.pragma_query_value(None, "page_count", |r| r.get(0)).unwrap();
        assert!(free * 4 <= pages, "to the file system, not to the free list: {free} of {pages}");
        drop(conn);
        // The frontier at the prune makes the same roots as before.
        assert_eq!(reader.frontier(7_777).await.unwrap().root(), root);
        assert_eq!(reader.pruned().await.unwrap().unwrap().through, 7_777);
        // A later prune must extend it; the rows above it stay undeletable by hand.
        assert!(prune(5_000).await.unwrap().is_err());
        let conn = rusqlite::Connection::open(&db).unwrap();
        assert!(conn.execute("DELETE FROM events WHERE seq = 7778", []).is_err());
        drop(conn);

        // The file verifies from the first event it keeps, linked to the hash of the last
        // pruned one; the prune event records no range, so verification says so.
        let report = verify_trail(reader, 1, None, &Anchors::default(), |_| {}).await.unwrap();
        assert_eq!(report.checked, 10_001 - 7_777);
        assert_eq!(report.problems, vec![crate::trail::Problem::PruneUnrecorded { seq: 10_001 }]);
        // With a key, a prune no signed checkpoint vouches for is a problem of its own: a
        // forged one cannot pass for retention's.
        let signer = crate::trail::note::NoteSigner::generate("toolgate/test").unwrap();
        let anchors = Anchors { keys: vec![signer.verifier()], ..Anchors::default() };
        let report = verify_trail(reader, 1, None, &anchors, |_| {}).await.unwrap();
        assert!(report.problems.contains(&crate::trail::Problem::PruneUnsigned { seq: 10_001 }));
        drop(store);
        thread.join().await;
    }
}
