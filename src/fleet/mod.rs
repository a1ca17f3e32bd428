//! Fleets: every sidecar's trail shipped through the ingest service, which checks each batch,
//! into one PostgreSQL store, where the auditors' tools read it (docs/fleet.md). The sidecar
//! stays the fail-closed writer of its own SQLite trail; shipping follows it in the background
//! from the last seq the store holds for the node, so an ingest service or a store that is
//! down delays nothing and loses nothing.
//!
//! - [`schema`]: the store's schema (`migrations/postgres/`), applied by `toolgate fleet
//!   migrate`.
//! - [`token`]: the token a node ships with, which alone says which node it is.
//! - [`ingest`]: the ingest service: authenticate, check, write.
//! - [`store`]: the store through sqlx: the nodes' registry and the auditors' reads.
//! - [`cuts`]: what retention dropped from the store, its legal holds, the nodes' archives.
//!
//! The sidecar's side, which ships its trail, is a follower's sink: `follow::fleet`.

pub mod cuts;
pub mod ingest;
pub mod schema;
pub mod store;
pub mod token;

/// The one environment variable that holds the fleet store's URL (and its password) for every
/// command that takes `--postgres`.
pub const URL_ENV: &str = "TOOLGATE_POSTGRES_URL";

/// The tree of `size` leaves whose right edge the store kept (one hash per set bit of the
/// size, as `fleet_trees` and `fleet_prunes` keep it); `None` when the edge is not one.
pub fn tree_of(size: i64, edge: &[Vec<u8>]) -> Option<crate::trail::Frontier> {
    let mut hashes = edge.iter();
    let tree = crate::trail::Frontier::of(u64::try_from(size).ok()?, |_| {
        hashes.next().and_then(|h| <[u8; 32]>::try_from(h.as_slice()).ok()).ok_or(())
    });
    tree.ok().filter(|_| hashes.next().is_none())
}

/// What a node id is, as refusals say it.
pub const NODE_ID: &str = "1 to 128 letters, digits, `.`, `_` or `-`";

/// Whether `node` is a node id ([`NODE_ID`]).
pub fn valid_node(node: &str) -> bool {
    !node.is_empty()
        && node.len() <= 128
        && node.bytes().all(|b| b.is_ascii_alphanumeric() || b"._-".contains(&b))
}
