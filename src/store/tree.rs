//! The Merkle tree's nodes in SQLite (`tree_nodes`): reads and writes only; the hashing and the
//! proofs are `trail::Frontier` and `trail::Subtrees`.

use std::collections::HashMap;

use rusqlite::{Connection, OptionalExtension, params};

use super::StoreError;
use crate::trail::{Frontier, Hash, Node, decode};

/// Events whose leaves are added per transaction when a tree is built for an existing trail.
const BUILD_BATCH: i64 = 10_000;

/// The schema version that keys the nodes by the leaf that completed them (migration 0007).
const KEYED_BY_LEAF: i64 = 7;

/// Whether the trail still keys its nodes by level and index: a trail written before migration
/// 0007 that an auditor's command opens read-only, before any server has migrated it.
fn keyed_by_level(conn: &Connection) -> rusqlite::Result<bool> {
    let version: i64 = conn.pragma_query_value(None, "user_version", |row| row.get(0))?;
    Ok(version < KEYED_BY_LEAF)
}

/// How many leaves the stored tree has: every leaf completes at least itself.
pub(super) fn size(conn: &Connection) -> rusqlite::Result<u64> {
    let sql = match keyed_by_level(conn)? {
        true => "SELECT max(idx) FROM tree_nodes WHERE level = 0",
        false => "SELECT max(leaf) FROM tree_nodes",
    };
    let last: Option<i64> = conn.query_row(sql, [], |row| row.get(0))?;
    Ok(last.map_or(0, |i| i.unsigned_abs() + 1))
}

/// The row key of a node: the leaf that completed it, and its level.
fn key(node: Node) -> Result<(i64, u32), StoreError> {
    let out_of_range = StoreError::Tree("index out of range");
    let last = node
        .index
        .checked_add(1)
        .and_then(|end| end.checked_shl(node.level).filter(|e| e >> node.level == end))
        .and_then(|end| i64::try_from(end - 1).ok())
        .ok_or(out_of_range)?;
    Ok((last, node.level))
}

/// A stored perfect node's hash.
pub(super) fn node(conn: &Connection, node: Node) -> Result<Hash, StoreError> {
    stored(conn, keyed_by_level(conn)?, node)
}

/// A stored perfect node's hash, the layout of the table known.
fn stored(conn: &Connection, keyed_by_level: bool, node: Node) -> Result<Hash, StoreError> {
    let (leaf, level) = key(node)?;
    let (sql, first) = match keyed_by_level {
        true => ("SELECT hash FROM tree_nodes WHERE idx = ?1 AND level = ?2", node.index),
        false => {
            ("SELECT hash FROM tree_nodes WHERE leaf = ?1 AND level = ?2", leaf.unsigned_abs())
        }
    };
    let first = i64::try_from(first).map_err(|_| StoreError::Tree("index out of range"))?;
    let hash: Option<Vec<u8>> =
        conn.prepare_cached(sql)?.query_row(params![first, level], |row| row.get(0)).optional()?;
    hash.and_then(|h| h.try_into().ok()).ok_or(StoreError::NodeMissing(node))
}

/// Nodes of a pruned range the file no longer holds, from elsewhere (the archive's tiles, each
/// checked against the nodes the file kept).
pub type Known = HashMap<Node, Hash>;

/// The nodes one proof, or one batch of proofs, reads: in one read transaction (one snapshot,
/// one lock, the table's layout read once), each node read once however many proofs share it.
pub(super) struct Nodes<'c> {
    conn: &'c Connection,
    keyed_by_level: bool,
    known: &'c Known,
    read: HashMap<Node, Hash>,
}

impl<'c> Nodes<'c> {
    /// The nodes of the trail `conn` reads (inside a transaction of the caller's), and below
    /// what a prune took, those `known`.
    pub(super) fn new(conn: &'c Connection, known: &'c Known) -> Result<Self, StoreError> {
        let keyed_by_level = keyed_by_level(conn)?;
        Ok(Self { conn, keyed_by_level, known, read: HashMap::new() })
    }

    /// A perfect node's hash: stored, or `known`, or made from its children where a prune took
    /// it (a node between the levels of hash tiles, 8, 16, …, which the file keeps; below height
    /// 8, down to leaves only `known` may have).
    pub(super) fn get(&mut self, node: Node) -> Result<Hash, StoreError> {
        if let Some(hash) = self.read.get(&node) {
            return Ok(*hash);
        }
        let hash = match (stored(self.conn, self.keyed_by_level, node), self.known.get(&node)) {
            (Err(StoreError::NodeMissing(_)), Some(hash)) => *hash,
            (Err(StoreError::NodeMissing(_)), None) if !node.level.is_multiple_of(8) => {
                let child = |index| Node { level: node.level - 1, index };
                let left = self.get(child(node.index * 2))?;
                let right = self.get(child(node.index * 2 + 1))?;
                crate::trail::node_hash(&left, &right)
            }
            (stored, _) => stored?,
        };
        self.read.insert(node, hash);
        Ok(hash)
    }
}

/// Stores the nodes an appended leaf completed.
pub(super) fn insert(conn: &Connection, nodes: &[(Node, Hash)]) -> Result<(), StoreError> {
    let mut stmt =
        conn.prepare_cached("INSERT INTO tree_nodes (leaf, level, hash) VALUES (?1, ?2, ?3)")?;
    for (node, hash) in nodes {
        let (leaf, level) = key(*node)?;
        stmt.execute(params![leaf, level, hash.as_slice()])?;
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trail::Frontier;

    #[test]
    fn a_node_is_keyed_by_the_leaf_that_completed_it() {
        assert_eq!(key(Node { level: 0, index: 5 }).unwrap(), (5, 0));
        assert_eq!(key(Node { level: 2, index: 1 }).unwrap(), (7, 2));
        assert_eq!(key(Node { level: 3, index: 0 }).unwrap(), (7, 3));
        assert!(key(Node { level: 1, index: u64::MAX >> 1 }).is_err());
    }

    #[test]
    fn a_tree_stored_by_level_reads_the_same_before_and_after_the_migration_rekeys_it() {
        let dir = tempfile::tempdir().unwrap();
        let conn = Connection::open(dir.path().join("t.db")).unwrap();
        for (_, sql) in &super::super::migrate::MIGRATIONS[..6] {
            conn.execute_batch(sql).unwrap();
        }
        let mut frontier = Frontier::default();
        let mut made = Vec::new();
        for i in 0..13u8 {
            for (node, hash) in frontier.push(&[i; 32]) {
                conn.execute(
                    "INSERT INTO tree_nodes (level, idx, hash) VALUES (?1, ?2, ?3)",
                    params![node.level, i64::try_from(node.index).unwrap(), hash.as_slice()],
                )
                .unwrap();
                made.push((node, hash));
            }
        }

        conn.pragma_update(None, "user_version", 6).unwrap();

        // Read as it is, as an auditor's read-only command reads a trail no server migrated,
        // then after the migration.
        for migrated in [false, true] {
            if migrated {
                conn.execute_batch(super::super::migrate::MIGRATIONS[6].1).unwrap();
                conn.pragma_update(None, "user_version", 7).unwrap();
            }
            assert_eq!(size(&conn).unwrap(), 13);
            for (stored, hash) in &made {
                assert_eq!(node(&conn, *stored).unwrap(), *hash, "{stored:?}, {migrated}");
            }
            let again = Frontier::of(13, |n| node(&conn, n)).unwrap();
            assert_eq!(again.root(), frontier.root());
        }
    }
}
