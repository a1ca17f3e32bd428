//! The sections of the trail's lifecycle after a commit: `[checkpoints]` and its witnesses,
//! `[disk]`, `[retention]`, `[archive]`, `[fleet]`.

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde::Deserialize;

/// `[checkpoints]`: a signed checkpoint (C2SP tlog-checkpoint) of the trail's Merkle tree, kept
/// on the trail, every `every_events` events or `every_ms`, whichever comes first, and at
/// shutdown. The key (`toolgate keygen` writes one) comes from a file or an environment
/// variable, never from this file; its name is the checkpoints' origin.
#[derive(Debug, Clone, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct CheckpointsConfig {
    /// A file holding the signing key (`PRIVATE+KEY+<name>+<id>+<key>`).
    pub key_file: Option<PathBuf>,
    /// An environment variable holding the signing key.
    pub key_env: Option<String>,
    /// At most this many events go without a checkpoint.
    pub every_events: u64,
    /// At most this long goes by without a checkpoint while events are appended.
    pub every_ms: u64,
    /// Witnesses each new checkpoint is submitted to (C2SP tlog-witness), in the background.
    pub witnesses: Vec<WitnessConfig>,
}

impl Default for CheckpointsConfig {
    fn default() -> Self {
        Self {
            key_file: None,
            key_env: None,
            every_events: 1000,
            every_ms: 10_000,
            witnesses: Vec::new(),
        }
    }
}

/// `[disk]`: the trail's files and the space left on their filesystem are measured every
/// `check_every_ms`; a warning (in the log, on `/readyz`, on the console's overview, and
/// `toolgate_disk_warning` on `/metrics`) is raised while less than `warn_free_percent` of the
/// filesystem is free, or while, at the last day's growth, it is full within
/// `warn_full_within_hours`. A full disk stops every decision (fail closed), so the defaults
/// warn a week ahead.
#[derive(Debug, Clone, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct DiskConfig {
    /// How often the disk is measured.
    pub check_every_ms: u64,
    /// Warn while less than this share of the filesystem is free (percent).
    pub warn_free_percent: f64,
    /// Warn while the filesystem is full within this many hours at the last day's growth.
    pub warn_full_within_hours: u64,
}

impl Default for DiskConfig {
    fn default() -> Self {
        Self { check_every_ms: 10_000, warn_free_percent: 10.0, warn_full_within_hours: 7 * 24 }
    }
}

/// `[retention]`: events leave the trail's file once they are older than `max_age_days`, or
/// while the file holds more than `max_bytes`, oldest first, in segments of at least
/// `segment_events` cut at signed checkpoints; and only once they are in the archive
/// (`[archive]`, which this needs) and verified there, taken by every other destination
/// configured (`[fleet]`, `[export.otlp]`), and covered by a signed checkpoint that every
/// witness configured has cosigned. `legal_hold` stops all pruning. Nothing is pruned without
/// a rule: the default keeps everything (docs/operations.md, "Retention").
#[derive(Debug, Clone, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct RetentionConfig {
    /// Prune events older than this many days (fractions allowed).
    pub max_age_days: Option<f64>,
    /// Prune the oldest events while the file's pages in use exceed this many bytes.
    pub max_bytes: Option<u64>,
    /// The fewest events one prune removes (unless `max_bytes` presses).
    pub segment_events: u64,
    /// Stop all pruning (a legal hold), whatever the rules say.
    pub legal_hold: bool,
    /// How often the rules are applied.
    pub check_every_ms: u64,
    /// No event younger than this is pruned, whatever `max_bytes` says: an Execute report, a
    /// retried Decide or a session's facts find their decision in the file.
    pub min_age_minutes: u64,
}

impl RetentionConfig {
    /// Whether any rule can prune.
    pub fn prunes(&self) -> bool {
        self.max_age_days.is_some() || self.max_bytes.is_some()
    }
}

impl Default for RetentionConfig {
    fn default() -> Self {
        Self {
            max_age_days: None,
            max_bytes: None,
            segment_events: 100_000,
            legal_hold: false,
            check_every_ms: 60_000,
            min_age_minutes: 60,
        }
    }
}

/// `[archive]`: the trail published as C2SP tlog-tiles (hash tiles, entry bundles, the events
/// beside them, the signed checkpoint at the root) to an object store, in the background
/// (docs/operations.md). Needs `[checkpoints]`: an archive is as far as a signed checkpoint.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ArchiveConfig {
    /// Where: `file:///var/lib/toolgate/archive`, `s3://bucket/prefix`.
    pub url: Option<String>,
    /// The store's options, as the `object_store` crate names them (`aws_endpoint`,
    /// `aws_region`, …); no secrets here.
    pub options: BTreeMap<String, String>,
    /// S3 Object Lock: every object written is locked for this many days (an `s3://` archive
    /// in a bucket with Object Lock enabled); none by default.
    pub lock_days: Option<u32>,
    /// The lock's mode: `compliance` (nobody can delete or shorten it) or `governance`.
    pub lock_mode: LockMode,
}

/// S3 Object Lock's two modes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LockMode {
    /// Nobody, the account's root included, can delete the object's version or shorten its
    /// lock before the date.
    #[default]
    Compliance,
    /// Users with `s3:BypassGovernanceRetention` can.
    Governance,
}

/// `[[checkpoints.witnesses]]`: a witness that cosigns the trail's checkpoints.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WitnessConfig {
    /// The witness's submission prefix (`http://host:port` or `https://…`); requests go to
    /// `<url>/add-checkpoint`.
    pub url: String,
    /// The witness's cosignature verifier key (`toolgate keygen --witness` printed it).
    pub key: String,
    /// How long one submission may take.
    #[serde(default = "WitnessConfig::default_timeout_ms")]
    pub timeout_ms: u64,
}

impl WitnessConfig {
    fn default_timeout_ms() -> u64 {
        5000
    }
}

/// `[fleet]`: the trail shipped, in the background, to the fleet's ingest service, which checks
/// it and stores it in the fleet's PostgreSQL store (docs/fleet.md). The node's token comes
/// from `token_file` or the environment variable `TOOLGATE_FLEET_TOKEN`, never this file.
#[derive(Debug, Clone, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct FleetConfig {
    /// This sidecar's name in the fleet, as registered with `toolgate fleet register`.
    pub node_id: Option<String>,
    /// The ingest service: `https://host:port` over TLS (`http://` on loopback only).
    pub ingest_url: Option<String>,
    /// Several ingest servers of one fleet store, instead of `ingest_url`: the first is used,
    /// the next when one fails, the first again `fail_back_ms` after it was left.
    pub ingest_urls: Vec<String>,
    /// How long after it left the first of `ingest_urls` the shipper tries it again.
    pub fail_back_ms: u64,
    /// A file holding the node's token, as `toolgate fleet register` printed it.
    pub token_file: Option<PathBuf>,
    /// PEM certificates of the CAs an `https://` ingest service's certificate is checked
    /// against, instead of the system's roots.
    pub ca_file: Option<PathBuf>,
    /// Refused: sidecars no longer ship to PostgreSQL directly (docs/fleet.md, "Upgrading
    /// from direct shipping").
    pub postgres_url: Option<String>,
    /// Most events per batch.
    pub batch_events: u32,
    /// The first pause after trouble, and how often cosignatures are looked for once caught
    /// up (new events wake the shipper as they are committed).
    pub every_ms: u64,
}

impl Default for FleetConfig {
    fn default() -> Self {
        Self {
            node_id: None,
            ingest_url: None,
            ingest_urls: Vec::new(),
            fail_back_ms: 60_000,
            token_file: None,
            ca_file: None,
            postgres_url: None,
            batch_events: 5000,
            every_ms: 200,
        }
    }
}
