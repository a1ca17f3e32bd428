//! The schema: the files of `migrations/`, applied in order, each once, through the same driver
//! as everything else (rusqlite). The version applied is SQLite's `user_version`. Trails made
//! before this migrator (by sqlx) have version 0 there and their history in
//! `_sqlx_migrations`, which is read once and carried over.

use std::path::Path;

use rusqlite::{Connection, OptionalExtension, TransactionBehavior};

use super::StoreError;

/// Every migration, by its number, in order (`migrations/NNNN_*.sql`).
pub(super) const MIGRATIONS: [(i64, &str); 9] = [
    (1, include_str!("../../migrations/0001_create_events.sql")),
    (2, include_str!("../../migrations/0002_index_idempotency_keys.sql")),
    (3, include_str!("../../migrations/0003_create_tree_nodes.sql")),
    (4, include_str!("../../migrations/0004_add_note.sql")),
    (5, include_str!("../../migrations/0005_index_checkpoints.sql")),
    (6, include_str!("../../migrations/0006_create_cosignatures.sql")),
    (7, include_str!("../../migrations/0007_key_tree_nodes_by_leaf.sql")),
    (8, include_str!("../../migrations/0008_index_off_the_commit_path.sql")),
    (9, include_str!("../../migrations/0009_prune_archived_events.sql")),
];

/// Creates the file when missing and applies the migrations it lacks, in one transaction.
pub(super) fn migrate(path: &Path) -> Result<(), StoreError> {
    let mut conn = Connection::open(path)?;
    // A new file gives the pages a prune frees back to the file system, a few at a time
    // (`PRAGMA incremental_vacuum`); this must be chosen before the first table. An older
    // file reuses them for new events instead (docs/operations.md, "Retention").
    if fresh(&conn)? {
        conn.pragma_update(None, "auto_vacuum", "INCREMENTAL")?;
    }
    conn.pragma_update(None, "journal_mode", "WAL")?;
    let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
    let mut applied: i64 = tx.pragma_query_value(None, "user_version", |row| row.get(0))?;
    if applied == 0 {
        applied = sqlx_history(&tx)?;
    }
    let mut version = applied;
    for (number, sql) in MIGRATIONS.iter().filter(|(number, _)| *number > applied) {
        tx.execute_batch(sql).map_err(|source| StoreError::Migrate { number: *number, source })?;
        version = *number;
    }
    tx.pragma_update(None, "user_version", version)?;
    tx.commit()?;
    Ok(())
}

/// Whether the file holds no table yet.
fn fresh(conn: &Connection) -> rusqlite::Result<bool> {
    let tables: i64 = conn.query_row("SELECT count(*) FROM sqlite_master", [], |row| row.get(0))?;
    Ok(tables == 0)
}

/// The last migration sqlx recorded as applied, or 0.
fn sqlx_history(conn: &Connection) -> rusqlite::Result<i64> {
    let recorded = conn
        .query_row(
            "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = '_sqlx_migrations'",
            [],
            |_| Ok(()),
        )
        .optional()?;
    if recorded.is_none() {
        return Ok(0);
    }
    conn.query_row(
        "SELECT coalesce(max(version), 0) FROM _sqlx_migrations WHERE success",
        [],
        |row| row.get(0),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_file_of_the_migrations_folder_is_listed_in_order() {
        let folder = concat!(env!("CARGO_MANIFEST_DIR"), "/migrations");
        let mut files: Vec<_> = std::fs::read_dir(folder)
            .unwrap()
            .map(|entry| entry.unwrap().file_name().into_string().unwrap())
            // `postgres/` holds the fleet store's own migrations (crate::fleet::schema).
            .filter(|name| name.ends_with(".sql"))
            .collect();
        files.sort();
        let numbers: Vec<i64> = files.iter().map(|f| f[..4].parse().unwrap()).collect();
        let listed: Vec<i64> = MIGRATIONS.iter().map(|(n, _)| *n).collect();
        assert_eq!(numbers, listed);
        for (file, (_, sql)) in files.iter().zip(MIGRATIONS) {
            assert_eq!(std::fs::read_to_string(format!("{folder}/{file}")).unwrap(), sql);
        }
    }

    #[test]
    fn migrating_twice_applies_each_migration_once() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.db");
        migrate(&path).unwrap();
        migrate(&path).unwrap();
        let conn = Connection::open(&path).unwrap();
        let version: i64 = conn.pragma_query_value(None, "user_version", |r| r.get(0)).unwrap();
        assert_eq!(version, MIGRATIONS.len() as i64);
    }

    #[test]
    fn a_trail_migrated_by_sqlx_is_not_migrated_again() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.db");
        let conn = Connection::open(&path).unwrap();
        conn.execute_batch(MIGRATIONS[0].1).unwrap();
        conn.execute_batch(MIGRATIONS[1].1).unwrap();
        conn.execute_batch(
            "CREATE TABLE _sqlx_migrations (version BIGINT PRIMARY KEY, success BOOLEAN NOT NULL);
             INSERT INTO _sqlx_migrations VALUES (1, TRUE), (2, TRUE);",
        )
        .unwrap();
        drop(conn);
        migrate(&path).unwrap();
        let conn = Connection::open(&path).unwrap();
        let version: i64 = conn.pragma_query_value(None, "user_version", |r| r.get(0)).unwrap();
        assert_eq!(
            version,
            MIGRATIONS.len() as i64,
            "only the migrations after sqlx's are applied"
        );
    }
}
