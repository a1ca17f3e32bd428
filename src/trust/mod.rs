//! Trust beyond the host: what lets an auditor believe the trail without believing the sidecar
//! that wrote it. Signed notes (C2SP `signed-note`), checkpoints of the trail's Merkle tree
//! (C2SP `tlog-checkpoint`), and the task that signs them as the trail grows.

pub mod checkpoint;
pub mod note;
pub mod publisher;
