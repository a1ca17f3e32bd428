//! Where retention cut each node of the fleet store (`fleet_prunes`), the store's legal holds
//! (`fleet_holds`), and where each node archives its trail: the store's side of
//! `retention::fleet`, which decides what may go. A partition leaves in one transaction with
//! the record of what it took from each node.

use sqlx::{AssertSqlSafe, Row};

use super::store::{FleetError, FleetStore, Partition};

/// What a drop took from one node: seq `first` through `through`, the last one's hash, the
/// node's tree over 1 … `through` as its right edge, the checkpoint event that covered them
/// and the archive they were verified in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cut {
    pub node_id: String,
    pub first: i64,
    pub through: i64,
    pub hash: String,
    pub edge: Vec<Vec<u8>>,
    pub checkpoint: i64,
    pub archive: String,
}

/// A node's events in one partition: its first and last seq there, and how many.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Range {
    pub node_id: String,
    pub first: i64,
    pub through: i64,
    pub count: i64,
}

/// The last legal hold set or released: whether it holds, since when, why and by whom.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hold {
    pub held: bool,
    pub at: String,
    pub reason: String,
    pub by: String,
}

/// Where a node archives its trail: its `[archive] url` and the store's options (a JSON object
/// of strings), and its checkpoint verifier key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Archived {
    pub url: Option<String>,
    pub options: Option<String>,
    pub key: Option<String>,
}

/// A timestamp as the store writes it for people: RFC 3339, UTC, microseconds.
const RFC3339: &str = "to_char(at AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.US\"Z\"')";

impl FleetStore {
    /// Every cut retention made of `node`, in seq order.
    pub async fn cuts(&self, node: &str) -> Result<Vec<Cut>, FleetError> {
        let rows = sqlx::query(
            "SELECT node_id, first_seq, through_seq, through_hash, edge, checkpoint_seq, archive
             FROM fleet_prunes WHERE node_id = $1 ORDER BY through_seq",
        )
        .bind(node)
        .fetch_all(self.pool())
        .await?;
        rows.iter()
            .map(|row| {
                Ok(Cut {
                    node_id: row.try_get(0)?,
                    first: row.try_get(1)?,
                    through: row.try_get(2)?,
                    hash: row.try_get(3)?,
                    edge: row.try_get(4)?,
                    checkpoint: row.try_get(5)?,
                    archive: row.try_get(6)?,
                })
            })
            .collect()
    }

    /// The last cut retention made of `node`, if any.
    pub async fn last_cut(&self, node: &str) -> Result<Option<Cut>, FleetError> {
        Ok(self.cuts(node).await?.pop())
    }

    /// How many events of `node` the store holds at or below `seq`.
    pub async fn held_through(&self, node: &str, seq: i64) -> Result<i64, FleetError> {
        let row = sqlx::query("SELECT count(*) FROM fleet_events WHERE node_id = $1 AND seq <= $2")
            .bind(node)
            .bind(seq)
            .fetch_one(self.pool())
            .await?;
        Ok(row.try_get(0)?)
    }

    /// The last legal hold set or released, if any ever was.
    pub async fn hold(&self) -> Result<Option<Hold>, FleetError> {
        let sql = format!(
            "SELECT held, {RFC3339}, reason, set_by FROM fleet_holds ORDER BY id DESC LIMIT 1"
        );
        let row = sqlx::query(AssertSqlSafe(sql)).fetch_optional(self.pool()).await?;
        let Some(row) = row else { return Ok(None) };
        Ok(Some(Hold {
            held: row.try_get(0)?,
            at: row.try_get(1)?,
            reason: row.try_get(2)?,
            by: row.try_get(3)?,
        }))
    }

    /// Sets (`held`) or releases a legal hold, with its reason; the rows are kept.
    pub async fn set_hold(&self, held: bool, reason: &str) -> Result<(), FleetError> {
        sqlx::query("INSERT INTO fleet_holds (held, reason) VALUES ($1, $2)")
            .bind(held)
            .bind(reason)
            .execute(self.pool())
            .await?;
        Ok(())
    }

    /// Records where `node` archives its trail.
    pub async fn set_archive(
        &self,
        node: &str,
        url: &str,
        options: Option<&str>,
    ) -> Result<(), FleetError> {
        let done = sqlx::query(
            "UPDATE fleet_nodes SET archive_url = $2, archive_options = $3 WHERE node_id = $1",
        )
        .bind(node)
        .bind(url)
        .bind(options)
        .execute(self.pool())
        .await?;
        if done.rows_affected() == 0 {
            return Err(FleetError::NoSuchNode(node.to_owned()));
        }
        Ok(())
    }

    /// Where `node` archives its trail, and its verifier key.
    pub async fn archived(&self, node: &str) -> Result<Archived, FleetError> {
        let row = sqlx::query(
            "SELECT archive_url, archive_options, verifier_key FROM fleet_nodes WHERE node_id = $1",
        )
        .bind(node)
        .fetch_optional(self.pool())
        .await?
        .ok_or_else(|| FleetError::NoSuchNode(node.to_owned()))?;
        Ok(Archived { url: row.try_get(0)?, options: row.try_get(1)?, key: row.try_get(2)? })
    }

    /// The partitions that take no event younger than `days` days (their upper bound is at
    /// least that old), oldest first.
    pub async fn old_partitions(&self, days: f64) -> Result<Vec<Partition>, FleetError> {
        let mut old = Vec::new();
        for partition in self.partitions().await? {
            let Some(to) = &partition.to else { continue };
            let row = sqlx::query(
                "SELECT $1::timestamptz <= now() - $2 * interval '1 day',
                        extract(epoch FROM $1::timestamptz)::float8",
            )
            .bind(to)
            .bind(days)
            .fetch_one(self.pool())
            .await?;
            if row.try_get(0)? {
                old.push((row.try_get::<f64, _>(1)?, partition));
            }
        }
        old.sort_by(|a, b| a.0.total_cmp(&b.0));
        Ok(old.into_iter().map(|(_, p)| p).collect())
    }

    /// Each node's events in `partition`, in node order.
    pub async fn ranges(&self, partition: &Partition) -> Result<Vec<Range>, FleetError> {
        let mut connection = self.pool().acquire().await?;
        Ok(ranges(&mut connection, partition).await?)
    }

    /// Drops `partition`, recording `cuts` (what it took from each node), in one transaction;
    /// refused, with nothing changed, when a legal hold was set meanwhile or the partition's
    /// events are no longer the ones `cuts` name. Needs the store's owner.
    pub async fn drop_partition(
        &self,
        partition: &Partition,
        cuts: &[Cut],
    ) -> Result<(), FleetError> {
        let to = partition.to.as_deref().unwrap_or("infinity");
        let mut tx = self.pool().begin().await?;
        sqlx::query("SET LOCAL lock_timeout = '10s'").execute(&mut *tx).await?;
        // One retention at a time, and no hold set while this one decides.
        sqlx::query("LOCK TABLE fleet_holds, fleet_prunes IN EXCLUSIVE MODE")
            .execute(&mut *tx)
            .await?;
        let held = sqlx::query("SELECT held FROM fleet_holds ORDER BY id DESC LIMIT 1")
            .fetch_optional(&mut *tx)
            .await?;
        if held.map(|row| row.try_get::<bool, _>(0)).transpose()?.unwrap_or(false) {
            return Err(FleetError::Changed("a legal hold was set".into()));
        }
        // The events table and every partition at once (the detach needs the table so), so that
        // no reader holding the table waits on the partition while this waits on it: batches
        // and reads wait the moment it takes.
        sqlx::query("LOCK TABLE public.fleet_events IN ACCESS EXCLUSIVE MODE")
            .execute(&mut *tx)
            .await?;
        let name = quoted(&partition.name);
        // The partition's events, read again under the lock: exactly the ranges the cuts take.
        let held = ranges(&mut tx, partition).await?;
        let taken: Vec<Range> = cuts
            .iter()
            .map(|c| Range {
                node_id: c.node_id.clone(),
                first: c.first,
                through: c.through,
                count: c.through - c.first + 1,
            })
            .collect();
        if held != taken {
            return Err(FleetError::Changed(format!("{} holds other events", partition.name)));
        }
        for cut in cuts {
            sqlx::query(
                "INSERT INTO fleet_prunes (partition_name, received_to, node_id, first_seq,
                     through_seq, through_hash, edge, checkpoint_seq, archive)
                 VALUES ($1, $2::timestamptz, $3, $4, $5, $6, $7, $8, $9)",
            )
            .bind(&partition.name)
            .bind(to)
            .bind(&cut.node_id)
            .bind(cut.first)
            .bind(cut.through)
            .bind(&cut.hash)
            .bind(&cut.edge)
            .bind(cut.checkpoint)
            .bind(&cut.archive)
            .execute(&mut *tx)
            .await?;
        }
        sqlx::query(AssertSqlSafe(format!(
            "ALTER TABLE public.fleet_events DETACH PARTITION public.{name}"
        )))
        .execute(&mut *tx)
        .await?;
        sqlx::query(AssertSqlSafe(format!("DROP TABLE public.{name}"))).execute(&mut *tx).await?;
        tx.commit().await?;
        Ok(())
    }
}

/// Each node's events in `partition`, in node order.
async fn ranges(
    connection: &mut sqlx::PgConnection,
    partition: &Partition,
) -> Result<Vec<Range>, sqlx::Error> {
    let sql = format!(
        "SELECT node_id, min(seq), max(seq), count(*) FROM public.{} GROUP BY node_id
         ORDER BY node_id",
        quoted(&partition.name)
    );
    let rows = sqlx::query(AssertSqlSafe(sql)).fetch_all(&mut *connection).await?;
    rows.iter()
        .map(|row| {
            Ok(Range {
                node_id: row.try_get(0)?,
                first: row.try_get(1)?,
                through: row.try_get(2)?,
                count: row.try_get(3)?,
            })
        })
        .collect()
}

/// A table's name as an SQL identifier: double-quoted, its double quotes doubled.
fn quoted(name: &str) -> String {
    format!("\"{}\"", name.replace('"', "\"\""))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_name_is_quoted_whole() {
        assert_eq!(quoted("fleet_events_2026_11"), "\"fleet_events_2026_11\"");
        assert_eq!(quoted("a\"; DROP TABLE x; --"), "\"a\"\"; DROP TABLE x; --\"");
    }
}
