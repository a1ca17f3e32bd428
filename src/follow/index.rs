//! The auditors' index as a sink: each batch of committed events goes into the index file
//! beside the trail (`store::index`), with the watermark that says how far it reaches. Queries
//! scan the events after the watermark, so the index may trail the commits without an answer
//! changing; its lag (`toolgate_index_lag_events`) is the length of that tail.

use std::time::Duration;

use super::{Follower, Sink, Taken, Trouble};
use crate::metrics::{Metrics, SinkNames};
use crate::store::index::IndexWriter;
use crate::store::{Reader, StoreError};
use crate::trail::Event;

/// Its metrics: `toolgate_index_indexed_events_total`, `toolgate_index_watermark`,
/// `toolgate_index_lag_events` (the unindexed tail), ….
const NAMES: SinkNames = SinkNames {
    delivered: "indexed_events",
    delivered_help: "Events added to the auditors' index",
    taken: "indexed",
    destination: "the auditors' index",
    position: "watermark",
};

/// Events per batch: large, so that a batch touches each page of an index once for many
/// events.
const BATCH: u32 = 5000;

/// The least time between two batches under load (a lone commit is indexed at once).
const GAP: Duration = Duration::from_millis(50);

/// The index follower of the trail at `path`.
pub fn follower(path: &std::path::Path, metrics: &Metrics) -> Result<Follower<Index>, StoreError> {
    let sink = Index { index: IndexWriter::open(path)? };
    let follower = Follower::new(sink, BATCH, Duration::from_millis(100)).coalescing(GAP);
    Ok(follower.measured(metrics, NAMES))
}

/// The index's sink.
#[derive(Debug)]
pub struct Index {
    index: IndexWriter,
}

fn failed(error: StoreError) -> Trouble {
    Trouble::Failed(format!("cannot write the index: {error}"))
}

impl Sink for Index {
    const NAME: &'static str = "index";
    const DOING: &'static str = "indexing";
    const AGAIN: &'static str = "indexing again";

    /// The watermark, if it is an event of this trail; otherwise the index is emptied and
    /// built again from the first event.
    async fn resume(&mut self, reader: &Reader) -> Result<i64, Trouble> {
        self.index.resume(reader).await.map_err(failed)
    }

    async fn take(&mut self, _reader: &Reader, events: Vec<Event>) -> Result<Taken, Trouble> {
        let through = events.last().map_or(0, |e| e.seq);
        let counted = events.len() as u64;
        self.index.add(events).await.map_err(failed)?;
        Ok(Taken { through, counted, waits: false })
    }
}
