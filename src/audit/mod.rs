//! What auditors do with the trail, whatever they use to ask: export it to CSV with a manifest
//! (signed, and with each row's inclusion proof, on request), and verify the trail or an export
//! of it. The gRPC `Audit` service and the `query`, `export`, `verify` and `stats` commands are
//! thin layers over this and [`crate::store::Reader`]. For the console, two followers of the
//! trail: its activity by minute over the last day (`activity`) and its chain checked as it
//! grows (`health`).

pub mod activity;
mod export;
mod fleet;
pub mod health;
mod manifest;
mod proofs;
mod verify;

pub use export::{Export, ExportError, Origin, SharedBuffer, Trails};
pub use fleet::{Witnesses, verify_fleet};
pub use manifest::{MANIFEST_FORMAT, Manifest};
pub use proofs::{ProofsReader, ProofsWriter};
pub use verify::{Anchors, CsvChecks, Report, verify_csv, verify_trail};
