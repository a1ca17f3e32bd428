//! The configuration: a TOML file whose every key has a default, so that toolgate runs with no
//! file at all. Command-line flags override the file (see `toolgate serve --help`).
//!
//! ```toml
//! listen = "127.0.0.1:50051"
//! db = "toolgate.db"
//! durability = "full"            # or "normal"
//! policy = "policies/main.cedar" # replaces the embedded default policy
//!
//! [limits]                       # inputs over a limit are refused with INVALID_ARGUMENT
//! max_args_bytes = 262144
//!
//! [tools.deploy]                 # added to (or replacing an entry of) the default registry
//! safety = "bash"
//! action = "release.deploy"
//! ```

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Deserialize;

mod auth;
mod console;
mod export;
mod ingest;
mod mcp;
mod tls;

pub use auth::{
    AuthConfig, CertificateSpec, ClaimPath, IssuerSpec, NameKind, Role, SpiffeSpec, TokenSpec,
};
pub use console::{ConsoleConfig, OidcConfig};
pub use export::{ExportConfig, OtlpConfig, OtlpProtocol};
pub use ingest::IngestConfig;
pub use mcp::McpConfig;
pub use tls::TlsConfig;

use crate::registry::{Safety, SchemaError, ToolRegistry, ToolSpec};

/// Why a configuration could not be loaded.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("cannot read config file `{path}`: {source}")]
    Read { path: PathBuf, source: std::io::Error },
    #[error("invalid config file `{path}`: {source}")]
    Parse { path: PathBuf, source: Box<toml::de::Error> },
    #[error("args_hash key: {0}")]
    Key(String),
}

/// Everything toolgate can be told.
#[derive(Debug, Clone, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Config {
    /// Address of the gRPC listener: loopback by default, or `unix:/path/to.sock`.
    pub listen: String,
    /// Permissions of a unix socket listener (octal; owner only by default).
    pub unix_socket_mode: u32,
    /// Path of the SQLite trail; created when missing.
    pub db: PathBuf,
    /// A Cedar policy file that replaces the embedded default policy.
    pub policy: Option<PathBuf>,
    /// A candidate policy file evaluated beside the enforced one (shadow mode): its outcome
    /// is recorded with every decision and never changes the answer.
    pub shadow_policy: Option<PathBuf>,
    /// How hard each commit is pushed to disk.
    pub durability: Durability,
    /// Size limits on inputs.
    pub limits: Limits,
    /// Limits handed to the harness with every decision.
    pub defaults: Defaults,
    /// The group-committing writer.
    pub writer: WriterConfig,
    /// Tools added to, or overriding, the default registry.
    pub tools: BTreeMap<String, ToolSpec>,
    /// Most calls a session of each task type may make (`default` for the others); the
    /// default policy denies past it.
    pub session_caps: BTreeMap<String, u64>,
    /// Actors policies know by id: roles (`principal in Role::"admin"`) and attributes.
    pub actors: BTreeMap<String, ActorSpec>,
    /// Action groups: `action in Action::"<group>"` for each member action.
    pub action_groups: BTreeMap<String, Vec<String>>,
    /// How calls that require approval wait for a verdict.
    pub approvals: ApprovalsConfig,
    /// The HTTP side port (`/metrics`, `/healthz`, `/readyz`, hook endpoints); off unless set.
    pub http_listen: Option<String>,
    /// Adapters for agent harnesses' hooks.
    pub hooks: HooksConfig,
    /// The MCP gateway (`toolgate mcp`).
    pub mcp: McpConfig,
    /// After SIGTERM, how long calls in flight may take to finish before they are cut.
    pub shutdown_grace_ms: u64,
    /// Bearer tokens and client certificates, and their roles; auth is off while none is
    /// configured.
    pub auth: AuthConfig,
    /// TLS, and mutual TLS, on the gRPC port; off unless a certificate is given.
    pub tls: TlsConfig,
    /// A key for argument hashes (HMAC-SHA256); plain SHA-256 without one.
    pub args_hash: ArgsHashConfig,
    /// Signed checkpoints of the trail's Merkle tree; off unless a key is given.
    pub checkpoints: CheckpointsConfig,
    /// Shipping the trail to the fleet's PostgreSQL store; off unless a node id is given.
    pub fleet: FleetConfig,
    /// Exporting the trail to an OpenTelemetry collector; off unless an endpoint is given.
    pub export: ExportConfig,
    /// The web console on the HTTP side port; off unless enabled.
    pub console: ConsoleConfig,
    /// When the trail's disk is warned about.
    pub disk: DiskConfig,
    pub retention: RetentionConfig,
    /// The archive the trail is published to as tlog-tiles; off unless a URL is given.
    pub archive: ArchiveConfig,
    /// What the fleet's ingest service requires of the nodes (`serve --ingest` only).
    pub ingest: IngestConfig,
}

impl Default for Config {
    fn default() -> Self {
        Self {
            listen: "127.0.0.1:50051".to_owned(),
            unix_socket_mode: 0o600,
            db: PathBuf::from("toolgate.db"),
            policy: None,
            shadow_policy: None,
            durability: Durability::Full,
            limits: Limits::default(),
            defaults: Defaults::default(),
            writer: WriterConfig::default(),
            tools: BTreeMap::new(),
            session_caps: BTreeMap::from([("default".to_owned(), 10_000)]),
            actors: BTreeMap::new(),
            action_groups: BTreeMap::new(),
            approvals: ApprovalsConfig::default(),
            http_listen: None,
            hooks: HooksConfig::default(),
            mcp: McpConfig::default(),
            shutdown_grace_ms: 10_000,
            auth: AuthConfig::default(),
            tls: TlsConfig::default(),
            args_hash: ArgsHashConfig::default(),
            checkpoints: CheckpointsConfig::default(),
            fleet: FleetConfig::default(),
            export: ExportConfig::default(),
            console: ConsoleConfig::default(),
            disk: DiskConfig::default(),
            retention: RetentionConfig::default(),
            archive: ArchiveConfig::default(),
            ingest: IngestConfig::default(),
        }
    }
}

impl Config {
    /// Reads a TOML configuration file.
    pub fn load(path: &Path) -> Result<Self, ConfigError> {
        let text = std::fs::read_to_string(path)
            .map_err(|source| ConfigError::Read { path: path.to_owned(), source })?;
        toml::from_str(&text).map_err(|source| ConfigError::Parse {
            path: path.to_owned(),
            source: Box::new(source),
        })
    }

    /// The default tool registry with this configuration's tools laid over it.
    pub fn registry(&self) -> Result<ToolRegistry, SchemaError> {
        ToolRegistry::with(&self.tools)
    }
}

/// One actor policies know by id.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ActorSpec {
    /// Roles or groups: the actor is `in Role::"<name>"` for each.
    #[serde(default)]
    pub roles: Vec<String>,
    /// Attributes, as `principal.<key>` (JSON values; no nulls, integers only).
    #[serde(default)]
    pub attributes: serde_json::Map<String, serde_json::Value>,
}

/// The SQLite `synchronous` setting of the writer (docs/configuration.md says what each risks).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Durability {
    /// Every commit is synced to disk before anyone is answered: survives power loss.
    Full,
    /// Commits survive a crash of toolgate, but the last ones may roll back on power loss.
    Normal,
}

/// Size limits on inputs, in bytes.
#[derive(Debug, Clone, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Limits {
    /// `args_json` of Decide and Execute.
    pub max_args_bytes: usize,
    /// `context_json` of Decide.
    pub max_context_bytes: usize,
    /// `output` of Execute.
    pub max_output_bytes: usize,
    /// `error` of Execute.
    pub max_error_bytes: usize,
    /// Any name or id: session, actor, tool, action, resource, keys.
    pub max_name_bytes: usize,
    /// Concurrent calls (HTTP/2 streams) one connection may have open.
    pub max_concurrent_streams: u32,
    /// The longest any call may take, in milliseconds (above `Await`'s 10 minutes).
    pub request_timeout_ms: u64,
    /// Connections one port (gRPC, the side port, the MCP endpoint) holds at most, in all.
    pub max_connections: usize,
    /// Connections one port holds at most from one peer address: on a gRPC port, those that
    /// have not yet carried an authenticated call (the peer's oldest such connection is closed
    /// for a new one); on an HTTP/1 port, all of them.
    pub max_connections_per_peer: usize,
    /// How long a new connection has to start: its HTTP/2 preface (after TLS's own handshake
    /// timeout), or an HTTP/1 request's head, in milliseconds.
    pub handshake_timeout_ms: u64,
    /// How long a gRPC connection may stay open without carrying a call that passed
    /// authentication (with auth off: a call to one of toolgate's services), in milliseconds.
    pub unauthenticated_timeout_ms: u64,
    /// How long a call's message may pause half way (or its first message not begin), in
    /// milliseconds, before the call is cut.
    pub stalled_message_timeout_ms: u64,
    /// HTTP/2 keepalive on the gRPC port: a PING this often, in milliseconds, and the
    /// connection closed when its answer does not come within `http2_keepalive_timeout_ms`.
    pub http2_keepalive_interval_ms: u64,
    pub http2_keepalive_timeout_ms: u64,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            max_args_bytes: 256 * 1024,
            max_context_bytes: 256 * 1024,
            max_output_bytes: 16 * 1024 * 1024,
            max_error_bytes: 64 * 1024,
            max_name_bytes: 1024,
            max_concurrent_streams: 256,
            request_timeout_ms: 15 * 60 * 1000,
            max_connections: 4096,
            max_connections_per_peer: 256,
            handshake_timeout_ms: 10_000,
            unauthenticated_timeout_ms: 10_000,
            stalled_message_timeout_ms: 10_000,
            http2_keepalive_interval_ms: 30_000,
            http2_keepalive_timeout_ms: 10_000,
        }
    }
}

impl Limits {
    /// The largest gRPC message the server decodes: big enough for every field at its limit, so
    /// that an oversized field is answered (and recorded) by name rather than by the transport.
    pub fn max_message_bytes(&self) -> usize {
        self.max_output_bytes
            + self.max_args_bytes
            + self.max_context_bytes
            + self.max_error_bytes
            + 64 * self.max_name_bytes
    }
}

/// Limits returned to the harness with every decision.
#[derive(Debug, Clone, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Defaults {
    /// Output characters handed back to the model; a smaller value in the request wins.
    pub max_output_chars: u32,
    /// Tool timeout for `read_only` tools, in milliseconds.
    pub read_only_timeout_ms: u32,
    /// Tool timeout for `write` tools, in milliseconds.
    pub write_timeout_ms: u32,
    /// Tool timeout for `bash` tools, in milliseconds.
    pub bash_timeout_ms: u32,
}

impl Default for Defaults {
    fn default() -> Self {
        Self {
            max_output_chars: 8000,
            read_only_timeout_ms: 10_000,
            write_timeout_ms: 30_000,
            bash_timeout_ms: 30_000,
        }
    }
}

impl Defaults {
    /// The timeout for a tool of this safety level (unknown tools get the strictest).
    pub fn timeout_ms(&self, safety: Safety) -> u32 {
        match safety {
            Safety::ReadOnly => self.read_only_timeout_ms,
            Safety::Write => self.write_timeout_ms,
            Safety::Bash | Safety::Unknown => self.bash_timeout_ms,
        }
    }
}

/// The group-committing writer.
#[derive(Debug, Clone, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct WriterConfig {
    /// Appends waiting to be committed; beyond it callers are refused at once with
    /// RESOURCE_EXHAUSTED (nothing recorded), rather than queued without bound.
    pub queue_capacity: usize,
    /// Most events committed in one transaction.
    pub max_batch: usize,
    /// How long a caller waits for its event to be committed before it is answered UNAVAILABLE.
    pub commit_timeout_ms: u64,
}

impl Default for WriterConfig {
    fn default() -> Self {
        Self { queue_capacity: 16_384, max_batch: 1024, commit_timeout_ms: 5_000 }
    }
}

impl WriterConfig {
    /// [`Self::commit_timeout_ms`] as a duration.
    pub fn commit_timeout(&self) -> Duration {
        Duration::from_millis(self.commit_timeout_ms)
    }
}

/// How calls that require approval wait for a verdict.
#[derive(Debug, Clone, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ApprovalsConfig {
    /// How long an approval waits for a verdict before it expires.
    pub ttl_seconds: u64,
    /// What an expiry decides: `deny` (the default) or `allow`.
    pub on_timeout: TimeoutVerdict,
    /// Keep the arguments of a pending call in memory and show them to approvers. They are
    /// never written to the trail, so after a restart approvers see only their hash.
    pub show_args: bool,
    /// The most calls pending at once; past it a call that requires approval is denied.
    pub max_pending: usize,
    /// The most calls of one actor pending at once; past it its next is denied.
    pub max_pending_per_actor: usize,
    /// The most calls one credential (a token, a JWT's subject, a certificate, a SPIFFE ID)
    /// has pending at once, whatever actors it acts as; past it its next is denied. With auth
    /// off there is one caller, bounded by the caps in all.
    pub max_pending_per_caller: usize,
    /// The most bytes one credential's pending calls may hold in memory.
    pub max_pending_bytes_per_caller: usize,
    /// The most bytes the pending calls' requests (arguments and context) may hold in memory.
    pub max_pending_bytes: usize,
    /// The longest arguments shown to approvers (`show_args`); longer ones by hash only.
    pub max_shown_args_bytes: usize,
}

impl Default for ApprovalsConfig {
    fn default() -> Self {
        Self {
            ttl_seconds: 15 * 60,
            on_timeout: TimeoutVerdict::Deny,
            show_args: false,
            max_pending: 1_000,
            max_pending_per_actor: 100,
            max_pending_per_caller: 100,
            max_pending_bytes: 64 * 1024 * 1024,
            max_pending_bytes_per_caller: 8 * 1024 * 1024,
            max_shown_args_bytes: 16 * 1024,
        }
    }
}

/// Adapters for agent harnesses' hooks: `[hooks.<agent>]` for each coding agent
/// (docs/agents.md).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct HooksConfig {
    pub claude: HookConfig,
    pub codex: HookConfig,
    pub gemini: HookConfig,
    pub copilot: HookConfig,
    pub opencode: HookConfig,
    pub qwen: HookConfig,
}

/// One coding agent's hook adapter (docs/agents.md).
#[derive(Debug, Clone, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct HookConfig {
    /// The actor id the agent's calls are made under; by default the agent's name on the
    /// trail (`claude-code`, `codex`, `gemini-cli`…).
    pub actor: String,
    /// Who is recorded as approving a call that the agent's own permission prompt let run
    /// after toolgate answered `ask`; by default `<agent's name>:user`.
    pub approver: String,
    /// Send the tool's output with the after-event (only its size is stored either way).
    pub report_output: bool,
    /// Let calls through when the sidecar cannot be reached (the command hook only).
    pub fail_open: bool,
    /// Let toolgate's `allow` skip the agent's own permission prompt, for teams that want
    /// toolgate to be the only gate. Off: an `allow` says nothing, and the agent's mode, rules
    /// and prompts decide exactly as without the hook.
    pub allow_skips_prompt: bool,
    /// How long a call that needs approval is held, for an agent that cannot ask its user,
    /// while a person approves it through toolgate; denied, saying so, when none does. The
    /// agent's own hook timeout must be longer (`hook install` sets it so).
    pub hold_ms: u32,
    /// The agent's tool names mapped to registry tools, over the built-in vocabulary.
    pub tools: BTreeMap<String, String>,
}

impl Default for HookConfig {
    fn default() -> Self {
        Self {
            actor: String::new(),
            approver: String::new(),
            report_output: false,
            fail_open: false,
            allow_skips_prompt: false,
            hold_ms: 120_000,
            tools: BTreeMap::new(),
        }
    }
}

impl HookConfig {
    /// The actor of the calls of the agent whose name on the trail is `harness`.
    pub fn actor<'a>(&'a self, harness: &'a str) -> &'a str {
        if self.actor.is_empty() { harness } else { &self.actor }
    }

    /// Who approves at the own prompt of the agent whose name on the trail is `harness`.
    pub fn approver(&self, harness: &str) -> String {
        if self.approver.is_empty() { format!("{harness}:user") } else { self.approver.clone() }
    }
}

/// Where the key for argument hashes comes from: a file or an environment variable, never the
/// configuration file itself.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ArgsHashConfig {
    /// A file holding the key (trailing whitespace is not part of it).
    pub key_file: Option<PathBuf>,
    /// An environment variable holding the key.
    pub key_env: Option<String>,
    /// The key's name in every hash; by default the first 8 hex digits of its SHA-256.
    pub key_id: Option<String>,
    /// Whether a decision also keeps the hash of the arguments as sent, when the registry's
    /// normalizations changed them.
    pub raw: bool,
}

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

/// What an approval that expires decides.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TimeoutVerdict {
    Deny,
    Allow,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn empty_file_gives_the_defaults() {
        let config: Config = toml::from_str("").unwrap();
        assert_eq!(config.listen, "127.0.0.1:50051");
        assert_eq!(config.durability, Durability::Full);
        assert_eq!(config.defaults.max_output_chars, 8000);
    }

    #[test]
    fn configured_tools_extend_the_default_registry() {
        let config: Config =
            toml::from_str("[tools.deploy]\nsafety = \"bash\"\naction = \"release.deploy\"\n")
                .unwrap();
        let registry = config.registry().unwrap();
        assert_eq!(registry.get("deploy").unwrap().safety, Safety::Bash);
        assert_eq!(registry.get("read").unwrap().safety, Safety::ReadOnly);
    }

    #[test]
    fn a_built_in_tool_keeps_its_safety_and_action_and_a_new_one_must_say_its_safety() {
        let config: Config = toml::from_str(
            "[tools.read]\nresource_from = \"/path\"\n[tools.deploy]\nsafety = \"write\"\n",
        )
        .unwrap();
        let registry = config.registry().unwrap();
        assert_eq!(registry.get("read").unwrap().safety, Safety::ReadOnly);
        assert_eq!(registry.get("read").unwrap().action, "fs.read");
        assert_eq!(registry.default_action("deploy"), "deploy");
        let config: Config = toml::from_str("[tools.deploy]\naction = \"release\"\n").unwrap();
        let error = config.registry().unwrap_err().to_string();
        assert!(error.contains("`deploy`: safety"), "{error}");
    }

    #[test]
    fn unknown_keys_are_refused() {
        assert!(toml::from_str::<Config>("listn = \"x\"").is_err());
    }
}
