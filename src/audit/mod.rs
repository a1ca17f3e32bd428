//! What auditors do with the trail, whatever they use to ask: export it to CSV with a manifest,
//! and verify the trail or an export of it. The gRPC `Audit` service and the `query`, `export`,
//! `verify` and `stats` commands are thin layers over this and [`crate::store::Reader`].

mod export;
mod manifest;
mod verify;

pub use export::{Export, ExportError, SharedBuffer};
pub use manifest::{MANIFEST_FORMAT, Manifest};
pub use verify::{Anchors, Report, verify_csv, verify_trail};
