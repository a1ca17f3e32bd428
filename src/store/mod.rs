//! The SQLite file behind the trail, through rusqlite alone. `migrate.rs` applies
//! `migrations/`; one writer thread owns the only write connection and commits events in groups
//! (`writer.rs`); everything else reads through idle read-only connections (`reader.rs`), so
//! queries and verification never block writes; a third connection checkpoints the WAL in the
//! background (`wal.rs`). Witnesses' cosignatures of checkpoints sit beside the events
//! (`cosignatures.rs`). The auditors' index of sessions, actors, tools, decisions and times is
//! a file of its own beside the trail, filled after the commits by a follower (`index/`).
//! Rows are derived from the trail's column table (`row.rs`); the
//! auditor's filter and the tally of activity by minute are `query`'s values, run here as SQL
//! (`tally.rs`). This module does I/O only: the chain step and the hashes are `trail`'s.

mod cosignatures;
pub mod disk;
pub mod index;
mod lock;
mod lookup;
mod migrate;
mod prune;
mod reader;
mod recent;
mod row;
mod tally;
mod tree;
mod wal;
mod writer;

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

pub use lookup::{Lookup, PairedDecision};
pub use prune::{CarriedRead, Pruning, Session, SessionReads};
pub use reader::{PAGE, Proving, Reader};
pub use tree::Known;
pub use writer::{Cadence, Writer, WriterThread, checkpoint_record};

/// How long a connection waits for a lock another one holds before it reports the file busy.
const BUSY_TIMEOUT: Duration = Duration::from_secs(5);

use crate::config::{Durability, WriterConfig};
use crate::metrics::Metrics;

/// What can go wrong with the trail's file. The messages are for logs and operators; clients
/// only ever learn that the trail is unavailable.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("cannot migrate the trail (migration {number}): {source}")]
    Migrate { number: i64, source: rusqlite::Error },
    #[error("the trail's database: {0}")]
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
    #[error("seq {seq}: the stored {what} is not 64 hex digits")]
    Corrupt { seq: i64, what: &'static str },
    #[error("the Merkle tree: {0}")]
    Tree(&'static str),
    /// A node below the levels the trail keeps for a pruned range: its leaves are in the
    /// archive ([`tree::Known`] takes them from there).
    #[error("the Merkle tree: node {} at height {} is not kept here", .0.index, .0.level)]
    NodeMissing(crate::trail::Node),
    #[error(
        "the trail `{trail}` is written by {holder}: one trail has one writer (stop it, or use \
         another --db; read-only commands such as query, verify and export work beside it)"
    )]
    Held { trail: String, holder: String },
    #[error("cannot lock the trail: {0}")]
    Lock(String),
}

impl From<StoreError> for crate::error::Error {
    /// A call the trail could not record is refused: RESOURCE_EXHAUSTED when the writer is
    /// merely behind, UNAVAILABLE otherwise (saying so when the record may still land).
    fn from(error: StoreError) -> Self {
        match error {
            StoreError::Overloaded => Self::Overloaded,
            StoreError::Timeout => Self::Unconfirmed,
            other @ (StoreError::Migrate { .. }
            | StoreError::Sqlite(_)
            | StoreError::CommitFailed
            | StoreError::Closed
            | StoreError::Thread(_)
            | StoreError::Missing(_)
            | StoreError::Corrupt { .. }
            | StoreError::Tree(_)
            | StoreError::NodeMissing(_)
            | StoreError::Held { .. }
            | StoreError::Lock(_)) => Self::Unavailable(other.to_string()),
        }
    }
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
        cadence: Option<Cadence>,
    ) -> Result<(Self, WriterThread), StoreError> {
        let lock = lock::TrailLock::acquire(path)?;
        let owned = path.to_owned();
        tokio::task::spawn_blocking(move || {
            migrate::migrate(&owned)?;
            index::create(&owned).map_err(StoreError::from)
        })
        .await
        .map_err(|e| StoreError::Thread(e.to_string()))??;
        // The index holds every event before the writer starts, so that the lookups a commit
        // makes below what the writer remembers read the index, not a scan of the trail.
        let reader = Reader::open(path).await?;
        index::IndexWriter::open(path)?.catch_up(&reader).await?;
        let (writer, thread) = Writer::start(path, durability, config, metrics, lock, cadence)?;
        Ok((Self { writer, reader }, thread))
    }
}
