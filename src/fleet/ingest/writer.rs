//! The ingest service's side of the store: a checked batch written with binary `COPY` in one
//! transaction, under the lock of the node's tree row (so that two ingest servers never
//! interleave one node), the tree moved on in the same transaction; refusals recorded as
//! alarms after it. Within one server, a node's batches also wait for each other before they
//! take a connection, so that one node cannot hold the pool's connections waiting on its own
//! row.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use sqlx::{PgPool, Row};

use super::budget::{Budget, PER_MINUTE, Spend, kind};
use super::check::{Batch, Held, Refusal, cosignature};
use super::copy;
use crate::fleet::store::FleetStore;
use crate::fleet::tree_of;
use crate::proto;
use crate::trail::GENESIS_HASH;
use crate::trail::cosignature::Witnesses;

/// How often the month's partitions are made sure of (they are made ahead, a week early).
const PARTITIONS_EVERY: Duration = Duration::from_secs(3600);

/// Why a call did not store what it brought.
#[derive(Debug, thiserror::Error)]
pub enum IngestError {
    /// The node's own checks failed: an alarm.
    #[error("{0}")]
    Refused(Refusal),
    #[error("the node's registration is revoked")]
    Revoked,
    #[error("the node is not registered")]
    Unregistered,
    #[error("the fleet store: {0}")]
    Db(#[from] sqlx::Error),
    /// The store's tree row of the node does not read: the store was changed by hand.
    #[error("the fleet store's tree of the node does not read")]
    Tree,
}

/// Where a node's trail stands in the store.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Position {
    /// The last seq the store holds.
    pub seq: i64,
    /// The last seq every required witness has cosigned a checkpoint of.
    pub cosigned: i64,
}

/// What a batch shipped did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shipped {
    /// The last seq the store holds after it.
    pub seq: i64,
    /// How many of its events it stored.
    pub stored: u64,
    /// Whether the fleet awaits its witnesses' cosignatures of a later checkpoint before the
    /// batch's events it left out.
    pub awaiting: bool,
}

/// Who made a call: the node its token is of, the token's hash, and the peer's address.
#[derive(Debug, Clone)]
pub struct Shipper {
    pub node: String,
    pub token: String,
    pub peer: Option<String>,
}

/// The store, as the ingest service writes it.
#[derive(Debug)]
pub struct Writer {
    pool: PgPool,
    copy: String,
    /// When the partitions were last made sure of.
    partitioned: Mutex<Option<Instant>>,
    /// Each node's turn on this server (registered nodes only: a call has its token by then).
    turns: Mutex<HashMap<String, Arc<tokio::sync::Mutex<()>>>>,
    /// The witnesses whose cosignatures of a checkpoint the fleet requires before the events
    /// after it (`[ingest]`; none required by default).
    witnesses: Witnesses,
    /// How many alarms each token may have stored a minute.
    budget: Budget,
}

impl Writer {
    /// The witnesses the fleet requires (none required: `[ingest]` has none).
    pub fn witnesses(&self) -> &Witnesses {
        &self.witnesses
    }
}

impl Writer {
    pub fn new(store: &FleetStore, witnesses: Witnesses) -> Self {
        Self {
            pool: store.pool().clone(),
            copy: copy::statement(),
            partitioned: Mutex::new(None),
            turns: Mutex::new(HashMap::new()),
            witnesses,
            budget: Budget::default(),
        }
    }

    /// `node`'s turn on this server.
    fn turn(&self, node: &str) -> Arc<tokio::sync::Mutex<()>> {
        let mut turns = self.turns.lock().unwrap_or_else(|e| e.into_inner());
        turns.entry(node.to_owned()).or_default().clone()
    }

    /// The node a token's hash is of, and whether it is revoked; `None` for no node.
    pub async fn token(&self, hash: &str) -> Result<Option<(String, bool)>, sqlx::Error> {
        let row = sqlx::query(
            "SELECT node_id, revoked_at IS NOT NULL FROM fleet_nodes WHERE token_hash = $1",
        )
        .bind(hash)
        .fetch_optional(&self.pool)
        .await?;
        row.map(|row| Ok((row.try_get(0)?, row.try_get(1)?))).transpose()
    }

    /// The last seq the store holds for `node`, and where its cosignatures stand.
    pub async fn position(&self, node: &str) -> Result<Position, IngestError> {
        let row = sqlx::query(
            "SELECT t.size, (SELECT coalesce(min(w.last), 0) FROM (
                 SELECT max(c.seq) AS last FROM fleet_cosignatures c WHERE c.node_id = $1
                 GROUP BY c.witness) w)
             FROM fleet_trees t WHERE t.node_id = $1",
        )
        .bind(node)
        .fetch_optional(&self.pool)
        .await?;
        let row = row.ok_or(IngestError::Unregistered)?;
        Ok(Position { seq: row.try_get(0)?, cosigned: row.try_get(1)? })
    }

    /// Stores the events of `batch` that extend what the store holds of the shipper's node, or
    /// refuses the batch whole ([`Shipped`] says how it went). The token must still be the node's,
    /// unrevoked: a token replaced or revoked stops at the next batch of a stream opened before.
    pub async fn ship(&self, shipper: &Shipper, batch: &Batch) -> Result<Shipped, IngestError> {
        let node = shipper.node.as_str();
        self.partitions().await;
        let turn = self.turn(node);
        let _turn = turn.lock().await;
        let mut tx = self.pool.begin().await?;
        // Another server's batch of the node holds the row at most this long.
        sqlx::query("SET LOCAL lock_timeout = '10s'").execute(&mut *tx).await?;
        // No partition is dropped between the read of the node's cut and that of its events.
        sqlx::query("LOCK TABLE fleet_events IN ACCESS SHARE MODE").execute(&mut *tx).await?;
        let row = sqlx::query(
            "SELECT t.size, t.hash, t.edge, n.verifier_key,
                    n.revoked_at IS NOT NULL OR n.token_hash IS DISTINCT FROM $2,
                    c.through_seq, c.through_hash
             FROM fleet_trees t JOIN fleet_nodes n ON n.node_id = t.node_id
             LEFT JOIN LATERAL (SELECT p.through_seq, p.through_hash FROM fleet_prunes p
                                WHERE p.node_id = t.node_id ORDER BY p.through_seq DESC
                                LIMIT 1) c ON true
             WHERE t.node_id = $1 FOR UPDATE OF t",
        )
        .bind(node)
        .bind(&shipper.token)
        .fetch_optional(&mut *tx)
        .await?;
        let row = row.ok_or(IngestError::Unregistered)?;
        if row.try_get::<bool, _>(4)? {
            return Err(IngestError::Revoked);
        }
        let size: i64 = row.try_get(0)?;
        let pruned = match row.try_get::<Option<i64>, _>(5)? {
            Some(through) => Some((through, row.try_get::<String, _>(6)?)),
            None => None,
        };
        let held = Held {
            frontier: tree_of(size, &row.try_get::<Vec<Vec<u8>>, _>(2)?)
                .ok_or(IngestError::Tree)?,
            hash: if size == 0 { hex::encode(GENESIS_HASH) } else { row.try_get(1)? },
            key: row.try_get(3)?,
            pruned,
        };
        let seqs = batch.held_seqs(&held);
        let stored: HashMap<i64, String> = if seqs.is_empty() {
            HashMap::new()
        } else {
            let rows = sqlx::query(
                "SELECT seq, hash FROM fleet_events WHERE node_id = $1 AND seq = ANY($2)",
            )
            .bind(node)
            .bind(&seqs)
            .fetch_all(&mut *tx)
            .await?;
            rows.iter()
                .map(|r| Ok((r.try_get(0)?, r.try_get(1)?)))
                .collect::<Result<_, sqlx::Error>>()?
        };
        // Checkpoints' signatures are verified here: off the async workers' turn.
        let checked = tokio::task::block_in_place(|| batch.check(&held, &stored, &self.witnesses))
            .map_err(IngestError::Refused)?;
        let awaiting = checked.awaiting;
        let Some(last) = checked.new.last() else {
            return Ok(Shipped { seq: size, stored: 0, awaiting });
        };
        let mut copy_in = tx.copy_in_raw(&self.copy).await?;
        copy_in.send(copy::rows(node, checked.new)).await?;
        let count = copy_in.finish().await?;
        let edge: Vec<Vec<u8>> = checked.frontier.edge().map(|h| h.to_vec()).collect();
        sqlx::query("UPDATE fleet_trees SET size = $2, hash = $3, edge = $4 WHERE node_id = $1")
            .bind(node)
            .bind(last.seq)
            .bind(&last.hash)
            .bind(edge)
            .execute(&mut *tx)
            .await?;
        insert_cosignatures(&mut tx, node, &checked.cosignatures).await?;
        tx.commit().await?;
        Ok(Shipped { seq: last.seq, stored: count, awaiting })
    }

    /// Stores witnesses' cosignatures of `node`'s stored checkpoints, each checked; refuses the
    /// whole call at the first that fails. Returns how many were new.
    pub async fn cosign(
        &self,
        node: &str,
        cosignatures: &[proto::Cosignature],
    ) -> Result<u64, IngestError> {
        // Those of checkpoints retention dropped from the store are no longer checked, nor
        // kept: the node's archive holds the checkpoint, and its witnesses the cosignature.
        let pruned = sqlx::query(
            "SELECT coalesce(max(through_seq), 0) FROM fleet_prunes WHERE node_id = $1",
        )
        .bind(node)
        .fetch_one(&self.pool)
        .await?
        .try_get::<i64, _>(0)?;
        let cosignatures: Vec<&proto::Cosignature> =
            cosignatures.iter().filter(|c| c.seq > pruned).collect();
        let seqs: Vec<i64> = cosignatures.iter().map(|c| c.seq).collect();
        let notes = sqlx::query(
            "SELECT seq, coalesce(note, '') FROM fleet_events
             WHERE node_id = $1 AND seq = ANY($2) AND kind = 'checkpoint'",
        )
        .bind(node)
        .bind(&seqs)
        .fetch_all(&self.pool)
        .await?;
        let notes: HashMap<i64, String> = notes
            .iter()
            .map(|r| Ok((r.try_get(0)?, r.try_get(1)?)))
            .collect::<Result<_, sqlx::Error>>()?;
        let lines = sqlx::query(
            "SELECT seq, witness, line FROM fleet_cosignatures WHERE node_id = $1 AND seq = ANY($2)",
        )
        .bind(node)
        .bind(&seqs)
        .fetch_all(&self.pool)
        .await?;
        let lines: HashMap<(i64, String), String> = lines
            .iter()
            .map(|r| Ok(((r.try_get(0)?, r.try_get(1)?), r.try_get(2)?)))
            .collect::<Result<_, sqlx::Error>>()?;
        // One Ed25519 verification each: off the async workers' turn.
        tokio::task::block_in_place(|| {
            cosignatures.iter().try_for_each(|c| {
                let held = lines.get(&(c.seq, c.witness.clone())).map(String::as_str);
                cosignature(c, notes.get(&c.seq).map(String::as_str), held)
            })
        })
        .map_err(IngestError::Refused)?;
        let mut connection = self.pool.acquire().await?;
        Ok(insert_cosignatures(&mut connection, node, &cosignatures).await?)
    }

    /// Records a refusal: the node the call claimed to be of, who made it, and what differed,
    /// within the token's budget (`budget.rs`). The server's log has it too, should the store
    /// not take it.
    pub async fn alarm(&self, claimed: &str, by: &Shipper, refusal: &Refusal) {
        let kind = kind(&refusal.what);
        let (spend, ended) = self.budget.spend(&by.token, kind, Instant::now());
        if let Some(counted) = ended {
            tracing::warn!(
                shipper = %by.node,
                "fleet alarms: {counted} more refusals \"{kind}\" of this token in its last \
                 minute over the budget were counted, not stored one by one"
            );
        }
        match spend {
            Spend::Count => {}
            Spend::Record => self.record(claimed, by, refusal).await,
            Spend::Notice => {
                let notice = Refusal::whole(format!(
                    "more than {PER_MINUTE} refusals \"{kind}\" of this token in a minute: the \
                     rest of the minute's are counted in the ingest server's log, not stored one \
                     by one"
                ));
                self.record(claimed, by, &notice).await;
            }
        }
    }

    /// Stores one alarm.
    async fn record(&self, claimed: &str, by: &Shipper, refusal: &Refusal) {
        let shipper = Some(by.node.as_str());
        let peer = by.peer.as_deref();
        tracing::warn!(node = %claimed, shipper, peer, "fleet alarm: {refusal}");
        let recorded = sqlx::query(
            "INSERT INTO fleet_alarms (node_id, seq, what, shipper, peer)
             VALUES ($1, $2, $3, $4, $5)",
        )
        .bind(claimed)
        .bind(refusal.seq)
        .bind(refusal.to_string())
        .bind(shipper)
        .bind(peer)
        .execute(&self.pool)
        .await;
        if let Err(e) = recorded {
            tracing::error!(node = %claimed, "the fleet store did not record the alarm: {e}");
        }
    }

    /// Makes sure the partitions of this month and of a week from now exist, at most once an
    /// hour (one caller at a time; the others go on). A failure is logged and asked again at
    /// the next batch: a batch fails only if its own month's partition is missing.
    async fn partitions(&self) {
        {
            let mut last = self.partitioned.lock().unwrap_or_else(|e| e.into_inner());
            if last.is_some_and(|at| at.elapsed() < PARTITIONS_EVERY) {
                return;
            }
            *last = Some(Instant::now());
        }
        let made = sqlx::query(
            "SELECT fleet_partition(now()), fleet_partition(now() + interval '7 days')",
        )
        .execute(&self.pool)
        .await;
        if let Err(e) = made {
            tracing::warn!("the fleet store's next partitions: {e}");
            *self.partitioned.lock().unwrap_or_else(|e| e.into_inner()) = None;
        }
    }
}

/// Stores `node`'s cosignatures, each checked already; those the store holds stay as they
/// are. Returns how many were new.
async fn insert_cosignatures(
    connection: &mut sqlx::PgConnection,
    node: &str,
    cosignatures: &[&proto::Cosignature],
) -> Result<u64, sqlx::Error> {
    if cosignatures.is_empty() {
        return Ok(0);
    }
    let int = |n: u64| i64::try_from(n).unwrap_or(i64::MAX);
    let stored = sqlx::query(
        "INSERT INTO fleet_cosignatures (node_id, seq, witness, size, time, line)
         SELECT $1, c.seq, c.witness, c.size, c.time, c.line
         FROM unnest($2::BIGINT[], $3::TEXT[], $4::BIGINT[], $5::BIGINT[], $6::TEXT[])
             AS c(seq, witness, size, time, line)
         ON CONFLICT DO NOTHING",
    )
    .bind(node)
    .bind(cosignatures.iter().map(|c| c.seq).collect::<Vec<_>>())
    .bind(cosignatures.iter().map(|c| c.witness.as_str()).collect::<Vec<_>>())
    .bind(cosignatures.iter().map(|c| int(c.size)).collect::<Vec<_>>())
    .bind(cosignatures.iter().map(|c| int(c.time)).collect::<Vec<_>>())
    .bind(cosignatures.iter().map(|c| c.line.as_str()).collect::<Vec<_>>())
    .execute(&mut *connection)
    .await?;
    Ok(stored.rows_affected())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trail::Frontier;

    #[test]
    fn a_tree_kept_as_its_edge_grows_on_as_the_same_tree() {
        let mut grown = Frontier::default();
        for size in 0..70u8 {
            let kept: Vec<Vec<u8>> = grown.edge().map(|h| h.to_vec()).collect();
            let read = tree_of(i64::from(size), &kept).unwrap();
            assert_eq!(read, grown, "size {size}");
            assert_eq!(read.root(), grown.root());
            grown.push(&[size]);
        }
        let edge: Vec<Vec<u8>> = grown.edge().map(|h| h.to_vec()).collect();
        assert_eq!(tree_of(70, &edge[1..]), None);
        assert_eq!(tree_of(71, &edge), None);
        assert_eq!(tree_of(-1, &edge), None);
    }
}
