//! The sidecar's own trail, read through its read-only connections: one trail, node `""`.

use super::{At, Located, ReadResult, Trails, Tree};
use crate::audit::{Anchors, Report, verify_trail};
use crate::error::Error;
use crate::query::{Filter, Head, Stats, Tally};
use crate::store::Reader;
use crate::trail::{Event, Hash};

#[tonic::async_trait]
impl Trails for Reader {
    fn is_fleet(&self) -> bool {
        false
    }

    async fn heads(&self) -> ReadResult<Vec<(String, i64)>> {
        let head = Reader::head(self).await?.map_or(0, |h| h.seq);
        Ok(vec![(String::new(), head)])
    }

    async fn query(
        &self,
        _node: Option<&str>,
        filter: &Filter,
        at: At<'_>,
        size: u32,
        newest_first: bool,
    ) -> ReadResult<Vec<Located>> {
        let events = match newest_first {
            false => Reader::query(self, filter, at.seq, size).await?,
            true => self.query_newest(filter, at.seq, size).await?,
        };
        Ok(events.into_iter().map(|e| (None, e)).collect())
    }

    async fn event(&self, _node: &str, seq: i64) -> ReadResult<Option<Event>> {
        Ok(Reader::event(self, seq).await?)
    }

    async fn head(&self, _node: &str) -> ReadResult<Option<Head>> {
        Ok(Reader::head(self).await?)
    }

    async fn last_checkpoint(&self, _node: &str) -> ReadResult<Option<Event>> {
        Ok(Reader::last_checkpoint(self).await?)
    }

    async fn cosigned_note(&self, _node: &str, checkpoint: &Event) -> ReadResult<String> {
        Ok(Reader::cosigned_note(self, checkpoint).await?)
    }

    async fn stats(&self, _node: Option<&str>, range: &Filter) -> ReadResult<Stats> {
        Ok(Reader::stats(self, range).await?)
    }

    async fn tally(
        &self,
        _node: &str,
        after: i64,
        through: i64,
        since: &str,
    ) -> ReadResult<Vec<Tally>> {
        Ok(Reader::tally(self, after, through, since.to_owned()).await?)
    }

    async fn first_seq_since(&self, _node: &str, since: &str) -> ReadResult<Option<i64>> {
        Ok(Reader::first_seq_since(self, since.to_owned()).await?)
    }

    async fn verify(&self, _node: &str, from: i64, to: Option<i64>) -> ReadResult<Report> {
        Ok(verify_trail(self, from, to, &Anchors::default(), |_| {}).await?)
    }

    fn tree(&self) -> ReadResult<&dyn Tree> {
        Ok(self)
    }

    async fn pruned(&self, _node: &str) -> ReadResult<i64> {
        Ok(Reader::pruned(self).await?.map_or(0, |p| p.through))
    }
}

/// Refuses a proof that needs the tree below `at` (a seq, or a size), where a prune took the
/// nodes: said as such, with where the events are, rather than as a missing node.
async fn kept(reader: &Reader, at: u64, least: u64) -> ReadResult<()> {
    let through = reader.pruned().await?.map_or(0, |p| p.through.unsigned_abs());
    if at < least.max(1) || at >= through + least {
        return Ok(());
    }
    Err(Error::FailedPrecondition(format!(
        "events 1–{through} were pruned from this trail under its retention rules: prove them \
         against the archive (toolgate archive get, archive verify, or a tlog-tiles client)"
    )))
}

#[tonic::async_trait]
impl Tree for Reader {
    async fn size(&self) -> ReadResult<u64> {
        Ok(self.tree_size().await?)
    }

    async fn leaf(&self, seq: u64) -> ReadResult<Hash> {
        kept(self, seq, 1).await?;
        Ok(Reader::leaf(self, seq).await?)
    }

    async fn root(&self, size: u64) -> ReadResult<Hash> {
        kept(self, size, 0).await?;
        Ok(Reader::root(self, size).await?)
    }

    async fn inclusion_proof(&self, seq: u64, size: u64) -> ReadResult<Vec<Hash>> {
        kept(self, seq, 1).await?;
        Ok(Reader::inclusion_proof(self, seq, size).await?)
    }

    async fn inclusion_proofs(&self, seqs: Vec<u64>, size: u64) -> ReadResult<Vec<Vec<Hash>>> {
        if let Some(&first) = seqs.iter().min() {
            kept(self, first, 1).await?;
        }
        Ok(Reader::inclusion_proofs(self, seqs, size).await?)
    }

    async fn consistency_proof(&self, old: u64, new: u64) -> ReadResult<Vec<Hash>> {
        kept(self, old, 0).await?;
        Ok(Reader::consistency_proof(self, old, new).await?)
    }
}
