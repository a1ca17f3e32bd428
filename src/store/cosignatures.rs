//! Witnesses' cosignatures of the trail's checkpoints in SQLite (`cosignatures`): reads and
//! writes only; what a cosignature is and how it verifies is `trail::cosignature`'s.

use rusqlite::{Connection, params};

use crate::query::Cosignature;

fn int(n: u64) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

/// Keeps a cosignature; one already kept for the same checkpoint and witness stays as it is.
pub(super) fn insert(conn: &Connection, c: &Cosignature) -> rusqlite::Result<()> {
    conn.prepare_cached(
        "INSERT OR IGNORE INTO cosignatures (seq, witness, size, time, line)
         VALUES (?1, ?2, ?3, ?4, ?5)",
    )?
    .execute(params![c.seq, c.witness, int(c.size), int(c.time), c.line])?;
    Ok(())
}

/// The cosignatures of the checkpoint event at `seq`, by witness.
pub(super) fn of(conn: &Connection, seq: i64) -> rusqlite::Result<Vec<Cosignature>> {
    let mut stmt = conn.prepare_cached(
        "SELECT seq, witness, size, time, line FROM cosignatures WHERE seq = ?1 ORDER BY witness",
    )?;
    stmt.query_map([seq], read)?.collect()
}

/// At most `limit` cosignatures of checkpoint events after `seq` and up to `through`, in
/// (seq, witness) order.
pub(super) fn after(
    conn: &Connection,
    seq: i64,
    through: i64,
    limit: u32,
) -> rusqlite::Result<Vec<Cosignature>> {
    let mut stmt = conn.prepare_cached(
        "SELECT seq, witness, size, time, line FROM cosignatures WHERE seq > ?1 AND seq <= ?2
         ORDER BY seq, witness LIMIT ?3",
    )?;
    stmt.query_map(params![seq, through, limit], read)?.collect()
}

/// The seq of the last checkpoint event any witness cosigned, if any.
pub(super) fn last(conn: &Connection) -> rusqlite::Result<Option<i64>> {
    conn.prepare_cached("SELECT max(seq) FROM cosignatures")?.query_row([], |row| row.get(0))
}

fn read(row: &rusqlite::Row<'_>) -> rusqlite::Result<Cosignature> {
    Ok(Cosignature {
        seq: row.get(0)?,
        witness: row.get(1)?,
        size: row.get::<_, i64>(2)?.unsigned_abs(),
        time: row.get::<_, i64>(3)?.unsigned_abs(),
        line: row.get(4)?,
    })
}

/// The largest tree size `witness` cosigned, 0 if none.
pub(super) fn cosigned_size(conn: &Connection, witness: &str) -> rusqlite::Result<u64> {
    let size: Option<i64> = conn
        .prepare_cached("SELECT max(size) FROM cosignatures WHERE witness = ?1")?
        .query_row([witness], |row| row.get(0))?;
    Ok(size.map_or(0, i64::unsigned_abs))
}
