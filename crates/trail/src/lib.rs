//! The audit trail's model, independent of where it is stored or how it travels: the events
//! and the one table of their columns, their canonical encoding and hash chain, their CSV form,
//! the RFC 6962 tree and its proofs, the verification of a chain, and the trust around it:
//! signed notes (C2SP `signed-note`), checkpoints (C2SP `tlog-checkpoint`), witnesses'
//! cosignatures (C2SP `tlog-cosignature`), the `add-checkpoint` wire format (C2SP
//! `tlog-witness`), one event's offline proof (C2SP `tlog-proof`), and an export's manifest and
//! proofs file with the verification of an export against them.
//!
//! All of it is pure: no runtime, no database driver, no network. It is what a third party
//! needs to check a trail without trusting the sidecar that wrote it, and
//! `docs/trail-format.md` specifies the same rules for people who write their own verifier.

pub mod add_checkpoint;
mod chain;
pub mod checkpoint;
mod columns;
pub mod cosignature;
pub mod csv;
mod encoding;
mod event;
pub mod export;
mod filter;
mod manifest;
pub mod note;
pub mod proofs;
mod report;
pub mod tlog_proof;
mod tree;
mod verify;

pub use chain::Chain;
pub use columns::{
    COLUMNS, Cell, CellError, Cells, Column, Record, Type, Value, column_list, position,
};
pub use encoding::{
    DecodeError, GENESIS_HASH, decode_event, encode, event_hash, hash_cells, hashed_columns,
};
pub use event::{Event, Group, Kind, Outcome};
pub use filter::Filter;
pub use manifest::{MANIFEST_FORMAT, Manifest};
pub use report::{Anchors, Prefix, Report};
pub use tree::{
    Frontier, Hash, Node, Subtrees, empty_root, leaf_hash, node_hash, verify_consistency,
    verify_inclusion,
};
pub use verify::{Link, Problem, Verifier, decode, decode_hex};
