//! What a prune took from the trail, read back from the archive for the auditors' reads
//! (`audit/trails/sqlite.rs`): a level-0 tile at a time, its leaves checked against the nodes
//! the file kept above them (the node of height 8 over a full tile; the frontier's nodes over
//! the last, partial one) before its events or its nodes are used. An archive that does not
//! hold what the trail kept is an error naming the object, never an answer.

use super::tiles::{self, Tile, WIDTH};
use super::{Archive, ArchiveError};
use crate::store::{Known, Reader, StoreError};
use crate::trail::checkpoint::Checkpoint;
use crate::trail::{Event, Frontier, Hash, Node, decode, event_hash};

/// Why a pruned range could not be read back.
#[derive(Debug, thiserror::Error)]
pub enum PrunedError {
    #[error(transparent)]
    Archive(#[from] ArchiveError),
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("the archive's {0} is not what the trail kept: {1}")]
    Tampered(String, &'static str),
}

/// The leaves `start` … `end − 1` (indices: seq − 1) of a level-0 tile of the range pruned
/// through `through`, as the archive's tile holds them.
struct Leaves {
    tile: Tile,
    start: u64,
    data: Vec<Hash>,
}

/// The `index`th level-0 tile's leaves up to `through`, vouched for by the nodes the file kept.
async fn leaves(
    archive: &Archive,
    reader: &Reader,
    through: u64,
    index: u64,
) -> Result<Leaves, PrunedError> {
    let start = index * WIDTH;
    let count = through.saturating_sub(start).min(WIDTH);
    // The tile as the archive wrote it: full, or as wide as its checkpoint's tree reaches.
    let width = match count {
        WIDTH => WIDTH,
        _ => {
            let note = archive.get("checkpoint").await?.unwrap_or_default();
            let size = Checkpoint::read(&String::from_utf8_lossy(&note)).map_or(0, |c| c.size);
            size.saturating_sub(start).min(WIDTH)
        }
    };
    let tile = Tile { level: 0, index, width };
    let tampered = |what| PrunedError::Tampered(tile.entries_path(), what);
    if count == 0 || width < count {
        return Err(tampered("it does not reach the events pruned"));
    }
    let bundle = archive.get(&tile.entries_path()).await?.ok_or_else(|| tampered("missing"))?;
    let data: Vec<Hash> = tiles::read_entry_bundle(&bundle)
        .filter(|entries| entries.len() as u64 == width)
        .and_then(|entries| entries.into_iter().map(|e| e.try_into().ok()).collect())
        .ok_or_else(|| tampered("not an entry bundle of 32-byte leaves"))?;
    let data = data.into_iter().take(usize::try_from(count).unwrap_or(usize::MAX)).collect();
    let leaves = Leaves { tile, start, data };
    let (made, _) = nodes(&leaves);
    // The largest perfect subtrees of the leaves pruned: the file kept each of them.
    for level in (0..=8).rev().filter(|level| count & (1 << level) != 0) {
        let offset = (count >> (level + 1)) << (level + 1);
        let node = Node { level, index: (start + offset) >> level };
        let kept = reader.nodes(node.level, node.index, 1).await?;
        if kept.first() != made.get(&node) {
            return Err(tampered("its leaves do not make the nodes the trail kept"));
        }
    }
    Ok(leaves)
}

/// The perfect nodes the leaves make (heights 0 to 8, indexed as in the whole tree), and how
/// many leaves.
fn nodes(leaves: &Leaves) -> (Known, u64) {
    let mut frontier = Frontier::default();
    let mut known = Known::new();
    for data in &leaves.data {
        for (node, hash) in frontier.push(data) {
            let index = (leaves.start >> node.level) + node.index;
            known.insert(Node { level: node.level, index }, hash);
        }
    }
    (known, frontier.size())
}

/// The nodes below height 8 of the `index`th level-0 tile of the range pruned through
/// `through`: what a proof into it needs beside what the file kept.
pub async fn known(
    archive: &Archive,
    reader: &Reader,
    through: u64,
    index: u64,
) -> Result<Known, PrunedError> {
    Ok(nodes(&leaves(archive, reader, through, index).await?).0)
}

/// The events of the `index`th level-0 tile of the range pruned through `through`, in seq
/// order: each row's hash recomputed and equal to its leaf's data.
pub async fn events(
    archive: &Archive,
    reader: &Reader,
    through: u64,
    index: u64,
) -> Result<Vec<Event>, PrunedError> {
    let leaves = leaves(archive, reader, through, index).await?;
    let path = leaves.tile.events_path();
    let tampered = |what| PrunedError::Tampered(path.clone(), what);
    let bytes = archive.get(&path).await?.ok_or_else(|| tampered("missing"))?;
    let rows = super::check::rows_of(&bytes, leaves.tile.width)
        .map_err(|_| tampered("not a CSV export of the tile's events"))?;
    let mut events = Vec::with_capacity(leaves.data.len());
    for (row, leaf) in rows.into_iter().zip(&leaves.data) {
        let event = row.map_err(|_| tampered("a row does not read"))?;
        let seq = leaves.start + events.len() as u64 + 1;
        // The stored text, as the trail writes it: lower-case hex.
        let prev = decode(&event.prev_hash).filter(|p| hex::encode(p) == event.prev_hash);
        let recomputed = prev.map(|prev| event_hash(&prev, &event));
        if u64::try_from(event.seq).ok() != Some(seq)
            || event.hash != hex::encode(leaf)
            || recomputed.as_ref() != Some(leaf)
        {
            return Err(tampered("an event is not its leaf's"));
        }
        events.push(event);
    }
    if events.len() != leaves.data.len() {
        return Err(tampered("fewer events than leaves"));
    }
    Ok(events)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn leaves(start: u64, count: u64) -> Leaves {
        let data = (0..count).map(|i| [i as u8; 32]).collect();
        Leaves { tile: Tile { level: 0, index: start / WIDTH, width: WIDTH }, start, data }
    }

    #[test]
    fn a_tile_makes_the_nodes_of_the_whole_tree_below_height_nine() {
        let (known, size) = nodes(&leaves(512, 256));
        assert_eq!(size, 256);
        // 256 leaves, 128 pairs, … one node of height 8: 511 nodes, at the tile's place.
        assert_eq!(known.len(), 511);
        assert!(known.contains_key(&Node { level: 0, index: 512 }));
        assert!(known.contains_key(&Node { level: 8, index: 2 }));
        let (known, _) = nodes(&leaves(256, 5));
        assert_eq!(known.len(), 5 + 2 + 1, "five leaves make two pairs and one of four");
        assert!(known.contains_key(&Node { level: 2, index: 64 }));
    }
}
