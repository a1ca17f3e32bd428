//! What auditors do with the trail, whatever they use to ask: export it to CSV with a manifest
//! (signed, and with each row's inclusion proof, on request), prove one event (C2SP
//! `tlog-proof`), and verify the trail or an export of it. The gRPC `Audit` service and the `query`, `export`, `verify` and `stats` commands are
//! thin layers over this and over [`Trails`], the one way to read a trail, whichever store
//! holds it (`trails/`). For the console, two followers of the
//! trail: its activity by minute over the last day (`activity`) and its chain checked as it
//! grows (`health`).

pub mod activity;
mod export;
mod fleet;
pub mod health;
mod prove;
mod trails;
mod verify;

pub use export::{Export, ExportError, Finished, Origin, SharedBuffer};
pub use fleet::verify_fleet;
pub use prove::prove;
pub use trails::{Ask, At, Local, Located, Trails};
pub(crate) use verify::read_checkpoint;
pub use verify::{verify_csv, verify_trail};
