//! The fleet store's schema: `migrations/postgres/`, embedded in the binary and applied with
//! sqlx's migrator (its `_sqlx_migrations` table), by the role that is to own the tables and
//! the `fleet_ingest` function (never a shipper's).

use sqlx::migrate::{MigrateError, Migration, MigrationType, Migrator};
use sqlx::{PgPool, SqlSafeStr};

const ED25519: &str = include_str!("../../migrations/postgres/0001_ed25519.sql");
const FLEET: &str = include_str!("../../migrations/postgres/0002_fleet.sql");

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
    Migrator::with_migrations(vec![migration(1, "ed25519", ED25519), migration(2, "fleet", FLEET)])
}

/// Applies the migrations the store does not have yet.
pub async fn migrate(pool: &PgPool) -> Result<(), MigrateError> {
    migrator().run(pool).await
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trail::{COLUMNS, Type, hashed_columns};

    #[test]
    fn every_file_of_the_postgres_folder_is_embedded() {
        let folder = concat!(env!("CARGO_MANIFEST_DIR"), "/migrations/postgres");
        let mut files: Vec<_> =
            std::fs::read_dir(folder).unwrap().map(|e| e.unwrap().file_name()).collect();
        files.sort();
        assert_eq!(
            files,
            ["0001_ed25519.sql", "0002_fleet.sql"],
            "a new file needs its line in migrator()"
        );
        assert_eq!(migrator().migrations.len(), files.len());
    }

    /// The SQL spells the trail's columns four times (the type a batch is made of, the table,
    /// the hash, the insert); each must be the trail's own.
    #[test]
    fn the_schema_spells_the_trails_columns_and_encoding() {
        let table = &FLEET[FLEET.find("CREATE TABLE fleet_events").unwrap()..];
        let table = &table[..table.find(");").unwrap()];
        let record = &FLEET[FLEET.find("CREATE TYPE fleet_event AS").unwrap()..];
        let record = &record[..record.find(");").unwrap()];
        let names = |sql: &str| -> Vec<String> {
            let lines = sql.lines().skip(1).filter_map(|l| l.split_whitespace().next());
            lines.map(|name| name.to_owned()).collect()
        };
        let trail: Vec<_> = COLUMNS.iter().map(|c| c.name.to_owned()).collect();
        assert_eq!(names(record), trail, "fleet_event is the trail's columns in order");
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
        let hash = &FLEET[FLEET.find("CREATE FUNCTION fleet_batch_hashes").unwrap()..];
        let hash = &hash[..hash.find("$$;").unwrap()];
        let encoded: Vec<(String, String)> = hash
            .split("ELSE '\\x")
            .skip(1)
            .map(|part| {
                let hex = &part[..part.find('\'').unwrap()];
                let bytes = hex::decode(hex).unwrap();
                let name = String::from_utf8(bytes[1..=usize::from(bytes[0])].to_vec()).unwrap();
                let ty = if bytes[bytes.len() - 1] == 1 { "integer" } else { "text" };
                (name, ty.to_owned())
            })
            .collect();
        let expected: Vec<(String, String)> = hashed_columns()
            .map(|name| {
                let column = COLUMNS.iter().find(|c| c.name == name).unwrap();
                let ty = if column.ty == Type::Integer { "integer" } else { "text" };
                (name.to_owned(), ty.to_owned())
            })
            .collect();
        assert_eq!(encoded, expected);
        let ingest = &FLEET[FLEET.find("CREATE FUNCTION fleet_ingest").unwrap()..];
        let listed = COLUMNS.iter().map(|c| c.name).collect::<Vec<_>>().join(", ");
        let flat: String = ingest.split_whitespace().collect::<Vec<_>>().join(" ");
        assert_eq!(flat.matches(&listed).count(), 1, "the events' column list");
    }
}
