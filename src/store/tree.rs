//! The Merkle tree's nodes in SQLite (`tree_nodes`): reads and writes only; the hashing and the
//! proofs are `trail::Frontier` and `trail::Subtrees`.

use rusqlite::{Connection, OptionalExtension, params};

use super::StoreError;
use crate::trail::{Frontier, Hash, Node, decode};

/// Events whose leaves are added per transaction when a tree is built for an existing trail.
const BUILD_BATCH: i64 = 10_000;

/// How many leaves the stored tree has.
pub(super) fn size(conn: &Connection) -> rusqlite::Result<u64> {
    let last: Option<i64> =
        conn.query_row("SELECT max(idx) FROM tree_nodes WHERE level = 0", [], |row| row.get(0))?;
    Ok(last.map_or(0, |i| i.unsigned_abs() + 1))
}

/// A stored perfect node's hash.
pub(super) fn node(conn: &Connection, node: Node) -> Result<Hash, StoreError> {
    let index = i64::try_from(node.index).map_err(|_| StoreError::Tree("index out of range"))?;
    let hash: Option<Vec<u8>> = conn
        .prepare_cached("SELECT hash FROM tree_nodes WHERE level = ?1 AND idx = ?2")?
        .query_row(params![node.level, index], |row| row.get(0))
        .optional()?;
    hash.and_then(|h| h.try_into().ok()).ok_or(StoreError::Tree("a node of the tree is missing"))
}

/// Stores the nodes an appended leaf completed.
pub(super) fn insert(conn: &Connection, nodes: &[(Node, Hash)]) -> Result<(), StoreError> {
    let mut stmt =
        conn.prepare_cached("INSERT INTO tree_nodes (level, idx, hash) VALUES (?1, ?2, ?3)")?;
    for (node, hash) in nodes {
        let index =
            i64::try_from(node.index).map_err(|_| StoreError::Tree("index out of range"))?;
        stmt.execute(params![node.level, index, hash.as_slice()])?;
    }
    Ok(())
}

/// The tree's frontier, after adding the leaves of every event it does not cover yet (a trail
/// from before the tree, or one whose tree was lost), a batch per transaction.
pub(super) fn catch_up(conn: &mut Connection, events: i64) -> Result<Frontier, StoreError> {
    let size = size(conn)?;
    let mut frontier = Frontier::of(size, |n| node(conn, n))?;
    let covered = i64::try_from(size).map_err(|_| StoreError::Tree("size out of range"))?;
    if covered > events {
        return Err(StoreError::Tree("the tree has more leaves than the trail has events"));
    }
    if covered < events {
        tracing::info!(covered, events, "building the Merkle tree of the trail");
    }
    let mut next = covered + 1;
    while next <= events {
        let tx = conn.transaction()?;
        let last = (next + BUILD_BATCH - 1).min(events);
        {
            let mut stmt = tx.prepare(
                "SELECT seq, hash FROM events WHERE seq >= ?1 AND seq <= ?2 ORDER BY seq",
            )?;
            let mut rows = stmt.query(params![next, last])?;
            let mut expected = next;
            while let Some(row) = rows.next()? {
                let (seq, hash): (i64, String) = (row.get(0)?, row.get(1)?);
                let hash =
                    decode(&hash).filter(|_| seq == expected).ok_or(StoreError::Corrupt {
                        seq,
                        what: "hash (or seq), so the tree cannot be built",
                    })?;
                insert(&tx, &frontier.push(&hash))?;
                expected += 1;
            }
        }
        tx.commit()?;
        next = last + 1;
    }
    Ok(frontier)
}
