//! The fleet store's schema: `migrations/postgres/`, embedded in the binary and applied with
//! sqlx's migrator (its `_sqlx_migrations` table), by the role that is to own the tables and
//! the partitions. The first two migrations are the store as it was when PostgreSQL checked
//! each batch itself; the third drops those checks (the ingest service makes them) and
//! partitions the events, rewriting no row; the fourth records legal holds and what retention
//! dropped (`retention::fleet`). A store is always migrated through all of them.

use sqlx::migrate::{MigrateError, Migration, MigrationType, Migrator};
use sqlx::{PgPool, SqlSafeStr};

const ED25519: &str = include_str!("../../migrations/postgres/0001_ed25519.sql");
const FLEET: &str = include_str!("../../migrations/postgres/0002_fleet.sql");
const INGEST: &str = include_str!("../../migrations/postgres/0003_ingest_service.sql");
const RETENTION: &str = include_str!("../../migrations/postgres/0004_retention.sql");

/// The migrations, in order.
fn migrator() -> Migrator {
    let migration = |version, name: &str, sql: &'static str| {
        Migration::new(
            version,
            name.to_owned().into(),
            MigrationType::Simple,
            sql.into_sql_str(),
            false,
        )
    };
    Migrator::with_migrations(vec![
        migration(1, "ed25519", ED25519),
        migration(2, "fleet", FLEET),
        migration(3, "ingest service", INGEST),
        migration(4, "retention", RETENTION),
    ])
}

/// Applies the migrations the store does not have yet.
pub async fn migrate(pool: &PgPool) -> Result<(), MigrateError> {
    migrator().run(pool).await
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trail::{COLUMNS, Type};

    #[test]
    fn every_file_of_the_postgres_folder_is_embedded() {
        let folder = concat!(env!("CARGO_MANIFEST_DIR"), "/migrations/postgres");
        let mut files: Vec<_> =
            std::fs::read_dir(folder).unwrap().map(|e| e.unwrap().file_name()).collect();
        files.sort();
        assert_eq!(
            files,
            ["0001_ed25519.sql", "0002_fleet.sql", "0003_ingest_service.sql", "0004_retention.sql"],
            "a new file needs its line in migrator()"
        );
        assert_eq!(migrator().migrations.len(), files.len());
    }

    /// The table the third migration partitions is the second's, whose columns must be the
    /// trail's own (the ingest service copies events into them in that order).
    #[test]
    fn the_events_table_has_the_trails_columns() {
        let table = &FLEET[FLEET.find("CREATE TABLE fleet_events").unwrap()..];
        let table = &table[..table.find(");").unwrap()];
        let names: Vec<&str> = table
            .lines()
            .skip(2)
            .filter_map(|l| l.split_whitespace().next())
            .filter(|name| *name != "received_at" && *name != "PRIMARY")
            .collect();
        let trail: Vec<_> = COLUMNS.iter().map(|c| c.name).collect();
        assert_eq!(names, trail, "fleet_events is the node, then the trail's columns in order");
        for column in COLUMNS {
            let ty = match column.ty {
                Type::Integer => "BIGINT",
                Type::Text => "TEXT",
            };
            let line = table.lines().find(|l| l.split_whitespace().next() == Some(column.name));
            let line = line.unwrap_or_else(|| panic!("fleet_events has no {}", column.name));
            assert!(line.contains(ty), "{}: {line}", column.name);
            assert_eq!(line.contains("NOT NULL"), !column.nullable, "{line}");
        }
        assert!(INGEST.contains("CREATE TABLE fleet_events (LIKE fleet_events_before"));
    }
}
