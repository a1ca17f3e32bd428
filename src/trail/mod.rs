//! The audit trail's model, independent of where it is stored: the events and the one table of
//! their columns, their canonical encoding and hash chain, their CSV form, and the verification
//! of a chain. All of it is pure; `docs/trail-format.md` specifies the same rules for people who
//! write their own verifier.

mod chain;
mod columns;
pub mod csv;
mod encoding;
mod event;
mod tree;
mod verify;

pub use chain::Chain;
pub(crate) use columns::record_columns;
pub use columns::{
    COLUMNS, Cell, CellError, Cells, Column, Record, Type, Value, column_list, position,
};
pub use encoding::{GENESIS_HASH, encode, event_hash, hash_cells, hashed_columns};
pub use event::{Event, Kind, Outcome};
pub use tree::{
    Frontier, Hash, Node, Subtrees, empty_root, leaf_hash, verify_consistency, verify_inclusion,
};
pub use verify::{Link, Problem, Verifier, decode, decode_hex};
