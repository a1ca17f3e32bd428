//! Reads of the trail through read-only connections, each query on a blocking thread. Reads
//! use rusqlite rather than sqlx: decoding a 28-column row through sqlx's worker thread cost
//! about 27 µs, which held exports and verification to some 37,000 events a second.
//!
//! Long reads (exports, verification) go page by page in `seq` order, each page its own short
//! read transaction, so a reader never holds back the WAL checkpoints of a busy writer.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};

use rusqlite::types::Value;
use rusqlite::{Connection, OpenFlags, OptionalExtension, Row, params, params_from_iter};

use super::StoreError;
use super::index::{self, Plan};
use super::row::{self, SELECT};
use super::tree::Known;
use crate::query::{Head, Stats};
use crate::trail::Filter;
use crate::trail::{
    Event, Frontier, Hash, Link, Node, Subtrees, decode_hex, hash_cells, leaf_hash, position,
};

/// Events read per page by exports and verification.
pub const PAGE: u32 = 1000;

/// The tree as [`Reader::prove`] reads it.
pub type Proving<'a> = Subtrees<&'a mut dyn FnMut(Node) -> Result<Hash, StoreError>>;

/// A cheaply cloneable read-only handle: cloning is shallow.
#[derive(Debug, Clone)]
pub struct Reader {
    connections: Arc<Connections>,
}

/// Idle read-only connections, reused across queries.
#[derive(Debug)]
struct Connections {
    path: PathBuf,
    idle: Mutex<Vec<Connection>>,
}

impl Connections {
    fn open(&self) -> rusqlite::Result<Connection> {
        let flags = OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let conn = Connection::open_with_flags(&self.path, flags)?;
        conn.busy_timeout(super::BUSY_TIMEOUT)?;
        // Read-only too: an attached file takes the connection's flags.
        super::index::attach(&conn, &self.path);
        Ok(conn)
    }

    fn checkout(&self) -> rusqlite::Result<Connection> {
        let idle = self.idle.lock().unwrap_or_else(PoisonError::into_inner).pop();
        idle.map_or_else(|| self.open(), Ok)
    }

    fn checkin(&self, conn: Connection) {
        self.idle.lock().unwrap_or_else(PoisonError::into_inner).push(conn);
    }
}

impl Reader {
    /// Opens an existing trail read-only; it never creates, migrates or writes the file.
    pub async fn open(path: &Path) -> Result<Self, StoreError> {
        if !path.exists() {
            return Err(StoreError::Missing(path.display().to_string()));
        }
        let reader = Self {
            connections: Arc::new(Connections {
                path: path.to_owned(),
                idle: Mutex::new(Vec::new()),
            }),
        };
        // Open one connection now, so that a file that is not a trail fails here.
        reader
            .with(|conn| conn.query_row("SELECT count(*) FROM events WHERE 0", [], |_| Ok(())))
            .await?;
        Ok(reader)
    }

    /// Runs `read` on a connection, on a blocking thread.
    pub(super) async fn with<T: Send + 'static, E: From<rusqlite::Error> + Send + 'static>(
        &self,
        read: impl FnOnce(&Connection) -> Result<T, E> + Send + 'static,
    ) -> Result<T, StoreError>
    where
        StoreError: From<E>,
    {
        let connections = self.connections.clone();
        let answer = tokio::task::spawn_blocking(move || {
            let conn = connections.checkout()?;
            let answer = read(&conn);
            connections.checkin(conn);
            answer
        })
        .await
        .map_err(|e| StoreError::Thread(e.to_string()))?;
        Ok(answer?)
    }

    /// At most `limit` events matching `filter` with `seq` above `after`, in `seq` order.
    pub async fn query(
        &self,
        filter: &Filter,
        after: i64,
        limit: u32,
    ) -> Result<Vec<Event>, StoreError> {
        self.page(filter, after, true, limit).await
    }

    /// At most `limit` events matching `filter` with `seq` below `before` (any, when 0), newest
    /// first.
    pub async fn query_newest(
        &self,
        filter: &Filter,
        before: i64,
        limit: u32,
    ) -> Result<Vec<Event>, StoreError> {
        let before = if before > 0 { before } else { i64::MAX };
        self.page(filter, before, false, limit).await
    }

    /// A page of the events matching `filter` after `seq` (`ascending`) or before it, newest
    /// first: through the index up to its watermark and by a scan of the tail after it, in one
    /// read transaction (`index/plan.rs`). A filter on no indexed column scans the events.
    async fn page(
        &self,
        filter: &Filter,
        seq: i64,
        ascending: bool,
        limit: u32,
    ) -> Result<Vec<Event>, StoreError> {
        let (conditions, values) = conditions(filter);
        let plan = Plan::ordered(filter);
        self.with(move |conn| {
            let tx = conn.unchecked_transaction()?;
            let (order, place) = if ascending { ("", ">") } else { (" DESC", "<") };
            let mut events = Vec::new();
            let watermark = match plan {
                Some(_) => index::watermark(&tx)?,
                None => None,
            };
            let (Some(plan), Some(watermark)) = (plan, watermark) else {
                let sql = format!(
                    "{} WHERE seq {place} ?{conditions} ORDER BY seq{order} LIMIT ?",
                    *SELECT
                );
                read_into(&tx, &sql, vec![Value::Integer(seq)], &values, limit, &mut events)?;
                return Ok::<_, rusqlite::Error>(events);
            };
            // The indexed events (up to the watermark) and the tail (after it), in the order
            // asked: the tail comes first, newest first.
            let (select, mut indexed) = plan.events();
            indexed.extend([Value::Integer(seq), Value::Integer(watermark)]);
            let indexed_sql = format!(
                "{select} AND at {place} ? AND at <= ?{conditions} ORDER BY at{order} LIMIT ?"
            );
            // One range on seq, so that the scan starts where the tail does.
            let (low, high) = match ascending {
                true => (seq.max(watermark), i64::MAX),
                false => (watermark, seq),
            };
            let tail = vec![Value::Integer(low), Value::Integer(high)];
            let tail_sql = format!(
                "{} WHERE seq > ? AND seq < ?{conditions} ORDER BY seq{order} LIMIT ?",
                *SELECT
            );
            let mut parts = [(indexed_sql, indexed), (tail_sql, tail)];
            if !ascending {
                parts.reverse();
            }
            for (sql, bound) in parts {
                read_into(&tx, &sql, bound, &values, limit, &mut events)?;
            }
            Ok(events)
        })
        .await
    }

    /// Calls `each` with every event matching `filter`, in `seq` order, a page at a time;
    /// returns how many there were.
    pub async fn scan(
        &self,
        filter: &Filter,
        mut each: impl FnMut(Event),
    ) -> Result<u64, StoreError> {
        let (mut after, mut seen) = (0, 0);
        loop {
            let events = self.query(filter, after, PAGE).await?;
            let full = events.len() == PAGE as usize;
            after = events.last().map_or(after, |e| e.seq);
            seen += events.len() as u64;
            events.into_iter().for_each(&mut each);
            if !full {
                return Ok(seen);
            }
        }
    }

    /// The chain links of the events with `seq` from `first` to `last`, in `seq` order: each
    /// event's content is hashed straight from its row, without building the event.
    pub async fn links(&self, first: i64, last: i64) -> Result<Vec<Link>, StoreError> {
        let sql = format!("{} WHERE seq >= ?1 AND seq <= ?2 ORDER BY seq", *SELECT);
        self.with(move |conn| {
            let mut stmt = conn.prepare_cached(&sql)?;
            let mut rows = stmt.query(params![first, last])?;
            let mut links =
                Vec::with_capacity(usize::try_from(last - first + 1).unwrap_or(0).min(4096));
            while let Some(row) = rows.next()? {
                links.push(link(row)?);
            }
            Ok::<_, rusqlite::Error>(links)
        })
        .await
    }

    /// How many events match `filter`.
    pub async fn count(&self, filter: &Filter) -> Result<u64, StoreError> {
        let (conditions, values) = conditions(filter);
        let plan = Plan::of(filter);
        let count: i64 = self
            .with(move |conn| {
                let tx = conn.unchecked_transaction()?;
                let (source, bound) = matching(&tx, plan.as_ref(), "1", &conditions, &values)?;
                let sql = format!("SELECT count(*) FROM ({source})");
                tx.query_row(&sql, params_from_iter(bound), |row| row.get(0))
            })
            .await?;
        Ok(count.unsigned_abs())
    }

    /// The event at `seq`, if there is one.
    pub async fn event(&self, seq: i64) -> Result<Option<Event>, StoreError> {
        self.with(move |conn| {
            conn.prepare_cached(&format!("{} WHERE seq = ?1", *SELECT))?
                .query_row([seq], row::event)
                .optional()
        })
        .await
    }

    /// The last `checkpoint` event, if the trail has one (through the checkpoints' index).
    pub async fn last_checkpoint(&self) -> Result<Option<Event>, StoreError> {
        let sql = format!("{} WHERE kind = 'checkpoint' ORDER BY seq DESC LIMIT 1", *SELECT);
        self.with(move |conn| conn.prepare_cached(&sql)?.query_row([], row::event).optional()).await
    }

    /// Every `checkpoint` event, in `seq` order (through their own index).
    pub async fn checkpoints(&self) -> Result<Vec<Event>, StoreError> {
        let sql = format!("{} WHERE kind = 'checkpoint' ORDER BY seq", *SELECT);
        self.with(move |conn| conn.prepare_cached(&sql)?.query_map([], row::event)?.collect()).await
    }

    /// The last event, if the trail has any.
    pub async fn head(&self) -> Result<Option<Head>, StoreError> {
        self.with(|conn| {
            conn.query_row(
                "SELECT seq, hash, ts FROM events ORDER BY seq DESC LIMIT 1",
                [],
                |row| Ok(Head { seq: row.get(0)?, hash: row.get(1)?, ts: row.get(2)? }),
            )
            .optional()
        })
        .await
    }

    /// Counts of the events a filter selects (a time range, for the compliance summary), by
    /// outcome, tool, actor and kind.
    pub async fn stats(&self, range: &Filter) -> Result<Stats, StoreError> {
        let (conditions, values) = conditions(range);
        let plan = Plan::of(range);
        self.with(move |conn| {
            let tx = conn.unchecked_transaction()?;
            let mut stats = Stats::default();
            let (source, bound) = matching(&tx, plan.as_ref(), "1", &conditions, &values)?;
            let total: i64 = tx.query_row(
                &format!("SELECT count(*) FROM ({source})"),
                params_from_iter(bound),
                |row| row.get(0),
            )?;
            stats.total = total.unsigned_abs();
            for (column, counts) in [
                (crate::query::DECISION_OUTCOME, &mut stats.by_outcome),
                ("tool", &mut stats.by_tool),
                ("actor_id", &mut stats.by_actor),
                ("kind", &mut stats.by_kind),
            ] {
                // `column` is one of the literals above, never input.
                let (source, bound) = matching(&tx, plan.as_ref(), column, &conditions, &values)?;
                let sql = format!(
                    "SELECT c, count(*) FROM ({source}) WHERE c IS NOT NULL
                     GROUP BY c ORDER BY count(*) DESC, c"
                );
                let mut stmt = tx.prepare(&sql)?;
                let rows = stmt.query_map(params_from_iter(bound), |row| {
                    Ok((row.get::<_, String>(0)?, row.get::<_, i64>(1)?.unsigned_abs()))
                })?;
                *counts = rows.collect::<rusqlite::Result<_>>()?;
            }
            Ok::<_, rusqlite::Error>(stats)
        })
        .await
    }

    /// How many leaves the Merkle tree has: the events it covers, from seq 1.
    pub async fn tree_size(&self) -> Result<u64, StoreError> {
        self.with(super::tree::size).await
    }

    /// The right edge of the tree of the first `size` events, from its stored nodes.
    pub async fn frontier(&self, size: u64) -> Result<Frontier, StoreError> {
        self.with(move |conn| Frontier::of(size, |n| super::tree::node(conn, n))).await
    }

    /// The leaf hash of the event at `seq`.
    pub async fn leaf(&self, seq: u64) -> Result<Hash, StoreError> {
        self.prove(Arc::default(), move |tree| tree.hash(seq - 1, seq)).await
    }

    /// The hashes of the `count` perfect nodes at `level` from `first` on (a hash tile's).
    pub async fn nodes(&self, level: u32, first: u64, count: u64) -> Result<Vec<Hash>, StoreError> {
        self.with(move |conn| {
            (first..first + count)
                .map(|index| super::tree::node(conn, Node { level, index }))
                .collect()
        })
        .await
    }

    /// The root of the tree of the first `size` events.
    pub async fn root(&self, size: u64) -> Result<Hash, StoreError> {
        self.prove(Arc::default(), move |tree| tree.root(size)).await
    }

    /// The inclusion proof of the event at `seq` in the tree of the first `size` events.
    pub async fn inclusion_proof(&self, seq: u64, size: u64) -> Result<Vec<Hash>, StoreError> {
        self.prove(Arc::default(), move |tree| tree.inclusion(seq - 1, size)).await
    }

    /// The inclusion proofs of the events at `seqs` in the tree of the first `size` events, in
    /// one read.
    pub async fn inclusion_proofs(
        &self,
        seqs: Vec<u64>,
        size: u64,
    ) -> Result<Vec<Vec<Hash>>, StoreError> {
        self.prove(Arc::default(), move |tree| {
            seqs.iter().map(|seq| tree.inclusion(seq - 1, size)).collect()
        })
        .await
    }

    /// The consistency proof of the tree of the first `old` events with that of `new`.
    pub async fn consistency_proof(&self, old: u64, new: u64) -> Result<Vec<Hash>, StoreError> {
        self.prove(Arc::default(), move |tree| tree.consistency(old, new)).await
    }

    /// Whatever `ask` reads from the tree, in one read transaction, each node once: its stored
    /// nodes, the nodes between the levels a prune kept made from them, and below those, nodes
    /// `known` from elsewhere (`StoreError::NodeMissing` names the first that is none of these).
    pub async fn prove<T: Send + 'static>(
        &self,
        known: Arc<Known>,
        ask: impl FnOnce(&mut Proving<'_>) -> Result<T, StoreError> + Send + 'static,
    ) -> Result<T, StoreError> {
        self.with(move |conn| {
            // Dropped at the end, it ends the read (nothing was written).
            let _snapshot = conn.unchecked_transaction()?;
            let mut nodes = super::tree::Nodes::new(conn, &known)?;
            let node: &mut dyn FnMut(Node) -> Result<Hash, StoreError> = &mut |n| nodes.get(n);
            ask(&mut Subtrees::new(node))
        })
        .await
    }

    /// The witnesses' cosignatures of the checkpoint event at `seq`.
    pub async fn cosignatures(
        &self,
        seq: i64,
    ) -> Result<Vec<crate::query::Cosignature>, StoreError> {
        self.with(move |conn| super::cosignatures::of(conn, seq)).await
    }

    /// At most `limit` cosignatures of checkpoint events after `seq` and up to `through`, in
    /// (seq, witness) order.
    pub async fn cosignatures_after(
        &self,
        seq: i64,
        through: i64,
        limit: u32,
    ) -> Result<Vec<crate::query::Cosignature>, StoreError> {
        self.with(move |conn| super::cosignatures::after(conn, seq, through, limit)).await
    }

    /// The seq of the last checkpoint event any witness cosigned, if any.
    pub async fn last_cosigned(&self) -> Result<Option<i64>, StoreError> {
        self.with(super::cosignatures::last).await
    }

    /// A checkpoint event's note with its witnesses' cosignature lines appended: the note a
    /// signed-note verifier opens with the keys it trusts.
    pub async fn cosigned_note(&self, checkpoint: &Event) -> Result<String, StoreError> {
        let lines = self.cosignatures(checkpoint.seq).await?.into_iter().map(|c| c.line);
        let note = checkpoint.record.note.clone().unwrap_or_default();
        Ok(lines.fold(note, |note, line| note + &line))
    }

    /// The largest tree size the witness with verifier key `witness` cosigned, 0 if none.
    pub async fn cosigned_size(&self, witness: &str) -> Result<u64, StoreError> {
        let witness = witness.to_owned();
        self.with(move |conn| super::cosignatures::cosigned_size(conn, &witness)).await
    }

    /// Closes the idle connections.
    pub async fn close(&self) {
        self.connections.idle.lock().unwrap_or_else(PoisonError::into_inner).clear();
    }
}

/// The link of a row of [`SELECT`]: its content is hashed straight from the row's cells.
fn link(row: &Row<'_>) -> rusqlite::Result<Link> {
    let cells = row::cells(row)?;
    let stored = |name: &str| match cells[position(name)] {
        Some(crate::trail::Value::Text(hex)) => decode_hex(hex),
        _ => None,
    };
    let (prev_hash, hash) = (stored("prev_hash"), stored("hash"));
    let content_matches = match (prev_hash, hash) {
        (Some(prev), Some(hash)) => hash_cells(&prev, &cells) == hash,
        _ => false,
    };
    // Hashed here, on the reading thread, so that the walk only adds it to the tree.
    let leaf = leaf_hash(&hash.unwrap_or_default());
    Ok(Link { seq: row.get("seq")?, prev_hash, hash, content_matches, leaf })
}

/// Runs `sql` with `bound`, then `values` (the filter's), then the number of events `events`
/// still lacks of `limit`, and appends what it reads.
fn read_into(
    tx: &Connection,
    sql: &str,
    mut bound: Vec<Value>,
    values: &[Value],
    limit: u32,
    events: &mut Vec<Event>,
) -> rusqlite::Result<()> {
    let left = usize::try_from(limit).unwrap_or(usize::MAX).saturating_sub(events.len());
    if left == 0 {
        return Ok(());
    }
    bound.extend(values.iter().cloned());
    bound.push(Value::Integer(i64::try_from(left).unwrap_or(i64::MAX)));
    let mut stmt = tx.prepare_cached(sql)?;
    for event in stmt.query_map(params_from_iter(bound), row::event)? {
        events.push(event?);
    }
    Ok(())
}

/// A `SELECT` of `column` (as `c`) from every event matching the filter (`conditions` with
/// their `values`): through the index up to its watermark and the tail after it when `plan`
/// leads, the events alone otherwise; with its parameters. Run inside the caller's
/// transaction, which it reads the watermark in.
fn matching(
    tx: &Connection,
    plan: Option<&Plan>,
    column: &str,
    conditions: &str,
    values: &[Value],
) -> rusqlite::Result<(String, Vec<Value>)> {
    let watermark = match plan {
        Some(_) => index::watermark(tx)?,
        None => None,
    };
    let (Some(plan), Some(watermark)) = (plan, watermark) else {
        let sql = format!("SELECT {column} AS c FROM events WHERE 1{conditions}");
        return Ok((sql, values.to_vec()));
    };
    let watermark = Value::Integer(watermark);
    let sql = format!(
        "SELECT {column} AS c {} AND at <= ?{conditions}
         UNION ALL SELECT {column} FROM events WHERE seq > ?{conditions}",
        plan.from()
    );
    let mut bound = plan.values().to_vec();
    bound.push(watermark.clone());
    bound.extend(values.iter().cloned());
    bound.push(watermark);
    bound.extend(values.iter().cloned());
    Ok((sql, bound))
}

/// `filter` as ` AND …` conditions with `?` placeholders, and their values in order.
fn conditions(filter: &Filter) -> (String, Vec<Value>) {
    let (sql, values) = crate::query::filter_sql(filter);
    (sql, values.into_iter().map(Value::Text).collect())
}
