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
mod hooks;
mod ingest;
mod lifecycle;
mod mcp;
mod tls;

pub use auth::{
    AuthConfig, CertificateSpec, ClaimPath, IssuerSpec, NameKind, Role, SpiffeSpec, TokenSpec,
};
pub use console::{ConsoleConfig, OidcConfig};
pub use export::{ExportConfig, OtlpConfig, OtlpProtocol};
pub use hooks::{HookConfig, HooksConfig};
pub use ingest::IngestConfig;
pub use lifecycle::{
    ArchiveConfig, CheckpointsConfig, DiskConfig, FleetConfig, LockMode, RetentionConfig,
    WitnessConfig,
};
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
    #[error("[archive] needs [checkpoints]: an archive reaches as far as a signed checkpoint")]
    ArchiveUnsigned,
    #[error("[retention] needs [archive]: nothing leaves the trail that is not archived")]
    RetentionUnarchived,
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

    /// The rules between sections, checked once before anything starts, so that a start it
    /// refuses leaves no event behind. (Each section's own values are checked where they are
    /// used: keys read, addresses parsed, schemas compiled.)
    pub fn check(&self) -> Result<(), ConfigError> {
        let signs = self.checkpoints.key_file.is_some() || self.checkpoints.key_env.is_some();
        if self.archive.url.is_some() && !signs {
            return Err(ConfigError::ArchiveUnsigned);
        }
        if self.retention.prunes() && self.archive.url.is_none() {
            return Err(ConfigError::RetentionUnarchived);
        }
        Ok(())
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
