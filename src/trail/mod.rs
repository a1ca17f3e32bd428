//! The audit trail's model, independent of where it is stored: the events, their canonical
//! encoding and hash chain, their CSV form, and the verification of a chain. All of it is pure; `docs/trail-format.md`
//! specifies the same rules for people who write their own verifier.

pub mod csv;
mod encoding;
mod event;
mod verify;

pub use encoding::{GENESIS_HASH, HASHED_COLUMNS, Value, encode, event_hash, hash_values};
pub use event::{Event, Kind, Record};
pub use verify::{Link, Problem, Verifier, decode};
