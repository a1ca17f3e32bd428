//! Verifying an archive without the trail: its `checkpoint` opened with the log's key; every
//! entry bundle read, each leaf hashed into the tree, whose root must be the checkpoint's and
//! whose nodes must be the hash tiles'; the events beside each bundle checked as one chain
//! (each row's hash recomputed, each link), each row's hash the data of its leaf.

use std::collections::BTreeMap;

use super::tiles::{self, Tile};
use super::{Archive, ArchiveError};
use crate::store::Reader;
use crate::trail::checkpoint::Checkpoint;
use crate::trail::csv::{Guard, check_header};
use crate::trail::note::NoteVerifier;
use crate::trail::{Event, Frontier, Hash, Verifier, decode, leaf_hash};

/// What a verification found.
#[derive(Debug, Default)]
pub struct Found {
    /// The checkpoint's tree size: the events the archive proves.
    pub size: u64,
    /// The events checked.
    pub events: u64,
    /// Each problem, naming its object.
    pub problems: Vec<String>,
    /// With [`verify`]'s `at`: the root of the tree of that many leaves, and the last leaf's
    /// data (the chain hash of the event at that seq).
    pub at: Option<(Hash, Hash)>,
}

/// Verifies the archive against the log's verifier key; with `at`, also finds the root and
/// the last leaf of the tree of that many leaves (to join the archive to a pruned trail).
pub async fn verify(
    archive: &Archive,
    key: &NoteVerifier,
    at: Option<u64>,
) -> Result<Found, ArchiveError> {
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
            let made = tree.push(leaf);
            if Some(tree.size()) == at {
                found.at = Some((tree.root(), *leaf));
            }
            for (node, hash) in made {
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
    let rows = match rows_of(&events, tile.width) {
        Ok(rows) => rows,
        Err(e) => {
            found.problems.push(format!("{path}: {e}"));
            return Ok(Some(leaves));
        }
    };
    let mut count = 0;
    for (i, row) in rows.into_iter().enumerate() {
        let event = match row {
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

/// The rows of an events object of a tile of `width` leaves (a CSV export's, header first),
/// each read or why not; why not, when the header does not read or there are more rows than
/// leaves (an object from a store that may be anyone's is read no further than that).
pub fn rows_of(bytes: &[u8], width: u64) -> Result<Vec<Result<Event, String>>, String> {
    let mut rows = ::csv::ReaderBuilder::new().has_headers(false).from_reader(bytes);
    let mut records = rows.records();
    let header = match records.next() {
        Some(header) => header.map_err(|e| e.to_string())?,
        None => return Err("empty".into()),
    };
    let header = check_header(&header).map_err(|e| e.to_string())?.guarded(Guard::Leading);
    let most = usize::try_from(width).unwrap_or(usize::MAX);
    let read: Vec<_> = records
        .take(most.saturating_add(1))
        .map(|r| {
            r.map_err(|e| e.to_string()).and_then(|r| header.parse(&r).map_err(|e| e.to_string()))
        })
        .collect();
    if read.len() > most {
        return Err(format!("more rows than its {width} leaves"));
    }
    Ok(read)
}

/// Whether the archive holds events `first` through `through` exactly as the trail does,
/// before they may leave the trail: the archive's checkpoint is signed by `key`, covers them
/// and has the trail's root at its size; for every level-0 tile of the range, the entry
/// bundle's leaves, the hash tile and every archived event are the trail's. The problems
/// found, each naming its object (none: it holds them).
pub async fn holds(
    archive: &Archive,
    key: &NoteVerifier,
    reader: &Reader,
    first: i64,
    through: i64,
) -> Result<Vec<String>, HoldsError> {
    let (first, through) = (first.max(1).unsigned_abs(), through.unsigned_abs());
    let checkpoint = match covering(archive, key, through).await? {
        Ok(checkpoint) => checkpoint,
        Err(problem) => return Ok(vec![problem]),
    };
    let mut problems = Vec::new();
    if reader.root(checkpoint.size).await? != checkpoint.root {
        problems.push("checkpoint: its root is not the trail's at its size".into());
    }
    let tiles = tiles::at_level(checkpoint.size, 0)
        .filter(|t| t.first() + t.width >= first && t.first() < through);
    for tile in tiles {
        // The tile's leaves from `first` on: those before it left the file with a prune.
        let skip = first.saturating_sub(1).saturating_sub(tile.first()).min(tile.width);
        let after = i64::try_from(tile.first() + skip).map_err(|_| HoldsError::Range)?;
        let width = u32::try_from(tile.width - skip).map_err(|_| HoldsError::Range)?;
        let kept = reader.query(&crate::trail::Filter::default(), after, width).await?;
        if kept.len() != width as usize {
            problems.push(format!("{}: the trail holds {} of its events", tile.path(), kept.len()));
            continue;
        }
        problems.extend(tile_holds(archive, tile, skip, &kept).await?);
    }
    Ok(problems)
}

/// The archive's checkpoint, signed by `key`, when it covers `through` events; otherwise the
/// problem, naming the object.
pub async fn covering(
    archive: &Archive,
    key: &NoteVerifier,
    through: u64,
) -> Result<Result<Checkpoint, String>, ArchiveError> {
    let Some(note) = archive.get("checkpoint").await? else {
        return Ok(Err("checkpoint: missing".into()));
    };
    let checkpoint = match Checkpoint::open(&String::from_utf8_lossy(&note), key) {
        Ok(checkpoint) => checkpoint,
        Err(e) => return Ok(Err(format!("checkpoint: {e}"))),
    };
    if checkpoint.size < through {
        return Ok(Err(format!("checkpoint: covers {} events, not {through}", checkpoint.size)));
    }
    Ok(Ok(checkpoint))
}

/// Whether the level-0 `tile` (as wide as the archive's checkpoint makes it) holds `kept`, the
/// trail's events from its leaf `skip` on, exactly: the entry bundle's leaves, the hash tile's
/// hashes and the archived events. The problems found, each naming its object.
pub async fn tile_holds(
    archive: &Archive,
    tile: Tile,
    skip: u64,
    kept: &[Event],
) -> Result<Vec<String>, HoldsError> {
    let mut problems = Vec::new();
    let skip = usize::try_from(skip).map_err(|_| HoldsError::Range)?;
    let end = skip.saturating_add(kept.len());
    let leaves: Vec<Hash> = kept.iter().filter_map(|e| decode(&e.hash)).collect();
    let hashes: Vec<Hash> = leaves.iter().map(|leaf| leaf_hash(leaf)).collect();
    let bundle = archive.get(&tile.entries_path()).await?;
    let bundle = bundle.as_deref().and_then(tiles::read_entry_bundle);
    let bundle = bundle.filter(|b| b.len() as u64 == tile.width);
    let held = bundle.as_ref().and_then(|b| b.get(skip..end));
    if leaves.len() != kept.len()
        || held.is_none_or(|held| held.iter().map(Vec::as_slice).ne(leaves.iter().map(|l| &l[..])))
    {
        problems.push(format!("{}: not the trail's leaves", tile.entries_path()));
    }
    let hash_tile = archive.get(&tile.path()).await?;
    let held = hash_tile.as_deref().and_then(|b| tiles::read_hash_tile(b, tile.width));
    if held.as_ref().and_then(|h| h.get(skip..end)) != Some(&hashes[..]) {
        problems.push(format!("{}: not the trail's hashes", tile.path()));
    }
    let events = archive.get(&tile.events_path()).await?.unwrap_or_default();
    let held: Option<Vec<Event>> = rows_of(&events, tile.width)
        .ok()
        .and_then(|rows| rows.into_iter().map(Result::ok).collect());
    if held.as_ref().and_then(|h| h.get(skip..end)) != Some(kept) {
        problems.push(format!("{}: not the trail's events", tile.events_path()));
    }
    Ok(problems)
}

/// Why [`holds`] could not look.
#[derive(Debug, thiserror::Error)]
pub enum HoldsError {
    #[error(transparent)]
    Archive(#[from] ArchiveError),
    #[error(transparent)]
    Store(#[from] crate::store::StoreError),
    #[error("a tile beyond what the trail can number")]
    Range,
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
