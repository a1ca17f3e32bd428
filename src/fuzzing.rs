//! The parsers of outside input, as the fuzz targets (`fuzz/`, docs/reliability.md) drive
//! them: requests, trails and their exports, policies, configuration, signed notes. Not an API:
//! hidden from the docs, and kept to what the targets call.

pub use crate::audit::{Anchors, CsvChecks, Manifest, Report, verify_csv};
pub use crate::trust::add_checkpoint::AddCheckpoint;
pub use crate::trust::checkpoint::Checkpoint;
pub use crate::trust::cosignature::CosignatureVerifier;
pub use crate::trust::note::{Note, NoteVerifier};

/// Loads a policy set from `text` as `--policy` would (Cedar with toolgate's annotations).
pub fn load_policy(text: &str) -> Result<(), String> {
    crate::policy::PolicyEngine::parse("fuzz.cedar", text).map(drop).map_err(|e| e.to_string())
}
