//! What auditors do with the trail, whatever they use to ask: export it to CSV with a manifest
//! (signed, and with each row's inclusion proof, on request), and verify the trail or an export of it. The gRPC `Audit` service and the `query`, `export`,
//! `verify` and `stats` commands are thin layers over this and [`crate::store::Reader`].

mod export;
mod fleet;
mod manifest;
mod proofs;
mod verify;

pub use export::{Export, ExportError, Origin, SharedBuffer};
pub use fleet::{Witnesses, verify_fleet};
pub use manifest::{MANIFEST_FORMAT, Manifest};
pub use proofs::{ProofsReader, ProofsWriter};
pub use verify::{Anchors, CsvChecks, Report, verify_csv, verify_trail};
