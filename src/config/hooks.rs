//! `[hooks.<agent>]`: the adapters for coding agents' hooks (docs/agents.md).

use std::collections::BTreeMap;

use serde::Deserialize;

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
