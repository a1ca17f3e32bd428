//! What a witness remembers, in its own SQLite file: for each log (by origin) the latest
//! checkpoint it cosigned, and every submission it refused for a reason that may be evidence
//! of a log's misbehaviour (a rollback, a fork, a proof that does not verify). Written with
//! `synchronous = FULL`: a cosignature is answered only once its checkpoint is on disk.

use std::path::Path;

use chrono::{SecondsFormat, Utc};
use rusqlite::{Connection, OptionalExtension, params};

use crate::trail::Hash;

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS logs (
    origin TEXT PRIMARY KEY,
    size INTEGER NOT NULL,
    root BLOB NOT NULL,
    checkpoint TEXT NOT NULL,
    updated_at TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS refusals (
    id INTEGER PRIMARY KEY,
    at TEXT NOT NULL,
    origin TEXT NOT NULL,
    status INTEGER NOT NULL,
    reason TEXT NOT NULL,
    size INTEGER NOT NULL,
    root BLOB NOT NULL,
    checkpoint TEXT NOT NULL,
    -- A replayed submission is kept once: only the log can sign new checkpoints, so the table
    -- grows no faster than the log does, however often anyone resends one.
    UNIQUE (origin, status, reason, size, root)
);
CREATE TRIGGER IF NOT EXISTS refusals_append_only_update BEFORE UPDATE ON refusals
BEGIN SELECT RAISE(ABORT, 'refusals are append-only'); END;
CREATE TRIGGER IF NOT EXISTS refusals_append_only_delete BEFORE DELETE ON refusals
BEGIN SELECT RAISE(ABORT, 'refusals are append-only'); END;
";

/// The latest checkpoint a witness cosigned for a log.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Latest {
    pub size: u64,
    pub root: Hash,
    /// The checkpoint as it was submitted (the log's signature on it).
    pub checkpoint: String,
}

/// A submission the witness refused and kept.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    pub at: String,
    pub origin: String,
    pub status: u16,
    pub reason: String,
}

/// The witness's state file.
pub struct State {
    conn: Connection,
}

impl State {
    /// Opens (or creates) the state file.
    pub fn open(path: &Path) -> rusqlite::Result<Self> {
        let conn = Connection::open(path)?;
        conn.pragma_update(None, "journal_mode", "WAL")?;
        conn.pragma_update(None, "synchronous", "FULL")?;
        conn.execute_batch(SCHEMA)?;
        Ok(Self { conn })
    }

    /// The latest checkpoint cosigned for `origin`.
    pub fn latest(&self, origin: &str) -> rusqlite::Result<Option<Latest>> {
        self.conn
            .query_row(
                "SELECT size, root, checkpoint FROM logs WHERE origin = ?1",
                [origin],
                |row| {
                    let root: Vec<u8> = row.get(1)?;
                    Ok(Latest {
                        size: row.get::<_, i64>(0)?.unsigned_abs(),
                        root: root.try_into().unwrap_or_default(),
                        checkpoint: row.get(2)?,
                    })
                },
            )
            .optional()
    }

    /// Every log's latest checkpoint, by origin.
    pub fn logs(&self) -> rusqlite::Result<Vec<(String, Latest)>> {
        let mut stmt =
            self.conn.prepare("SELECT origin, size, root, checkpoint FROM logs ORDER BY origin")?;
        let rows = stmt.query_map([], |row| {
            let root: Vec<u8> = row.get(2)?;
            let latest = Latest {
                size: row.get::<_, i64>(1)?.unsigned_abs(),
                root: root.try_into().unwrap_or_default(),
                checkpoint: row.get(3)?,
            };
            Ok((row.get(0)?, latest))
        })?;
        rows.collect()
    }

    /// Makes `latest` the checkpoint cosigned for `origin`.
    pub fn advance(&self, origin: &str, latest: &Latest) -> rusqlite::Result<()> {
        let size = i64::try_from(latest.size).unwrap_or(i64::MAX);
        self.conn.execute(
            "INSERT INTO logs (origin, size, root, checkpoint, updated_at)
             VALUES (?1, ?2, ?3, ?4, ?5)
             ON CONFLICT (origin) DO UPDATE SET size = ?2, root = ?3, checkpoint = ?4,
                                                updated_at = ?5",
            params![origin, size, latest.root.as_slice(), latest.checkpoint, now()],
        )?;
        Ok(())
    }

    /// Keeps a refused submission of the signed checkpoint `note`, of tree `size` and `root`
    /// (once: a replay of the same refusal is not kept again).
    pub fn refuse(
        &self,
        origin: &str,
        status: u16,
        reason: &str,
        (size, root): (u64, &Hash),
        note: &str,
    ) -> rusqlite::Result<()> {
        self.conn.execute(
            "INSERT OR IGNORE INTO refusals (at, origin, status, reason, size, root, checkpoint)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
            params![
                now(),
                origin,
                status,
                reason,
                i64::try_from(size).unwrap_or(i64::MAX),
                root.as_slice(),
                note
            ],
        )?;
        Ok(())
    }

    /// Every refusal kept, oldest first.
    pub fn refusals(&self) -> rusqlite::Result<Vec<Refusal>> {
        let mut stmt =
            self.conn.prepare("SELECT at, origin, status, reason FROM refusals ORDER BY id")?;
        let rows = stmt.query_map([], |row| {
            Ok(Refusal {
                at: row.get(0)?,
                origin: row.get(1)?,
                status: row.get(2)?,
                reason: row.get(3)?,
            })
        })?;
        rows.collect()
    }
}

fn now() -> String {
    Utc::now().to_rfc3339_opts(SecondsFormat::Micros, true)
}
