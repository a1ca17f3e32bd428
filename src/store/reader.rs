//! Reads of the trail through a pool of read-only connections. Long reads (exports,
//! verification) go page by page in `seq` order, each page its own short read transaction, so
//! that a reader never holds back the WAL checkpoints of a busy writer.

use std::path::Path;
use std::time::Duration;

use sqlx::sqlite::{SqliteConnectOptions, SqlitePoolOptions};
use sqlx::{QueryBuilder, Sqlite, SqlitePool};

use super::StoreError;
use crate::request::Filter;
use crate::trail::Event;

/// Events read per page by exports and verification.
pub const PAGE: u32 = 1000;

/// A cheaply cloneable read-only handle.
#[derive(Debug, Clone)]
pub struct Reader {
    pool: SqlitePool,
}

/// Counts over a time range, each list largest first.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Stats {
    pub total: u64,
    pub by_outcome: Vec<(String, u64)>,
    pub by_tool: Vec<(String, u64)>,
    pub by_actor: Vec<(String, u64)>,
    pub by_kind: Vec<(String, u64)>,
}

/// The last event of the trail.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Head {
    pub seq: i64,
    pub hash: String,
    pub ts: String,
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

    /// At most `limit` events matching `filter` with `seq` above `after`, in `seq` order.
    pub async fn query(
        &self,
        filter: &Filter,
        after: i64,
        limit: u32,
    ) -> Result<Vec<Event>, StoreError> {
        let mut query = QueryBuilder::new("SELECT * FROM events WHERE seq > ");
        query.push_bind(after);
        push_filter(&mut query, filter);
        query.push(" ORDER BY seq LIMIT ").push_bind(i64::from(limit));
        Ok(query.build_query_as::<Event>().fetch_all(&self.pool).await?)
    }

    /// How many events match `filter`.
    pub async fn count(&self, filter: &Filter) -> Result<u64, StoreError> {
        let mut query = QueryBuilder::new("SELECT count(*) FROM events WHERE 1");
        push_filter(&mut query, filter);
        let count: i64 = query.build_query_scalar().fetch_one(&self.pool).await?;
        Ok(count.unsigned_abs())
    }

    /// The event at `seq`, if there is one.
    pub async fn event(&self, seq: i64) -> Result<Option<Event>, StoreError> {
        Ok(sqlx::query_as("SELECT * FROM events WHERE seq = ?1")
            .bind(seq)
            .fetch_optional(&self.pool)
            .await?)
    }

    /// The last event, if the trail has any.
    pub async fn head(&self) -> Result<Option<Head>, StoreError> {
        let row: Option<(i64, String, String)> =
            sqlx::query_as("SELECT seq, hash, ts FROM events ORDER BY seq DESC LIMIT 1")
                .fetch_optional(&self.pool)
                .await?;
        Ok(row.map(|(seq, hash, ts)| Head { seq, hash, ts }))
    }

    /// Counts of the events in a time range, by outcome, tool, actor and kind.
    pub async fn stats(
        &self,
        since: Option<&str>,
        until: Option<&str>,
    ) -> Result<Stats, StoreError> {
        let range = Filter {
            since: since.map(str::to_owned),
            until: until.map(str::to_owned),
            ..Filter::default()
        };
        let mut stats = Stats { total: self.count(&range).await?, ..Stats::default() };
        for (column, counts) in [
            ("outcome", &mut stats.by_outcome),
            ("tool", &mut stats.by_tool),
            ("actor_id", &mut stats.by_actor),
            ("kind", &mut stats.by_kind),
        ] {
            // `column` is one of the literals above, never input.
            let mut query = QueryBuilder::new(format!(
                "SELECT {column}, count(*) FROM events WHERE {column} IS NOT NULL"
            ));
            push_filter(&mut query, &range);
            query.push(format!(" GROUP BY {column} ORDER BY count(*) DESC, {column}"));
            let rows: Vec<(String, i64)> = query.build_query_as().fetch_all(&self.pool).await?;
            *counts = rows.into_iter().map(|(key, n)| (key, n.unsigned_abs())).collect();
        }
        Ok(stats)
    }

    /// Closes the pool's connections.
    pub async fn close(&self) {
        self.pool.close().await;
    }
}

fn push_filter(query: &mut QueryBuilder<Sqlite>, filter: &Filter) {
    let conditions = [
        ("ts >= ", &filter.since),
        ("ts < ", &filter.until),
        ("session_id = ", &filter.session_id),
        ("actor_id = ", &filter.actor_id),
        ("tool = ", &filter.tool),
        ("action = ", &filter.action),
        ("outcome = ", &filter.outcome),
        ("kind = ", &filter.kind),
        ("decision_id = ", &filter.decision_id),
    ];
    for (condition, value) in conditions {
        if let Some(value) = value {
            query.push(" AND ").push(condition).push_bind(value.clone());
        }
    }
}
