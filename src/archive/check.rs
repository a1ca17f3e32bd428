//! Verifying an archive without the trail: its `checkpoint` opened with the log's key; every
//! entry bundle read, each leaf hashed into the tree, whose root must be the checkpoint's and
//! whose nodes must be the hash tiles'; the events beside each bundle checked as one chain
//! (each row's hash recomputed, each link), each row's hash the data of its leaf.

use std::collections::BTreeMap;

use super::tiles::{self, Tile};
use super::{Archive, ArchiveError};
use crate::trail::checkpoint::Checkpoint;
use crate::trail::csv::check_header;
use crate::trail::note::NoteVerifier;
use crate::trail::{Frontier, Hash, Verifier, decode, leaf_hash};

/// What a verification found.
#[derive(Debug, Default)]
pub struct Found {
    /// The checkpoint's tree size: the events the archive proves.
    pub size: u64,
    /// The events checked.
    pub events: u64,
    /// Each problem, naming its object.
    pub problems: Vec<String>,
}

/// Verifies the archive against the log's verifier key.
pub async fn verify(archive: &Archive, key: &NoteVerifier) -> Result<Found, ArchiveError> {
    let mut found = Found::default();
    let Some(note) = archive.get("checkpoint").await? else {
        found.problems.push("checkpoint: missing".into());
        return Ok(found);
    };
    let checkpoint = match Checkpoint::open(&String::from_utf8_lossy(&note), key) {
        Ok(checkpoint) => checkpoint,
        Err(e) => {
            found.problems.push(format!("checkpoint: {e}"));
            return Ok(found);
        }
    };
    found.size = checkpoint.size;
    let mut tree = Frontier::default();
    // The nodes the leaves complete, by height: what the hash tiles above level 0 must hold.
    let mut nodes: BTreeMap<(u32, u64), Hash> = BTreeMap::new();
    let mut chain = Verifier::default();
    for tile in tiles::at_level(checkpoint.size, 0) {
        let leaves = match leaves(archive, tile, &mut chain, &mut found).await? {
            Some(leaves) => leaves,
            None => return Ok(found),
        };
        let hashes: Vec<Hash> = leaves.iter().map(|leaf| leaf_hash(leaf)).collect();
        expect_tile(archive, tile, &hashes, &mut found).await?;
        for leaf in &leaves {
            for (node, hash) in tree.push(leaf) {
                if node.level % 8 == 0 && node.level > 0 {
                    nodes.insert((node.level / 8, node.index), hash);
                }
            }
        }
    }
    for level in tiles::levels(checkpoint.size).skip(1) {
        for tile in tiles::at_level(checkpoint.size, level) {
            let want: Option<Vec<Hash>> = (tile.first()..tile.first() + tile.width)
                .map(|index| nodes.get(&(level, index)).copied())
                .collect();
            match want {
                Some(want) => expect_tile(archive, tile, &want, &mut found).await?,
                None => {
                    found.problems.push(format!("{}: nodes the leaves do not make", tile.path()))
                }
            }
        }
    }
    if tree.root() != checkpoint.root {
        found.problems.push("checkpoint: its root is not the root of the archived leaves".into());
    }
    Ok(found)
}

/// The leaves of the level-0 `tile`, with its events checked; `None` when the archive stops
/// there (a missing or unreadable bundle: nothing after it can be checked).
async fn leaves(
    archive: &Archive,
    tile: Tile,
    chain: &mut Verifier,
    found: &mut Found,
) -> Result<Option<Vec<Hash>>, ArchiveError> {
    let path = tile.entries_path();
    let Some(bundle) = archive.get(&path).await? else {
        found.problems.push(format!("{path}: missing"));
        return Ok(None);
    };
    let leaves: Option<Vec<Hash>> = tiles::read_entry_bundle(&bundle)
        .and_then(|entries| entries.into_iter().map(|e| e.try_into().ok()).collect())
        .filter(|leaves: &Vec<Hash>| leaves.len() as u64 == tile.width);
    let Some(leaves) = leaves else {
        found
            .problems
            .push(format!("{path}: not an entry bundle of {} 32-byte leaves", tile.width));
        return Ok(None);
    };
    let path = tile.events_path();
    let Some(events) = archive.get(&path).await? else {
        found.problems.push(format!("{path}: missing"));
        return Ok(Some(leaves));
    };
    let mut rows = ::csv::ReaderBuilder::new().has_headers(false).from_reader(events.as_slice());
    let mut records = rows.records();
    let header = match records.next().map(|h| {
        h.map_err(|e| e.to_string()).and_then(|h| check_header(&h).map_err(|e| e.to_string()))
    }) {
        Some(Ok(header)) => header,
        Some(Err(e)) => {
            found.problems.push(format!("{path}: {e}"));
            return Ok(Some(leaves));
        }
        None => {
            found.problems.push(format!("{path}: empty"));
            return Ok(Some(leaves));
        }
    };
    let mut count = 0;
    for (i, record) in records.enumerate() {
        let event = match record
            .map_err(|e| e.to_string())
            .and_then(|r| header.parse(&r).map_err(|e| e.to_string()))
        {
            Ok(event) => event,
            Err(e) => {
                found.problems.push(format!("{path}: row {}: {e}", i + 1));
                continue;
            }
        };
        count += 1;
        found.events += 1;
        for problem in chain.check(&event) {
            found.problems.push(format!("{path}: {problem}"));
        }
        // The row's place in the tile, from its seq (hostile: any i64).
        let place = event
            .seq
            .checked_sub(1)
            .and_then(|i| u64::try_from(i).ok())
            .and_then(|i| i.checked_sub(tile.first()));
        let leaf = place.and_then(|i| leaves.get(usize::try_from(i).ok()?));
        match (decode(&event.hash), leaf) {
            (Some(hash), Some(leaf)) if hash == *leaf => {}
            _ => found
                .problems
                .push(format!("{path}: seq {}: its hash is not its leaf's data", event.seq)),
        }
    }
    if count != tile.width {
        found.problems.push(format!("{path}: {count} events for {} leaves", tile.width));
    }
    Ok(Some(leaves))
}

/// Checks that the hash tile `tile` holds `want`.
async fn expect_tile(
    archive: &Archive,
    tile: Tile,
    want: &[Hash],
    found: &mut Found,
) -> Result<(), ArchiveError> {
    let path = tile.path();
    match archive.get(&path).await? {
        None => found.problems.push(format!("{path}: missing")),
        Some(bytes) => match tiles::read_hash_tile(&bytes, tile.width) {
            Some(held) if held == want => {}
            Some(_) => found.problems.push(format!("{path}: hashes other than the leaves make")),
            None => found.problems.push(format!("{path}: not a tile of {} hashes", tile.width)),
        },
    }
    Ok(())
}
