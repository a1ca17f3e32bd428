//! The archive sink: the trail's committed events go to the archive (`crate::archive`) as
//! C2SP tlog-tiles. Each full tile of 256 leaves is written once its last event is committed
//! (its entry bundle, its events, its hash tile, and the tiles above it it completes); the
//! partial tiles and the `checkpoint` follow each new signed checkpoint once the follower has
//! caught up. Where it stands is what the archive's `checkpoint` says, so a restart resumes
//! from the archive itself: at least once, each object compared with what it holds.

use std::time::{Duration, Instant};

use super::{Follower, Sink, Taken, Trouble};
use crate::archive::tiles::{self, Tile, WIDTH};
use crate::archive::{Archive, ArchiveError};
use crate::config::ArchiveConfig;
use crate::metrics::{Metrics, SinkNames};
use crate::store::{Reader, StoreError};
use crate::trail::checkpoint::Checkpoint;
use crate::trail::csv::{CsvError, CsvWriter, Guard};
use crate::trail::{Event, Hash, decode, leaf_hash};

/// Its metrics: `toolgate_archive_archived_events_total`, `toolgate_archive_lag_events`, ….
const NAMES: SinkNames = SinkNames {
    delivered: "archived_events",
    delivered_help: "Events written to the archive in full tiles",
    taken: "archived",
    destination: "the archive",
    position: "archived_seq",
};

/// Events per read: a few tiles.
const BATCH: u32 = 4 * 256;

/// The archiver `[archive]` asks for, if it asks for one.
pub fn follower(
    config: &ArchiveConfig,
    metrics: &Metrics,
) -> Result<Option<Follower<Archiver>>, ArchiveError> {
    let Some(url) = &config.url else { return Ok(None) };
    let archive =
        Archive::open(url, &config.options)?.locking(config.lock_days, config.lock_mode)?;
    let sink = Archiver::new(archive);
    let follower = Follower::new(sink, BATCH, Duration::from_millis(200));
    // Cosignatures come without a commit: looked for every second once caught up.
    let follower = follower.looking_every(Duration::from_secs(1));
    Ok(Some(follower.coalescing(super::COALESCE).measured(metrics, NAMES)))
}

/// The archive's sink.
#[derive(Debug)]
pub struct Archiver {
    archive: Archive,
    reader: Option<Reader>,
    /// Leaves in the full level-0 tiles written.
    tiled: u64,
    /// The events after them: fewer than a tile.
    pending: Vec<Event>,
    /// The tree size of the checkpoint the archive holds.
    published: u64,
    /// That checkpoint's note, with the cosignatures it had then.
    note: String,
    /// When `take` last looked for a checkpoint to publish.
    looked: Instant,
    /// The full tiles being written.
    in_flight: std::collections::VecDeque<tokio::task::JoinHandle<Result<(), Trouble>>>,
}

/// How often a follower that never catches up publishes the latest checkpoint.
const PUBLISH_EVERY: Duration = Duration::from_secs(1);

fn trouble(error: ArchiveError) -> Trouble {
    match error {
        // The archive holds another trail's object there: an alarm, until an operator moves it.
        ArchiveError::Different(..) => Trouble::Refused(error.to_string()),
        // The store failed, or wrote other than it was given, or did not lock: tried again.
        ArchiveError::Store(_) | ArchiveError::ReadBack(_) | ArchiveError::Lock(..) => {
            Trouble::Failed(error.to_string())
        }
        // Refused when the archive was opened, or never written: kept as failures all the same.
        ArchiveError::Location(..) | ArchiveError::Secret(_) | ArchiveError::TooLarge(..) => {
            Trouble::Failed(error.to_string())
        }
    }
}

/// `events` as a CSV export, header first.
fn csv_of(events: &[Event]) -> Result<Vec<u8>, CsvError> {
    // The archive's objects are written once: their guard never changes (see `Guard`).
    let mut csv = CsvWriter::guarded(Vec::new(), false, Guard::Leading)?;
    for event in events {
        csv.write(event)?;
    }
    csv.finish()
}

fn unreadable(error: StoreError) -> Trouble {
    Trouble::Failed(format!("cannot read the trail to archive it: {error}"))
}

impl Archiver {
    fn new(archive: Archive) -> Self {
        Self {
            archive,
            reader: None,
            tiled: 0,
            pending: Vec::new(),
            published: 0,
            note: String::new(),
            looked: Instant::now(),
            in_flight: std::collections::VecDeque::new(),
        }
    }

    fn reader(&self) -> Result<&Reader, Trouble> {
        self.reader.as_ref().ok_or_else(|| Trouble::Failed("not resumed".into()))
    }

    /// The archive and the trail, for the writes of tiles that run on tasks of their own.
    fn writes(&self) -> Result<Writes, Trouble> {
        Ok(Writes { archive: self.archive.clone(), reader: self.reader()?.clone() })
    }

    /// Writes the full tile of the pending events, and the full tiles above it it completes,
    /// on a task of its own: the next events are read and encoded while these are written
    /// (at most [`IN_FLIGHT`] tiles at once; [`Self::settle`] waits for them).
    async fn write_full_tile(&mut self) -> Result<(), Trouble> {
        let index = self.tiled / WIDTH;
        let events = std::mem::take(&mut self.pending);
        let writes = self.writes()?;
        self.in_flight.push_back(tokio::spawn(async move {
            writes.leaves(Tile { level: 0, index, width: WIDTH }, &events).await?;
            let done = index + 1;
            for level in 1..8u32 {
                let below = WIDTH.pow(level);
                if !done.is_multiple_of(below) {
                    break;
                }
                writes.nodes(Tile { level, index: done / below - 1, width: WIDTH }).await?;
            }
            Ok(())
        }));
        self.tiled += WIDTH;
        if self.in_flight.len() > IN_FLIGHT {
            self.settle_one().await?;
        }
        Ok(())
    }

    /// Waits for the oldest tile in flight.
    async fn settle_one(&mut self) -> Result<(), Trouble> {
        let Some(write) = self.in_flight.pop_front() else { return Ok(()) };
        let done = write.await.unwrap_or_else(|e| Err(Trouble::Failed(e.to_string())));
        if done.is_err() {
            // What follows a failed tile goes again after the resume, from the archive.
            self.settle().await.ok();
        }
        done
    }

    /// Waits for every tile in flight; the first failure.
    async fn settle(&mut self) -> Result<(), Trouble> {
        let mut first = Ok(());
        while let Some(write) = self.in_flight.pop_front() {
            let done = write.await.unwrap_or_else(|e| Err(Trouble::Failed(e.to_string())));
            first = first.and(done);
        }
        first
    }

    /// The events of a partial level-0 tile: the pending ones after the full tiles, or the
    /// first of a full tile already written (read from the archive: some may have left the
    /// trail's file with a prune since).
    async fn partial(&self, tile: Tile) -> Result<Vec<Event>, Trouble> {
        let width = usize::try_from(tile.width).unwrap_or(usize::MAX);
        if tile.first() == self.tiled {
            let pending = self.pending.get(..width);
            return pending
                .map(<[Event]>::to_vec)
                .ok_or_else(|| Trouble::Failed(format!("{}: fewer events pending", tile.path())));
        }
        // The store may be anyone's: the full tile's events are believed only as one chain
        // whose leaves make the tree's node over them, which the trail keeps (even pruned).
        let full = Tile { width: WIDTH, ..tile };
        let path = full.events_path();
        let bytes = self.archive.get(&path).await.map_err(trouble)?;
        let events = chained(&bytes.unwrap_or_default(), full)
            .ok_or_else(|| Trouble::Refused(format!("{path}: not one chain of a full tile")))?;
        let mut tree = crate::trail::Frontier::default();
        for event in &events {
            tree.push(&decode(&event.hash).unwrap_or_default());
        }
        let node = self.reader()?.nodes(8, full.index, 1).await.map_err(unreadable)?;
        if node.first() != Some(&tree.root()) {
            return Err(Trouble::Refused(format!("{path}: not the trail's events")));
        }
        Ok(events.into_iter().take(width).collect())
    }

    /// Archives the trail's latest checkpoint, if it is newer than the archive's: its partial
    /// tiles, then the checkpoint with its cosignatures (again when new cosignatures came).
    async fn publish(&mut self) -> Result<(), Trouble> {
        // The checkpoint names no tree the archive does not hold: the tiles first.
        self.settle().await?;
        let reader = self.reader()?.clone();
        let Some(event) = reader.last_checkpoint().await.map_err(unreadable)? else {
            return Ok(());
        };
        let note = reader.cosigned_note(&event).await.map_err(unreadable)?;
        let size = Checkpoint::read(&note)
            .map_err(|e| Trouble::Failed(format!("the trail's checkpoint does not read: {e}")))?
            .size;
        let cosigned = size == self.published && note != self.note;
        if !cosigned && (size <= self.published || size > self.tiled + self.pending.len() as u64) {
            return Ok(());
        }
        for level in tiles::levels(size).filter(|_| !cosigned) {
            let Some(tile) = tiles::at_level(size, level).last().filter(|t| !t.full()) else {
                continue;
            };
            if level == 0 {
                let events = self.partial(tile).await?;
                self.writes()?.leaves(tile, &events).await?;
            } else {
                self.writes()?.nodes(tile).await?;
            }
        }
        self.archive.put("checkpoint", note.clone().into_bytes()).await.map_err(trouble)?;
        self.published = size;
        self.note = note;
        tracing::debug!(size, "archived a checkpoint");
        Ok(())
    }
}

/// The events of an events object of `tile`, when they read as one chain from its first seq
/// (each row's hash its content's, each linked to the one before).
fn chained(bytes: &[u8], tile: Tile) -> Option<Vec<Event>> {
    let rows = crate::archive::check::rows_of(bytes, tile.width).ok()?;
    let events: Vec<Event> = rows.into_iter().collect::<Result<_, _>>().ok()?;
    let first = i64::try_from(tile.first() + 1).ok()?;
    let mut chain = crate::trail::Verifier::starting_unlinked(first);
    let linked = events.iter().all(|event| chain.check(event).is_empty());
    (linked && events.len() as u64 == tile.width).then_some(events)
}

/// Tiles being written past which the next full tile waits for the oldest (so at most one
/// more, for a moment).
const IN_FLIGHT: usize = 3;

/// What a tile's writes need, owned, for a task of their own.
#[derive(Debug, Clone)]
struct Writes {
    archive: Archive,
    reader: Reader,
}

impl Writes {
    /// Writes the level-0 tile of `events` (its entry bundle, its events, its hashes).
    async fn leaves(&self, tile: Tile, events: &[Event]) -> Result<(), Trouble> {
        let leaves = events
            .iter()
            .map(|e| {
                decode(&e.hash).ok_or_else(|| {
                    Trouble::Failed(format!("seq {}: a hash that does not read", e.seq))
                })
            })
            .collect::<Result<Vec<Hash>, _>>()?;
        let csv = csv_of(events).map_err(|e| Trouble::Failed(e.to_string()))?;
        let hashes: Vec<Hash> = leaves.iter().map(|leaf| leaf_hash(leaf)).collect();
        let archive = &self.archive;
        let (entries, events, tile) = (tile.entries_path(), tile.events_path(), tile.path());
        // The three objects at once: each is its own request to the store.
        let (entries, events, hashes) = tokio::join!(
            archive.put_once(&entries, tiles::entry_bundle(&leaves)),
            archive.put_once(&events, csv),
            archive.put_once(&tile, tiles::hash_tile(&hashes)),
        );
        entries.and(events).and(hashes).map_err(trouble)
    }

    /// Writes the hash tile `tile` above level 0, from the trail's stored nodes.
    async fn nodes(&self, tile: Tile) -> Result<(), Trouble> {
        let nodes = self
            .reader
            .nodes(8 * tile.level, tile.first(), tile.width)
            .await
            .map_err(unreadable)?;
        self.archive.put_once(&tile.path(), tiles::hash_tile(&nodes)).await.map_err(trouble)
    }
}

impl Sink for Archiver {
    const NAME: &'static str = "archive";
    const DOING: &'static str = "archiving";
    const AGAIN: &'static str = "archiving again";

    fn destination(&self) -> &str {
        self.archive.location()
    }

    /// The full tiles under the archive's checkpoint are there; the rest is written again.
    async fn resume(&mut self, reader: &Reader) -> Result<i64, Trouble> {
        // Tiles still in flight from before the trouble finish first (or fail: they are
        // written again from what the archive holds).
        self.settle().await.ok();
        self.reader = Some(reader.clone());
        let held = self.archive.get("checkpoint").await.map_err(trouble)?;
        let note = held.map(|note| String::from_utf8_lossy(&note).into_owned());
        let size = match &note {
            None => 0,
            Some(note) => {
                let held = Checkpoint::read(note).map_err(|e| {
                    Trouble::Refused(format!("the archive's checkpoint does not read: {e}"))
                })?;
                let length = reader.tree_size().await.map_err(unreadable)?;
                if length < held.size {
                    return Err(Trouble::Refused(format!(
                        "the archive's checkpoint is not of this trail: it covers {} events, \
                         the trail has {length}",
                        held.size
                    )));
                }
                if reader.root(held.size).await.map_err(unreadable)? != held.root {
                    return Err(Trouble::Refused(
                        "the archive's checkpoint is not of this trail: another root".into(),
                    ));
                }
                held.size
            }
        };
        self.published = size;
        self.note = note.unwrap_or_default();
        self.tiled = size / WIDTH * WIDTH;
        self.pending.clear();
        // Events of the partial tile that a prune took from the file are taken from the
        // archive, which held them (verified) before they went.
        let first = reader.first_seq().await.map_err(unreadable)?.unwrap_or(1);
        let gone = u64::try_from(first - 1).unwrap_or(0).min(size);
        if gone > self.tiled {
            let tile = Tile { level: 0, index: self.tiled / WIDTH, width: size - self.tiled };
            // Believed only as one chain ending in the hash the first event the file keeps
            // links to (the prune's recorded hash, or where its deletions stand).
            let path = tile.events_path();
            let bytes = self.archive.get(&path).await.map_err(trouble)?;
            let kept = reader.event(first).await.map_err(unreadable)?;
            let links = kept.map(|e| (first - 1, e.prev_hash));
            let events = chained(&bytes.unwrap_or_default(), tile).and_then(|mut events| {
                events.truncate(usize::try_from(gone - self.tiled).ok()?);
                let ends = events.last().map(|e| (e.seq, e.hash.clone()));
                (ends.is_some() && ends == links).then_some(events)
            });
            let events =
                events.ok_or_else(|| Trouble::Refused(format!("{path}: not the events pruned")))?;
            self.pending = events;
        }
        let through = self.tiled + self.pending.len() as u64;
        Ok(i64::try_from(through).unwrap_or(i64::MAX))
    }

    async fn take(&mut self, _reader: &Reader, events: Vec<Event>) -> Result<Taken, Trouble> {
        let through = events.last().map_or(0, |e| e.seq);
        let counted = events.len() as u64;
        for event in events {
            let expected = self.tiled + self.pending.len() as u64 + 1;
            if u64::try_from(event.seq).ok() != Some(expected) {
                return Err(Trouble::Failed(format!(
                    "seq {} came where {expected} was due",
                    event.seq
                )));
            }
            self.pending.push(event);
            if self.pending.len() as u64 == WIDTH {
                self.write_full_tile().await?;
            }
        }
        // Under a load that never lets it catch up, the archive's checkpoint still moves,
        // at most once a second.
        if self.looked.elapsed() >= PUBLISH_EVERY {
            self.looked = Instant::now();
            self.publish().await?;
        }
        Ok(Taken { through, counted, waits: false })
    }

    async fn caught_up(&mut self, _reader: &Reader, _through: i64) -> Result<(), Trouble> {
        self.publish().await
    }

    async fn close(mut self) {
        // What was taken is written before the process goes.
        if let Err(trouble) = self.settle().await {
            tracing::warn!(%trouble, "a tile in flight at shutdown was not written");
        }
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;
    use std::sync::Arc;

    use super::*;
    use crate::archive::check;
    use crate::config::{Durability, WriterConfig};
    use crate::store::Store;
    use crate::trail::Filter;
    use crate::trail::note::NoteSigner;
    use crate::trail::{Kind, Record};

    /// Archives the trail at `db` through its sink, as the follower would, from where the
    /// archive stands.
    async fn archive_all(sink: &mut Archiver, reader: &Reader) {
        let mut at = sink.resume(reader).await.unwrap();
        loop {
            let events = reader.query(&Filter::default(), at, BATCH).await.unwrap();
            if events.is_empty() {
                break;
            }
            at = sink.take(reader, events).await.unwrap().through;
        }
        sink.caught_up(reader, at).await.unwrap();
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn the_tiles_above_the_first_level_are_archived_and_verify() {
        let dir = tempfile::tempdir().unwrap();
        let metrics = Arc::new(crate::metrics::Metrics::default());
        let db = dir.path().join("t.db");
        let config = WriterConfig::default();
        let (store, thread) =
            Store::open(&db, Durability::Normal, &config, metrics, None).await.unwrap();
        // 65,536 leaves make the first full tile of level 1, and 65,600 a partial one after it.
        for _ in 0..65_600 / 1000 {
            store.writer.append(vec![Record::new(Kind::Decision); 1000]).await.unwrap();
        }
        store.writer.append(vec![Record::new(Kind::Decision); 600]).await.unwrap();
        let signer = Arc::new(NoteSigner::generate("toolgate/test").unwrap());
        crate::trust::publisher::append(&store.writer, &signer).await.unwrap();

        let url = format!("file://{}", dir.path().join("archive").display());
        let archive = Archive::open(&url, &BTreeMap::new()).unwrap();
        archive_all(&mut Archiver::new(archive.clone()), &store.reader).await;
        for tile in
            ["tile/1/000", "tile/1/001.p/0", "tile/2/000.p/1", "tile/0/255", "tile/0/256.p/64"]
        {
            let exists = dir.path().join("archive").join(tile).is_file();
            assert_eq!(exists, !tile.ends_with(".p/0"), "{tile}");
        }
        let found = check::verify(&archive, &signer.verifier(), None).await.unwrap();
        assert_eq!(
            (found.size, found.events, found.problems),
            (65_600, 65_600, Vec::<String>::new())
        );

        // A second upload resumes at the last full tile, and finds what it writes again there.
        let mut again = Archiver::new(archive.clone());
        assert_eq!(again.resume(&store.reader).await.unwrap(), 65_536);
        archive_all(&mut again, &store.reader).await;
        assert!(
            check::verify(&archive, &signer.verifier(), None).await.unwrap().problems.is_empty()
        );

        store.reader.close().await;
        drop(store);
        thread.join().await;
    }
}
