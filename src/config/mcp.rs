//! The `[mcp]` section (docs/mcp.md): who the gateway's calls are made as and what they may
//! do. Each MCP tool is a tool of the registry by its gateway name, `mcp__<server>__<tool>`,
//! whose entry gives its safety level, action and resource (`[tools.mcp__fs__write_file]`).
//!
//! ```toml
//! [mcp]
//! actor = "mcp-client"
//! allow_write = true
//! ```

use serde::Deserialize;

/// The MCP gateway.
#[derive(Debug, Clone, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct McpConfig {
    /// The actor id the calls are made under.
    pub actor: String,
    /// The task type of the gateway's sessions (empty: `default`).
    pub task_type: String,
    /// Grants `allow_write` to every call (the registry's `write` tools need it).
    pub allow_write: bool,
    /// Grants `allow_bash` to every call (the registry's `bash` tools need it).
    pub allow_bash: bool,
    /// The longest a call that requires approval is held, in seconds; the approval's own
    /// expiry (`[approvals] ttl_seconds`, then its `on_timeout` verdict) ends it sooner.
    pub approval_wait_seconds: u64,
    /// Leave out of `tools/list` the tools no call of this actor could make allowed (the
    /// sidecar's `NeverAllowed`); the others are listed as the server lists them.
    pub hide_never_allowed: bool,
    /// How long the upstream server gets to exit after its stdin closed, in milliseconds,
    /// before it is sent SIGTERM, and as long again before SIGKILL.
    pub exit_grace_ms: u64,
    /// Streamable HTTP: the gateway's URL as its clients know it (`https://host/mcp`), the
    /// OAuth resource its access tokens must name as their audience [default: the listening
    /// address's `http://…/mcp`].
    pub resource: Option<String>,
    /// The most characters a server's notification may say (its JSON): a progress note's
    /// message and a log message's data are cut to it, any other notification over it dropped.
    pub max_notification_chars: usize,
    /// The most characters of a server's `instructions` (which a client may put in the
    /// model's prompt) that reach the client; the rest is cut.
    pub max_instructions_chars: usize,
}

impl Default for McpConfig {
    fn default() -> Self {
        Self {
            actor: "mcp-client".to_owned(),
            task_type: String::new(),
            allow_write: false,
            allow_bash: false,
            approval_wait_seconds: 15 * 60,
            hide_never_allowed: false,
            exit_grace_ms: 3000,
            resource: None,
            max_notification_chars: 2_000,
            max_instructions_chars: 8_000,
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_section_reads_and_defaults_the_rest() {
        let config: crate::config::Config = toml::from_str(
            r#"
            [mcp]
            actor = "desktop"
            allow_write = true
            "#,
        )
        .unwrap();
        let mcp = config.mcp;
        assert_eq!((mcp.actor.as_str(), mcp.allow_write, mcp.allow_bash), ("desktop", true, false));
        assert_eq!(mcp.approval_wait_seconds, 900);
        assert!(toml::from_str::<crate::config::Config>("[mcp]\nactr = \"x\"").is_err());
    }
}
