//! `[ingest]`: what the fleet's ingest service (`serve --ingest`) requires of the nodes beyond
//! the checks it always makes (docs/fleet.md, "Witnesses required on arrival").

use serde::Deserialize;

/// `[ingest]`: the fleet's witnesses. With `witnesses`, a node's events after a checkpoint are
/// stored only once `witnesses_required` of them (all, by default) have cosigned it.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct IngestConfig {
    /// The witnesses' cosignature verifier keys (as `toolgate keygen --witness` printed them).
    pub witnesses: Vec<String>,
    /// How many of them must have cosigned a checkpoint; all of them when absent.
    pub witnesses_required: Option<usize>,
}
