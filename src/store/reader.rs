//! Reads of the trail through a pool of read-only connections.

use std::path::Path;
use std::time::Duration;

use futures_util::stream::BoxStream;
use sqlx::SqlitePool;
use sqlx::sqlite::{SqliteConnectOptions, SqlitePoolOptions};

use super::StoreError;
use crate::trail::Event;

/// A cheaply cloneable read-only handle.
#[derive(Debug, Clone)]
pub struct Reader {
    pool: SqlitePool,
}

impl Reader {
    /// Opens an existing trail read-only; it never creates, migrates or writes the file.
    pub async fn open(path: &Path) -> Result<Self, StoreError> {
        let options = SqliteConnectOptions::new()
            .filename(path)
            .read_only(true)
            .busy_timeout(Duration::from_secs(5));
        let pool = SqlitePoolOptions::new()
            .max_connections(4)
            .connect_with(options)
            .await
            .map_err(|source| StoreError::Open { path: path.display().to_string(), source })?;
        Ok(Self { pool })
    }

    /// Every event in `seq` order, streamed.
    pub fn events(&self) -> BoxStream<'_, Result<Event, sqlx::Error>> {
        sqlx::query_as::<_, Event>("SELECT * FROM events ORDER BY seq").fetch(&self.pool)
    }

    /// Closes the pool's connections.
    pub async fn close(&self) {
        self.pool.close().await;
    }
}
