//! One way to read a trail: the auditors' reads (events in either order, one event, heads,
//! checkpoints and their cosignatures, stats, tallies, proofs, verification) behind one trait,
//! [`Trails`], with an implementation for the sidecar's SQLite trail and the archive its prunes
//! left the rest in (`sqlite.rs`, [`Local`], the trail of node `""`) and one for the fleet's PostgreSQL store (`postgres.rs`, a trail per node).
//! The gRPC service, the console's followers and the CLI call it and only map to and from the
//! wire; failures reach gRPC through the one `From<Error> for Status`.

mod postgres;
mod sqlite;

pub use sqlite::Local;

use std::fmt::Debug;

use crate::error::Error;
use crate::query::{Head, Stats, Tally, TrailHead};
use crate::trail::Filter;
use crate::trail::Report;
use crate::trail::{Event, Hash, Kind};

/// What a read of a trail can fail with: the trail's own failure, as the service error it is.
pub type ReadResult<T> = Result<T, Error>;

/// An event and, on a fleet store, the node whose trail holds it.
#[derive(Debug, Clone)]
pub struct Located {
    pub node: Option<String>,
    pub event: Event,
}

/// Which events a query asks for: those matching `filter` (of `node`'s trail only, when
/// given), from `at`, at most `size`, oldest first or newest first.
#[derive(Debug, Clone, Copy)]
pub struct Ask<'a> {
    pub node: Option<&'a str>,
    pub filter: &'a Filter,
    pub at: At<'a>,
    pub size: u32,
    pub newest_first: bool,
}

/// Where a page of events starts: after this node's seq (a fleet store orders by node, then
/// seq), or for the newest first, before it (seq 0: from the newest).
#[derive(Debug, Clone, Copy, Default)]
pub struct At<'a> {
    pub node: &'a str,
    pub seq: i64,
}

/// The trails an auditor reads: a sidecar's own, or every node's in a fleet store.
#[tonic::async_trait]
pub trait Trails: Debug + Send + Sync {
    /// Whether node ids name trails here (a fleet store) rather than nothing (a sidecar).
    fn is_fleet(&self) -> bool;

    /// Every trail and the seq of its last event: a sidecar's one trail is node `""`.
    async fn heads(&self) -> ReadResult<Vec<TrailHead>>;

    /// The events `ask` asks for.
    async fn query(&self, ask: Ask<'_>) -> ReadResult<Vec<Located>>;

    /// The event at `seq` of `node`'s trail.
    async fn event(&self, node: &str, seq: i64) -> ReadResult<Option<Event>>;

    /// The last event of `node`'s trail.
    async fn head(&self, node: &str) -> ReadResult<Option<Head>>;

    /// The last checkpoint event of `node`'s trail.
    async fn last_checkpoint(&self, node: &str) -> ReadResult<Option<Event>>;

    /// The checkpoint event of `node`'s tree of `size` events (0: the last one); `None` when
    /// there is no such checkpoint.
    async fn checkpoint(&self, node: &str, size: u64) -> ReadResult<Option<Event>> {
        let found = match i64::try_from(size) {
            Ok(0) => self.last_checkpoint(node).await?,
            Ok(size) => self.event(node, size.saturating_add(1)).await?,
            Err(_) => None,
        };
        Ok(found.filter(|e| e.record.kind == Kind::Checkpoint))
    }

    /// A checkpoint event's note with every witness cosignature kept for it.
    async fn cosigned_note(&self, node: &str, checkpoint: &Event) -> ReadResult<String>;

    /// Counts of the events in `range` (of `node`'s trail only, when given).
    async fn stats(&self, node: Option<&str>, range: &Filter) -> ReadResult<Stats>;

    /// The events of `node`'s trail with seq in (`after`, `through`] and `ts` at or after
    /// `since`, counted by minute, kind, outcome, denied tool and actor.
    async fn tally(
        &self,
        node: &str,
        after: i64,
        through: i64,
        since: &str,
    ) -> ReadResult<Vec<Tally>>;

    /// The first seq of `node`'s trail at or after `since`.
    async fn first_seq_since(&self, node: &str, since: &str) -> ReadResult<Option<i64>>;

    /// `node`'s chain verified from `from` to `to` (the head when `None`).
    async fn verify(&self, node: &str, from: i64, to: Option<i64>) -> ReadResult<Report>;

    /// The Merkle tree's proofs, from the trail that keeps the tree.
    fn tree(&self) -> ReadResult<&dyn Tree>;

    /// The last seq pruned from `node`'s trail under its retention rules (0: none; a fleet
    /// store prunes nothing).
    async fn pruned(&self, _node: &str) -> ReadResult<i64> {
        Ok(0)
    }
}

/// A trail's RFC 6962 tree: only a sidecar keeps it whole (a fleet store keeps each node's
/// right edge).
#[tonic::async_trait]
pub trait Tree: Send + Sync {
    async fn size(&self) -> ReadResult<u64>;
    async fn leaf(&self, seq: u64) -> ReadResult<Hash>;
    async fn root(&self, size: u64) -> ReadResult<Hash>;
    async fn inclusion_proof(&self, seq: u64, size: u64) -> ReadResult<Vec<Hash>>;
    async fn inclusion_proofs(&self, seqs: Vec<u64>, size: u64) -> ReadResult<Vec<Vec<Hash>>>;
    async fn consistency_proof(&self, old: u64, new: u64) -> ReadResult<Vec<Hash>>;
}
