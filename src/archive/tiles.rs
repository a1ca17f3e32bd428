//! The archive's layout: C2SP `tlog-tiles` (hash tiles and entry bundles) and, beside them,
//! the events of each bundle in toolgate's own encoding.
//!
//! - `tile/<L>/<N>[.p/<W>]`: the hash tile at level L, index N: the hashes of the tree's nodes
//!   at height 8·L, indices N·256 … N·256+W−1, 32 bytes each (W = 256 for a full tile).
//! - `tile/entries/<N>[.p/<W>]`: the entry bundle of leaves N·256 …: each leaf's data behind
//!   its length as a big-endian uint16. A leaf's data is the event's 32-byte chain hash.
//! - `toolgate/events/<N>[.p/<W>]`: the same leaves' events as a CSV export
//!   (docs/csv-export.md), header first: each row re-hashes to its leaf's data.
//!
//! N is written in groups of three digits, all but the last prefixed with `x` (1234067 is
//! `x001/x234/067`). A partial tile exists for every size a checkpoint was archived at; a full
//! tile never changes.

use crate::trail::Hash;

/// Leaves (or nodes) per tile: tiles of height 8.
pub const WIDTH: u64 = 256;

/// Which tile, and how wide.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Tile {
    pub level: u32,
    pub index: u64,
    /// 1 to 256; 256 is a full tile.
    pub width: u64,
}

impl Tile {
    pub fn full(&self) -> bool {
        self.width == WIDTH
    }

    /// The hash tile's path.
    pub fn path(&self) -> String {
        format!("tile/{}/{}", self.level, self.suffix())
    }

    /// The entry bundle's path (a level-0 tile's leaves).
    pub fn entries_path(&self) -> String {
        format!("tile/entries/{}", self.suffix())
    }

    /// The path of the events of a level-0 tile's leaves.
    pub fn events_path(&self) -> String {
        format!("toolgate/events/{}", self.suffix())
    }

    fn suffix(&self) -> String {
        let mut path = format!("{:03}", self.index % 1000);
        let mut n = self.index / 1000;
        while n > 0 {
            path = format!("x{:03}/{path}", n % 1000);
            n /= 1000;
        }
        if self.full() { path } else { format!("{path}.p/{}", self.width) }
    }

    /// The first node of the tree it holds, at height 8·level.
    pub fn first(&self) -> u64 {
        self.index * WIDTH
    }
}

/// The tiles of the tree of `size` leaves at `level`, in order: the full ones and the partial
/// one at its right edge, if any.
pub fn at_level(size: u64, level: u32) -> impl Iterator<Item = Tile> {
    let nodes = size.checked_shr(8 * level).unwrap_or(0);
    let full = nodes / WIDTH;
    let partial = nodes % WIDTH;
    let fulls = (0..full).map(move |index| Tile { level, index, width: WIDTH });
    fulls.chain((partial > 0).then_some(Tile { level, index: full, width: partial }))
}

/// The levels the tree of `size` leaves has tiles at.
pub fn levels(size: u64) -> impl Iterator<Item = u32> {
    (0..8).take_while(move |&level| size.checked_shr(8 * level).unwrap_or(0) > 0)
}

/// A hash tile's bytes.
pub fn hash_tile(hashes: &[Hash]) -> Vec<u8> {
    hashes.concat()
}

/// Reads a hash tile of `width` hashes.
pub fn read_hash_tile(bytes: &[u8], width: u64) -> Option<Vec<Hash>> {
    if bytes.len() as u64 != width * 32 {
        return None;
    }
    bytes.chunks_exact(32).map(|h| h.try_into().ok()).collect()
}

/// An entry bundle of 32-byte leaf data.
pub fn entry_bundle(leaves: &[Hash]) -> Vec<u8> {
    let mut bytes = Vec::with_capacity(leaves.len() * 34);
    for leaf in leaves {
        bytes.extend_from_slice(&32u16.to_be_bytes());
        bytes.extend_from_slice(leaf);
    }
    bytes
}

/// Reads an entry bundle's entries; `None` when it is not one.
pub fn read_entry_bundle(mut bytes: &[u8]) -> Option<Vec<Vec<u8>>> {
    let mut entries = Vec::new();
    while !bytes.is_empty() {
        let (length, rest) = bytes.split_first_chunk::<2>()?;
        let length = usize::from(u16::from_be_bytes(*length));
        entries.push(rest.get(..length)?.to_vec());
        bytes = &rest[length..];
    }
    Some(entries)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_are_as_tlog_tiles_writes_them() {
        let tile = |level, index, width| Tile { level, index, width };
        assert_eq!(tile(0, 0, 256).path(), "tile/0/000");
        assert_eq!(tile(0, 5, 256).entries_path(), "tile/entries/005");
        assert_eq!(tile(1, 1234067, 256).path(), "tile/1/x001/x234/067");
        assert_eq!(tile(0, 1000, 3).path(), "tile/0/x001/000.p/3");
        assert_eq!(tile(2, 7, 255).events_path(), "toolgate/events/007.p/255");
    }

    #[test]
    fn a_size_has_full_tiles_and_one_partial_per_level() {
        assert_eq!(at_level(0, 0).count(), 0);
        let tiles: Vec<_> = at_level(70_000, 0).collect();
        assert_eq!(tiles.len(), 274);
        assert_eq!(tiles[273], Tile { level: 0, index: 273, width: 112 });
        let tiles: Vec<_> = at_level(70_000, 1).collect();
        let full = Tile { level: 1, index: 0, width: 256 };
        assert_eq!(tiles, vec![full, Tile { level: 1, index: 1, width: 17 }], "273 nodes");
        assert_eq!(at_level(70_000, 2).count(), 1, "level 2 holds the one node of height 16");
        assert_eq!(levels(70_000).collect::<Vec<_>>(), vec![0, 1, 2]);
        assert_eq!(levels(256).collect::<Vec<_>>(), vec![0, 1]);
        assert_eq!(levels(255).collect::<Vec<_>>(), vec![0]);
    }

    #[test]
    fn an_entry_bundle_reads_back_and_a_cut_one_does_not() {
        let leaves = [[1; 32], [2; 32]];
        let bundle = entry_bundle(&leaves);
        assert_eq!(bundle.len(), 68);
        assert_eq!(&bundle[..2], &[0, 32]);
        assert_eq!(read_entry_bundle(&bundle).unwrap(), vec![vec![1; 32], vec![2; 32]]);
        assert_eq!(read_entry_bundle(&bundle[..67]), None);
    }
}
