//! The fleet's PostgreSQL store: a trail per node, read by node id. It keeps each node's tree
//! only as its right edge, so proofs come from the node's own sidecar.

use super::{Ask, Located, ReadResult, Trails, Tree};
use crate::audit::verify_fleet;
use crate::error::Error;
use crate::fleet::store::{FleetError, FleetStore};
use crate::query::{Head, Stats, Tally, TrailHead};
use crate::trail::Event;
use crate::trail::Filter;
use crate::trail::Report;

impl From<FleetError> for Error {
    /// The store's details are for the operator's log; the caller learns it is unavailable.
    fn from(error: FleetError) -> Self {
        Error::FleetUnavailable(error.to_string())
    }
}

#[tonic::async_trait]
impl Trails for FleetStore {
    fn is_fleet(&self) -> bool {
        true
    }

    async fn heads(&self) -> ReadResult<Vec<TrailHead>> {
        Ok(FleetStore::heads(self).await?)
    }

    async fn query(&self, ask: Ask<'_>) -> ReadResult<Vec<Located>> {
        let Ask { node, filter, at, size, newest_first } = ask;
        let after = (at.node, at.seq);
        let events = match newest_first {
            false => FleetStore::query(self, node, filter, after, size).await?,
            true => {
                let before = (!at.node.is_empty()).then_some(after);
                self.query_newest(node, filter, before, size).await?
            }
        };
        Ok(events.into_iter().map(|(node, event)| Located { node: Some(node), event }).collect())
    }

    async fn event(&self, node: &str, seq: i64) -> ReadResult<Option<Event>> {
        Ok(FleetStore::event(self, node, seq).await?)
    }

    async fn head(&self, node: &str) -> ReadResult<Option<Head>> {
        let (seq, _) = FleetStore::head(self, node).await?;
        let event = FleetStore::event(self, node, seq).await?;
        Ok(event.map(|e| Head { seq: e.seq, hash: e.hash, ts: e.ts }))
    }

    async fn last_checkpoint(&self, node: &str) -> ReadResult<Option<Event>> {
        Ok(FleetStore::last_checkpoint(self, node).await?)
    }

    async fn cosigned_note(&self, node: &str, checkpoint: &Event) -> ReadResult<String> {
        let lines = self.cosignature_lines(node, checkpoint.seq).await?;
        let note = checkpoint.record.note.clone().unwrap_or_default();
        Ok(lines.into_iter().fold(note, |note, line| note + &line))
    }

    async fn stats(&self, node: Option<&str>, range: &Filter) -> ReadResult<Stats> {
        Ok(FleetStore::stats(self, node, range).await?)
    }

    async fn tally(
        &self,
        node: &str,
        after: i64,
        through: i64,
        since: &str,
    ) -> ReadResult<Vec<Tally>> {
        Ok(FleetStore::tally(self, node, after, through, since).await?)
    }

    async fn first_seq_since(&self, node: &str, since: &str) -> ReadResult<Option<i64>> {
        Ok(FleetStore::first_seq_since(self, node, since).await?)
    }

    /// A node is verified whole: its chain, its checkpoints against its registered key.
    async fn verify(&self, node: &str, from: i64, to: Option<i64>) -> ReadResult<Report> {
        if from > 1 || to.is_some() {
            let why = "a fleet store verifies a node whole, from its first event to its last";
            return Err(Error::FailedPrecondition(why.to_owned()));
        }
        let reports = verify_fleet(self, Some(node), &Default::default()).await?;
        let found = reports.into_iter().next().map(|(_, report)| report);
        found.ok_or_else(|| Error::NotFound(format!("the fleet store has no node {node:?}")))
    }

    fn tree(&self) -> ReadResult<&dyn Tree> {
        Err(Error::FailedPrecondition(
            "proofs come from a node's own trail (its tree): the fleet store keeps only the \
             right edge of each node's tree; ask the node's sidecar"
                .to_owned(),
        ))
    }
}
