//! Fleets: every sidecar's trail shipped to one PostgreSQL store, checked there on arrival,
//! and read there by the auditors' tools (docs/fleet.md). The sidecar stays the fail-closed
//! writer of its own SQLite trail; shipping follows it in the background from a cursor the
//! store keeps (the last seq it holds for the node), so a store that is down delays nothing
//! and loses nothing.
//!
//! - [`schema`]: the store's schema (`migrations/postgres/`), applied by `toolgate fleet
//!   migrate`; its `fleet_ingest` function is where each batch is checked, as the schema's
//!   owner, out of the shippers' reach.
//! - `batch`: a batch of events in the binary form `fleet_ingest` takes.
//! - [`store`]: the store through sqlx: registering nodes, ingesting batches, reading events.
//!
//! The sidecar's side, which ships its trail, is a follower's sink: `follow::fleet`.

mod batch;
pub mod schema;
pub mod store;

/// The environment variable that may hold the store's URL (and its password).
pub const URL_ENV: &str = "TOOLGATE_FLEET_POSTGRES_URL";

/// What a node id is, as refusals say it.
pub const NODE_ID: &str = "1 to 128 letters, digits, `.`, `_` or `-`";

/// Whether `node` is a node id ([`NODE_ID`]).
pub fn valid_node(node: &str) -> bool {
    !node.is_empty()
        && node.len() <= 128
        && node.bytes().all(|b| b.is_ascii_alphanumeric() || b"._-".contains(&b))
}
