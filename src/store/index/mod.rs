//! The auditors' index of the trail, kept off the commit path: a second SQLite file beside the
//! trail (`<trail>-index`) that a follower ([`crate::follow::index`]) fills in batches after the
//! events commit. The commit path appends the event row and its tree nodes and nothing else.
//!
//! The index maps a session, an actor, a tool, a decision id, an idempotency key and a time to
//! the `seq`s of the events that carry them, up to its watermark: the last event it holds.
//! A query reads the index up to the watermark and scans the events after it (the unindexed
//! tail, usually a few hundred events), and re-checks every condition on the events
//! themselves, so its answer is exactly what it would be without the index (`plan.rs`). Keys
//! are 64-bit digests of the values (a decision id's own time-ordered first 8 bytes), so an
//! entry is a few bytes; a key that two values share only costs the re-check.
//!
//! The index is derived data: written with `synchronous = NORMAL` (a crash may lose its last
//! batches, which the follower writes again from the watermark), built again from the trail
//! when it is missing, of an older layout, or of another trail (the watermark names the hash of
//! the event it stands at, checked against the trail at every read).

mod plan;
#[cfg(test)]
mod tests;
mod write;

use std::path::{Path, PathBuf};

use rusqlite::{Connection, OptionalExtension};
use sha2::{Digest, Sha256};

pub(super) use plan::Plan;
pub use write::IndexWriter;
pub(super) use write::idempotency_key;

/// The index's layout version (SQLite's `user_version` of the index file).
const LAYOUT: i64 = 2;

/// The index file's schema.
const SCHEMA: &str = "
CREATE TABLE watermark (
    only INTEGER PRIMARY KEY CHECK (only = 1),
    seq  INTEGER NOT NULL,  -- the last event indexed (0: none)
    hash TEXT    NOT NULL   -- its hash, so that the index is never read against another trail
) STRICT;
INSERT INTO watermark VALUES (1, 0, '');
CREATE TABLE by_session  (k INTEGER NOT NULL, at INTEGER NOT NULL, PRIMARY KEY (k, at)) STRICT, WITHOUT ROWID;
CREATE TABLE by_actor    (k INTEGER NOT NULL, at INTEGER NOT NULL, PRIMARY KEY (k, at)) STRICT, WITHOUT ROWID;
CREATE TABLE by_tool     (k INTEGER NOT NULL, at INTEGER NOT NULL, PRIMARY KEY (k, at)) STRICT, WITHOUT ROWID;
CREATE TABLE by_decision (k INTEGER NOT NULL, at INTEGER NOT NULL, PRIMARY KEY (k, at)) STRICT, WITHOUT ROWID;
CREATE TABLE by_key      (k INTEGER NOT NULL, at INTEGER NOT NULL, PRIMARY KEY (k, at)) STRICT, WITHOUT ROWID;
CREATE TABLE by_time     (k INTEGER NOT NULL, at INTEGER NOT NULL, PRIMARY KEY (k, at)) STRICT, WITHOUT ROWID;
";

/// The tables of the index, each with the event's value it maps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Table {
    Session,
    Actor,
    Tool,
    Decision,
    /// A decision's idempotency key (decisions only).
    Key,
    /// The event's time, as microseconds since the epoch (ordered, unlike a digest).
    Time,
}

impl Table {
    pub(super) const ALL: [Self; 6] =
        [Self::Session, Self::Actor, Self::Tool, Self::Decision, Self::Key, Self::Time];

    /// The table's name in the index file.
    pub(super) fn name(self) -> &'static str {
        match self {
            Self::Session => "by_session",
            Self::Actor => "by_actor",
            Self::Tool => "by_tool",
            Self::Decision => "by_decision",
            Self::Key => "by_key",
            Self::Time => "by_time",
        }
    }
}

/// Where the index of the trail at `trail` lives.
pub fn path_of(trail: &Path) -> PathBuf {
    let mut name = trail.as_os_str().to_owned();
    name.push("-index");
    PathBuf::from(name)
}

impl Table {
    /// The key of a text value in this table: for a decision id that is a UUID v7 (as every
    /// decision id toolgate gives is), its first 8 bytes, which begin with its time, so that
    /// a batch's new decisions land at the end of the table rather than on a page each; for
    /// anything else, a digest.
    pub(super) fn key(self, value: &str) -> i64 {
        let time_ordered = match self {
            Self::Decision => uuid::Uuid::parse_str(value)
                .ok()
                .filter(|id| id.get_version_num() == 7)
                .map(|id| i64::from_be_bytes(id.as_bytes()[..8].try_into().unwrap_or_default())),
            Self::Session | Self::Actor | Self::Tool | Self::Key | Self::Time => None,
        };
        time_ordered.unwrap_or_else(|| digest(value))
    }
}

/// The key of a text value: the first 8 bytes of its SHA-256.
fn digest(value: &str) -> i64 {
    let hash = Sha256::digest(value.as_bytes());
    let mut first = [0u8; 8];
    first.copy_from_slice(&hash[..8]);
    i64::from_be_bytes(first)
}

/// The key of a time in the trail's normalized RFC 3339: microseconds since the epoch.
pub(super) fn micros(ts: &str) -> Option<i64> {
    chrono::DateTime::parse_from_rfc3339(ts).ok().map(|t| t.timestamp_micros())
}

/// Creates the index file beside the trail when missing, or lays it out again when it is of
/// another layout, or, when it does not open as an index at all (damaged), removes it and
/// creates it again: it is then built again from the trail.
pub(super) fn create(trail: &Path) -> rusqlite::Result<()> {
    lay_out(trail).or_else(|error| {
        tracing::warn!(%error, "the trail's index does not open: building it again");
        for suffix in ["", "-wal", "-shm"] {
            let mut name = path_of(trail).into_os_string();
            name.push(suffix);
            let _ = std::fs::remove_file(name);
        }
        lay_out(trail)
    })
}

fn lay_out(trail: &Path) -> rusqlite::Result<()> {
    let mut conn = Connection::open(path_of(trail))?;
    conn.pragma_update(None, "journal_mode", "WAL")?;
    let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
    let layout: i64 = tx.pragma_query_value(None, "user_version", |row| row.get(0))?;
    if layout != LAYOUT {
        let tables: Vec<String> = tx
            .prepare("SELECT name FROM sqlite_master WHERE type = 'table'")?
            .query_map([], |row| row.get(0))?
            .collect::<rusqlite::Result<_>>()?;
        for table in tables {
            tx.execute_batch(&format!("DROP TABLE \"{}\"", table.replace('"', "\"\"")))?;
        }
        tx.execute_batch(SCHEMA)?;
        tx.pragma_update(None, "user_version", LAYOUT)?;
    }
    tx.commit()
}

/// Attaches the index (read-only when `conn` is) as `ix`, if the trail has one; whether it
/// did.
pub(super) fn attach(conn: &Connection, trail: &Path) -> bool {
    let path = path_of(trail);
    if !path.exists() || conn.execute("ATTACH DATABASE ?1 AS ix", [path.to_string_lossy()]).is_err()
    {
        return false;
    }
    let layout = conn.pragma_query_value(Some("ix"), "user_version", |row| row.get::<_, i64>(0));
    if layout.is_ok_and(|layout| layout == LAYOUT) {
        return true;
    }
    let _ = conn.execute_batch("DETACH DATABASE ix");
    false
}

/// The watermark of the index attached to `conn` as `ix`: the last `seq` it holds, if it is
/// this trail's index (its hash there is the trail's); 0 otherwise, and then every event is
/// in the tail. `None` when no index is attached (a trail copied without it, one no server of
/// this version has opened): the caller reads the events alone. Read inside the caller's
/// transaction, before the events.
pub(super) fn watermark(conn: &Connection) -> rusqlite::Result<Option<i64>> {
    checked_watermark(conn, "ix.watermark", conn)
}

/// The watermark table `table` of the index `index` holds, checked against the trail `trail`
/// reads (0 when it is not this trail's); `None` when there is no such table. The reads'
/// index is attached to their connection, the writer's is a connection of its own.
pub(super) fn checked_watermark(
    index: &Connection,
    table: &str,
    trail: &Connection,
) -> rusqlite::Result<Option<i64>> {
    let stood: Option<(i64, String)> =
        match index.prepare_cached(&format!("SELECT seq, hash FROM {table}")) {
            Ok(mut stmt) => stmt.query_row([], |row| Ok((row.get(0)?, row.get(1)?))).optional()?,
            Err(_) => return Ok(None),
        };
    let Some((seq, hash)) = stood.filter(|(seq, _)| *seq > 0) else { return Ok(Some(0)) };
    let stored: Option<String> = trail
        .prepare_cached("SELECT hash FROM main.events WHERE seq = ?1")?
        .query_row([seq], |row| row.get(0))
        .optional()?;
    Ok(Some(if stored.as_deref() == Some(hash.as_str()) { seq } else { 0 }))
}

/// A read-only connection to the index of the trail at `trail`, if it has one: the writer's,
/// for the lookups its memory of recent events cannot answer.
pub(super) fn reading(trail: &Path) -> Option<Connection> {
    let flags =
        rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY | rusqlite::OpenFlags::SQLITE_OPEN_NO_MUTEX;
    let conn = Connection::open_with_flags(path_of(trail), flags).ok()?;
    conn.busy_timeout(super::BUSY_TIMEOUT).ok()?;
    Some(conn)
}
