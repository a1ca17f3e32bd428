//! Trust beyond the host: what lets an auditor believe the trail without believing the sidecar
//! that wrote it. Signed notes (C2SP `signed-note`), checkpoints of the trail's Merkle tree
//! (C2SP `tlog-checkpoint`), witnesses' cosignatures of them (C2SP `tlog-cosignature`), the
//! task that signs checkpoints as the trail grows, and the one that submits them to witnesses.
//! The formats themselves are the trail crate's (`trail::{note, checkpoint, cosignature,
//! add_checkpoint}`), imported from there by every user: one path per thing.

pub mod publisher;
pub mod submitter;
