//! Writing the index: one transaction per batch of committed events, the entries and the new
//! watermark together, on the index's own connection, never the writer's.

use std::path::Path;
use std::sync::{Arc, Mutex, PoisonError};

use rusqlite::{Connection, OptionalExtension, params};

use super::{Table, micros};
use crate::store::{Reader, StoreError};
use crate::trail::Filter;
use crate::trail::{Event, Kind};

/// Events per transaction when the index catches up at once.
const CATCH_UP: u32 = 5000;

/// The index's writing side: a cheaply cloneable handle on its connection.
#[derive(Debug, Clone)]
pub struct IndexWriter {
    conn: Arc<Mutex<Connection>>,
}

impl IndexWriter {
    /// Opens the index of the trail at `trail` (created with the trail's store) for writing.
    pub fn open(trail: &Path) -> Result<Self, StoreError> {
        let conn = Connection::open(super::path_of(trail))?;
        conn.pragma_update(None, "journal_mode", "WAL")?;
        // Derived data: a crash may lose the last batches, which are written again.
        conn.pragma_update(None, "synchronous", "NORMAL")?;
        conn.busy_timeout(crate::store::BUSY_TIMEOUT)?;
        Ok(Self { conn: Arc::new(Mutex::new(conn)) })
    }

    /// Where the index stands on the trail `reader` reads: its watermark, if that is an event
    /// of this trail; otherwise the index is emptied, to be built again from the first event.
    pub async fn resume(&self, reader: &Reader) -> Result<i64, StoreError> {
        let (seq, hash) = self.watermark().await?;
        if seq == 0 || reader.event(seq).await?.is_some_and(|event| event.hash == hash) {
            return Ok(seq);
        }
        tracing::warn!(seq, "the index is not this trail's: building it again");
        self.clear().await?;
        Ok(0)
    }

    /// Brings the index up to the trail's head now, a batch at a time.
    pub async fn catch_up(&self, reader: &Reader) -> Result<(), StoreError> {
        let mut from = self.resume(reader).await?;
        loop {
            let events = reader.query(&Filter::default(), from, CATCH_UP).await?;
            let Some(last) = events.last().map(|e| e.seq) else { return Ok(()) };
            self.add(events).await?;
            from = last;
        }
    }

    /// The watermark: the last seq indexed and its hash (0 and empty for none).
    async fn watermark(&self) -> Result<(i64, String), StoreError> {
        self.with(|conn| {
            let stood = conn
                .query_row("SELECT seq, hash FROM watermark", [], |r| Ok((r.get(0)?, r.get(1)?)))
                .optional()?;
            Ok(stood.unwrap_or_default())
        })
        .await
    }

    /// Empties the index, to build it again from the first event.
    async fn clear(&self) -> Result<(), StoreError> {
        self.with(|conn| {
            let tx = conn.unchecked_transaction()?;
            for table in Table::ALL {
                tx.execute(&format!("DELETE FROM {}", table.name()), [])?;
            }
            tx.execute("UPDATE watermark SET seq = 0, hash = ''", [])?;
            tx.commit()?;
            Ok(())
        })
        .await
    }

    /// Adds `events` (in `seq` order, each after the watermark) and moves the watermark to the
    /// last of them.
    pub async fn add(&self, events: Vec<Event>) -> Result<(), StoreError> {
        self.with(move |conn| {
            let tx = conn.unchecked_transaction()?;
            let mut entries: Vec<(Table, i64, i64)> = Vec::with_capacity(events.len() * 5);
            for event in &events {
                entries.extend(entries_of(event));
            }
            // In key order per table: a batch touches each page of a table once.
            entries.sort_unstable_by_key(|&(table, key, seq)| (table as u8, key, seq));
            for (table, key, seq) in entries {
                let sql = format!("INSERT OR IGNORE INTO {} (k, at) VALUES (?1, ?2)", table.name());
                tx.prepare_cached(&sql)?.execute(params![key, seq])?;
            }
            // A prune takes its events' entries with it (a scan of each table: prunes are
            // a segment apart).
            let cuts = events.iter().filter_map(crate::store::Pruning::of).map(|p| p.through);
            for through in cuts {
                for table in Table::ALL {
                    tx.execute(&format!("DELETE FROM {} WHERE at <= ?1", table.name()), [through])?;
                }
            }
            if let Some(last) = events.last() {
                tx.execute(
                    "UPDATE watermark SET seq = ?1, hash = ?2",
                    params![last.seq, last.hash],
                )?;
            }
            tx.commit()?;
            Ok(())
        })
        .await
    }

    async fn with<T: Send + 'static>(
        &self,
        work: impl FnOnce(&Connection) -> Result<T, StoreError> + Send + 'static,
    ) -> Result<T, StoreError> {
        let conn = self.conn.clone();
        tokio::task::spawn_blocking(move || {
            let conn = conn.lock().unwrap_or_else(PoisonError::into_inner);
            work(&conn)
        })
        .await
        .map_err(|e| StoreError::Thread(e.to_string()))?
    }
}

/// The index entries of one event: (table, key, seq).
pub(in crate::store) fn entries_of(event: &Event) -> impl Iterator<Item = (Table, i64, i64)> {
    let r = &event.record;
    let text =
        |table: Table, value: &Option<String>| value.as_deref().map(|v| (table, table.key(v)));
    let key = (r.kind == Kind::Decision)
        .then(|| idempotency_key(r.request.as_deref()))
        .flatten()
        .map(|k| (Table::Key, Table::Key.key(&k)));
    [
        text(Table::Session, &r.session_id),
        text(Table::Actor, &r.actor_id),
        text(Table::Tool, &r.tool),
        text(Table::Decision, &r.decision_id),
        key,
        micros(&event.ts).map(|t| (Table::Time, t)),
    ]
    .into_iter()
    .flatten()
    .map(move |(table, key)| (table, key, event.seq))
}

/// A decision's idempotency key, from its stored request (`plan.idempotency_key`), when it has
/// one that is not empty.
pub(in crate::store) fn idempotency_key(request: Option<&str>) -> Option<String> {
    #[derive(serde::Deserialize)]
    struct Request {
        plan: Option<Plan>,
    }
    #[derive(serde::Deserialize)]
    struct Plan {
        idempotency_key: Option<String>,
    }
    let request: Request = serde_json::from_str(request?).ok()?;
    request.plan?.idempotency_key.filter(|k| !k.is_empty())
}
