//! The SQLite file behind the trail. One writer thread owns the only write connection and
//! commits events in groups (`writer.rs`); everything else reads through a read-only pool
//! (`reader.rs`), so queries and verification never block writes. A third connection
//! checkpoints the WAL in the background (`checkpoint.rs`).

mod checkpoint;
mod reader;
mod writer;

use std::path::Path;
use std::sync::Arc;

use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePoolOptions};

pub use reader::{Head, PAGE, Reader, Stats};
pub use writer::{Lookup, PairedDecision, Writer, WriterThread};

use crate::config::{Durability, WriterConfig};
use crate::metrics::Metrics;

/// What can go wrong with the trail's file. The messages are for logs and operators; clients
/// only ever learn that the trail is unavailable.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("cannot open the trail `{path}`: {source}")]
    Open { path: String, source: sqlx::Error },
    #[error("cannot migrate the trail: {0}")]
    Migrate(#[from] sqlx::migrate::MigrateError),
    #[error("trail writer: {0}")]
    Sqlite(#[from] rusqlite::Error),
    #[error("the commit failed (see the writer's log)")]
    CommitFailed,
    #[error("the commit did not finish in time")]
    Timeout,
    #[error("the writer's queue is full")]
    Overloaded,
    #[error("the trail writer has stopped")]
    Closed,
    #[error("cannot start a thread: {0}")]
    Thread(String),
    #[error("no trail at `{0}`")]
    Missing(String),
}

/// A cheaply cloneable handle on the trail: cloning is shallow.
#[derive(Debug, Clone)]
pub struct Store {
    /// Appends events.
    pub writer: Writer,
    /// Reads events.
    pub reader: Reader,
}

impl Store {
    /// Opens (creating and migrating when needed) the trail at `path` and starts its writer.
    /// The returned [`WriterThread`] finishes once every [`Store`] clone is dropped and the
    /// queue is drained.
    pub async fn open(
        path: &Path,
        durability: Durability,
        config: &WriterConfig,
        metrics: Arc<Metrics>,
    ) -> Result<(Self, WriterThread), StoreError> {
        migrate(path).await?;
        let (writer, thread) = Writer::start(path, durability, config, metrics)?;
        let reader = Reader::open(path).await?;
        Ok((Self { writer, reader }, thread))
    }
}

/// Creates the file when missing and applies `migrations/`.
async fn migrate(path: &Path) -> Result<(), StoreError> {
    let options = SqliteConnectOptions::new()
        .filename(path)
        .create_if_missing(true)
        .journal_mode(SqliteJournalMode::Wal);
    // A one-connection pool rather than a bare connection: `Migrator::run(&mut conn)` makes the
    // caller's future fail rustc's `Send` check ("Acquire is not general enough").
    let pool = SqlitePoolOptions::new()
        .max_connections(1)
        .connect_with(options)
        .await
        .map_err(|source| StoreError::Open { path: path.display().to_string(), source })?;
    let migrated = sqlx::migrate!("./migrations").run(&pool).await;
    pool.close().await;
    Ok(migrated?)
}
