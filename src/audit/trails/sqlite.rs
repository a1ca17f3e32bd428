//! The sidecar's own trail, read through its read-only connections: one trail, node `""`.
//! With an archive, what a prune took from the file is read back from there
//! (`archive::pruned`, each tile checked against the nodes the file kept), so that queries,
//! exports, single events and proofs reach every event the trail ever held. Stats, tallies and
//! verification cover the file; `toolgate verify --archive` joins the archive to it.

use std::collections::BTreeSet;
use std::sync::Arc;

use super::{Ask, Located, ReadResult, Trails, Tree};
use crate::archive::Archive;
use crate::archive::pruned::{self, PrunedError};
use crate::archive::tiles::WIDTH;
use crate::audit::verify_trail;
use crate::error::Error;
use crate::query::{Head, Stats, Tally, TrailHead};
use crate::store::{Known, Proving, Reader, StoreError};
use crate::trail::Anchors;
use crate::trail::Filter;
use crate::trail::Report;
use crate::trail::{Event, Hash};

/// How many times a page is read while prunes keep moving the cut under it.
const READS: usize = 8;

/// The sidecar's trail: its file, and the archive its prunes left the rest in, if any.
#[derive(Debug, Clone)]
pub struct Local {
    reader: Reader,
    archive: Option<Archive>,
}

impl Local {
    /// The trail of `reader`'s file, reaching into `archive` below its prunes.
    pub fn new(reader: Reader, archive: Option<Archive>) -> Self {
        Self { reader, archive }
    }

    /// The file's own reads.
    pub fn reader(&self) -> &Reader {
        &self.reader
    }

    /// The last seq a prune took (0: none).
    async fn through(&self) -> ReadResult<u64> {
        Ok(self.reader.pruned().await?.map_or(0, |p| p.through.unsigned_abs()))
    }

    /// The pruned events of the `index`th tile, from the archive.
    async fn archived(
        &self,
        archive: &Archive,
        through: u64,
        index: u64,
    ) -> ReadResult<Vec<Event>> {
        Ok(pruned::events(archive, &self.reader, through, index).await?)
    }

    /// At most `size` events matching `filter` after seq `after`, oldest first: from the archive
    /// up to the cut, then from the file. Read again when a prune moved the cut meanwhile (its
    /// deletions could have taken rows the file's part would have started with).
    async fn oldest(&self, filter: &Filter, after: i64, size: u32) -> ReadResult<Vec<Event>> {
        let Some(archive) = &self.archive else {
            return Ok(self.reader.query(filter, after, size).await?);
        };
        let mut through = self.through().await?;
        for _ in 0..READS {
            let page = self.across(archive, filter, after, size, through).await?;
            match self.through().await? {
                now if now == through => return Ok(page),
                now => through = now,
            }
        }
        Err(Error::FailedPrecondition("the trail was pruned while it was read: ask again".into()))
    }

    /// [`Self::oldest`]'s page with the cut at `through`.
    async fn across(
        &self,
        archive: &Archive,
        filter: &Filter,
        after: i64,
        size: u32,
        through: u64,
    ) -> ReadResult<Vec<Event>> {
        let want = size as usize;
        let mut page = Vec::new();
        let mut next = u64::try_from(after).unwrap_or(0);
        while page.len() < want && next < through {
            let index = next / WIDTH;
            let events = self.archived(archive, through, index).await?;
            let after = i64::try_from(next).unwrap_or(i64::MAX);
            let matching = events.into_iter().filter(|e| e.seq > after && filter.matches(e));
            page.extend(matching.take(want - page.len()));
            next = ((index + 1) * WIDTH).min(through);
        }
        if page.len() < want {
            let after = after.max(i64::try_from(through).unwrap_or(i64::MAX));
            let rest = u32::try_from(want - page.len()).unwrap_or(0);
            page.extend(self.reader.query(filter, after, rest).await?);
        }
        Ok(page)
    }

    /// At most `size` events matching `filter` before seq `before` (from the newest when 0),
    /// newest first: from the file, then from the archive below `through`.
    async fn newest(&self, filter: &Filter, before: i64, size: u32) -> ReadResult<Vec<Event>> {
        let mut page = self.reader.query_newest(filter, before, size).await?;
        let Some(archive) = &self.archive else { return Ok(page) };
        let through = self.through().await?;
        let floor = i64::try_from(through).unwrap_or(i64::MAX);
        // Rows a prune took but has not deleted yet: read from the archive, in order.
        page.retain(|e| e.seq > floor);
        let want = size as usize;
        let mut below = match u64::try_from(before) {
            Ok(before) if before > 0 => before.min(through + 1),
            _ => through + 1,
        };
        while page.len() < want && below > 1 {
            let index = (below - 2) / WIDTH;
            let events = self.archived(archive, through, index).await?;
            let under = i64::try_from(below).unwrap_or(i64::MAX);
            let matching = events.into_iter().rev().filter(|e| e.seq < under && filter.matches(e));
            page.extend(matching.take(want - page.len()));
            below = index * WIDTH + 1;
        }
        Ok(page)
    }

    /// What `ask` reads from the tree: the file's nodes, and below a prune, the nodes of the
    /// archive's tiles (those of the leaves `near`, which a proof of them needs, read first; any
    /// other only as the tree finds it missing: a root or a consistency proof at the cut needs
    /// only what the file kept). Without an archive, a proof into the pruned range is refused
    /// as such.
    async fn proved<T, F>(&self, near: impl IntoIterator<Item = u64>, ask: F) -> ReadResult<T>
    where
        T: Send + 'static,
        F: Fn(&mut Proving<'_>) -> Result<T, StoreError> + Clone + Send + 'static,
    {
        let through = self.through().await?;
        let mut known = Known::new();
        let mut fetched = BTreeSet::new();
        let mut wanted: BTreeSet<u64> =
            near.into_iter().filter(|&leaf| leaf < through).map(|leaf| leaf / WIDTH).collect();
        loop {
            for index in std::mem::take(&mut wanted) {
                let Some(archive) = &self.archive else { break };
                if fetched.insert(index) {
                    known.extend(pruned::known(archive, &self.reader, through, index).await?);
                }
            }
            let answer = self.reader.prove(Arc::new(known.clone()), ask.clone()).await;
            let Err(StoreError::NodeMissing(node)) = answer else { return Ok(answer?) };
            let leaf = node.index.checked_shl(node.level).unwrap_or(u64::MAX);
            match &self.archive {
                _ if leaf >= through => return Err(StoreError::NodeMissing(node).into()),
                Some(_) if !fetched.contains(&(leaf / WIDTH)) => _ = wanted.insert(leaf / WIDTH),
                Some(_) => return Err(StoreError::NodeMissing(node).into()),
                None => return Err(unarchived(through)),
            }
        }
    }
}

/// A proof into the range a prune took, asked of a trail without its archive.
fn unarchived(through: u64) -> Error {
    Error::FailedPrecondition(format!(
        "events 1–{through} were pruned from this trail under its retention rules: prove them \
         against the archive (toolgate archive get, archive verify, or a tlog-tiles client)"
    ))
}

impl From<PrunedError> for Error {
    fn from(error: PrunedError) -> Self {
        match error {
            PrunedError::Tampered(..) => Self::DataLoss(error.to_string()),
            PrunedError::Archive(e) => Self::ArchiveUnavailable(e.to_string()),
            PrunedError::Store(e) => e.into(),
        }
    }
}

#[tonic::async_trait]
impl Trails for Local {
    fn is_fleet(&self) -> bool {
        false
    }

    async fn heads(&self) -> ReadResult<Vec<TrailHead>> {
        let seq = self.reader.head().await?.map_or(0, |h| h.seq);
        Ok(vec![TrailHead { node: String::new(), seq }])
    }

    async fn query(&self, ask: Ask<'_>) -> ReadResult<Vec<Located>> {
        let Ask { filter, at, size, newest_first, .. } = ask;
        let events = match newest_first {
            false => self.oldest(filter, at.seq, size).await?,
            true => self.newest(filter, at.seq, size).await?,
        };
        Ok(events.into_iter().map(|event| Located { node: None, event }).collect())
    }

    async fn event(&self, _node: &str, seq: i64) -> ReadResult<Option<Event>> {
        if let Some(event) = self.reader.event(seq).await? {
            return Ok(Some(event));
        }
        let through = self.through().await?;
        match (&self.archive, u64::try_from(seq)) {
            (Some(archive), Ok(at)) if at >= 1 && at <= through => {
                let events = self.archived(archive, through, (at - 1) / WIDTH).await?;
                Ok(events.into_iter().find(|e| e.seq == seq))
            }
            _ => Ok(None),
        }
    }

    async fn head(&self, _node: &str) -> ReadResult<Option<Head>> {
        Ok(self.reader.head().await?)
    }

    async fn last_checkpoint(&self, _node: &str) -> ReadResult<Option<Event>> {
        Ok(self.reader.last_checkpoint().await?)
    }

    async fn cosigned_note(&self, _node: &str, checkpoint: &Event) -> ReadResult<String> {
        Ok(self.reader.cosigned_note(checkpoint).await?)
    }

    async fn stats(&self, _node: Option<&str>, range: &Filter) -> ReadResult<Stats> {
        Ok(self.reader.stats(range).await?)
    }

    async fn tally(
        &self,
        _node: &str,
        after: i64,
        through: i64,
        since: &str,
    ) -> ReadResult<Vec<Tally>> {
        Ok(self.reader.tally(after, through, since.to_owned()).await?)
    }

    async fn first_seq_since(&self, _node: &str, since: &str) -> ReadResult<Option<i64>> {
        Ok(self.reader.first_seq_since(since.to_owned()).await?)
    }

    async fn verify(&self, _node: &str, from: i64, to: Option<i64>) -> ReadResult<Report> {
        Ok(verify_trail(&self.reader, from, to, &Anchors::default(), |_| {}).await?)
    }

    fn tree(&self) -> ReadResult<&dyn Tree> {
        Ok(self)
    }

    async fn pruned(&self, _node: &str) -> ReadResult<i64> {
        Ok(self.reader.pruned().await?.map_or(0, |p| p.through))
    }
}

#[tonic::async_trait]
impl Tree for Local {
    async fn size(&self) -> ReadResult<u64> {
        Ok(self.reader.tree_size().await?)
    }

    async fn leaf(&self, seq: u64) -> ReadResult<Hash> {
        let index = seq.saturating_sub(1);
        self.proved([index], move |tree| tree.hash(index, index + 1)).await
    }

    async fn root(&self, size: u64) -> ReadResult<Hash> {
        self.proved([size.saturating_sub(1)], move |tree| tree.root(size)).await
    }

    async fn inclusion_proof(&self, seq: u64, size: u64) -> ReadResult<Vec<Hash>> {
        let index = seq.saturating_sub(1);
        self.proved([index, size.saturating_sub(1)], move |tree| tree.inclusion(index, size)).await
    }

    async fn inclusion_proofs(&self, seqs: Vec<u64>, size: u64) -> ReadResult<Vec<Vec<Hash>>> {
        let near: Vec<u64> = seqs.iter().map(|s| s.saturating_sub(1)).collect();
        let first = near.iter().copied().chain([size.saturating_sub(1)]).collect::<Vec<_>>();
        self.proved(first, move |tree| {
            near.iter().map(|&index| tree.inclusion(index, size)).collect()
        })
        .await
    }

    async fn consistency_proof(&self, old: u64, new: u64) -> ReadResult<Vec<Hash>> {
        let near = [old.saturating_sub(1), old, new.saturating_sub(1)];
        self.proved(near, move |tree| tree.consistency(old, new)).await
    }
}
