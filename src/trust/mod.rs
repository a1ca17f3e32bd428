//! Trust beyond the host: what lets an auditor believe the trail without believing the sidecar
//! that wrote it. Signed notes (C2SP `signed-note`), checkpoints of the trail's Merkle tree
//! (C2SP `tlog-checkpoint`), witnesses' cosignatures of them (C2SP `tlog-cosignature`), the
//! task that signs checkpoints as the trail grows, and the one that submits them to witnesses.

pub mod add_checkpoint;
pub mod checkpoint;
pub mod cosignature;
pub mod note;
pub mod publisher;
pub mod witnesses;
