//! The manifest written beside an export: what was exported, from which trail, and the file's
//! hash, so that whoever receives the CSV can check that it is whole and unaltered.

use serde::{Deserialize, Serialize};

use crate::store::Filter;

/// The manifest, serialized as JSON.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Manifest {
    /// `toolgate-csv-v1`.
    pub format: String,
    /// The filter the export applied; empty for a whole trail.
    pub filter: Filter,
    pub first_seq: Option<i64>,
    pub last_seq: Option<i64>,
    pub rows: u64,
    /// The trail's last event when the export started.
    pub head_seq: Option<i64>,
    pub head_hash: Option<String>,
    /// Hex SHA-256 of the CSV file, byte order mark included.
    pub csv_sha256: String,
    pub bom: bool,
    /// When the export was made, RFC 3339 UTC.
    pub exported_at: String,
}

/// The format name manifests carry.
pub const MANIFEST_FORMAT: &str = "toolgate-csv-v1";
