//! The coding agents toolgate has hooks for, and what each can express.

use std::fmt;

use crate::config::{HookConfig, HooksConfig};

/// A coding agent whose tool hooks toolgate answers (docs/agents.md).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, clap::ValueEnum)]
pub enum Agent {
    /// Claude Code: `PreToolUse`, `PostToolUse`, `PostToolUseFailure` command and http hooks.
    Claude,
    /// Codex CLI: `PreToolUse` and `PostToolUse` command hooks.
    Codex,
    /// Gemini CLI: `BeforeTool` and `AfterTool` command hooks.
    Gemini,
    /// GitHub Copilot CLI: `preToolUse` and `postToolUse` command hooks.
    Copilot,
    /// OpenCode: a plugin's `tool.execute.before` and `tool.execute.after`.
    #[value(name = "opencode")]
    OpenCode,
    /// Qwen Code: `PreToolUse`, `PostToolUse` and `PostToolUseFailure` command hooks.
    Qwen,
}

impl Agent {
    /// The name on the command line and in `[hooks.<name>]`.
    pub fn name(self) -> &'static str {
        match self {
            Self::Claude => "claude",
            Self::Codex => "codex",
            Self::Gemini => "gemini",
            Self::Copilot => "copilot",
            Self::OpenCode => "opencode",
            Self::Qwen => "qwen",
        }
    }

    /// The harness's name on the trail (`context.harness`) and its default actor.
    pub fn harness(self) -> &'static str {
        match self {
            Self::Claude => "claude-code",
            Self::Codex => "codex",
            Self::Gemini => "gemini-cli",
            Self::Copilot => "copilot-cli",
            Self::OpenCode => "opencode",
            Self::Qwen => "qwen-code",
        }
    }

    /// Whether the agent can ask its user before a call runs, as a hook's answer: only then is
    /// a call that needs approval handed to the agent's own prompt. The others hold the call
    /// while a person approves through toolgate, or deny it saying so: Codex fails a hook that
    /// answers `ask` (and runs the call), Gemini CLI waits forever with nobody at the terminal,
    /// Copilot CLI and OpenCode cannot ask from a hook.
    pub fn can_ask(self) -> bool {
        match self {
            Self::Claude | Self::Qwen => true,
            Self::Codex | Self::Gemini | Self::Copilot | Self::OpenCode => false,
        }
    }

    /// Whether the agent runs a call with the input its before-hook gives instead (Qwen Code
    /// documents it but does not apply it before a tool; Copilot CLI has no such answer).
    pub fn can_rewrite(self) -> bool {
        match self {
            Self::Claude | Self::Codex | Self::Gemini | Self::OpenCode => true,
            Self::Copilot | Self::Qwen => false,
        }
    }

    /// Whether the agent's hook events carry an id for the call, the same before and after.
    /// Without one, the hooks pair the events themselves (`hook::pending`).
    pub fn names_calls(self) -> bool {
        match self {
            Self::Claude | Self::Codex | Self::OpenCode | Self::Qwen => true,
            Self::Gemini | Self::Copilot => false,
        }
    }
}

impl Agent {
    /// Whether the agent's after-event says how long the tool ran. Without it, the hooks time
    /// the run themselves (`hook::pending`), from the before-hook's answer to the after-hook.
    pub fn reports_duration(self) -> bool {
        match self {
            Self::Claude | Self::OpenCode | Self::Qwen => true,
            Self::Codex | Self::Gemini | Self::Copilot => false,
        }
    }

    /// The environment variable in which the agent tells its hooks its version, where it does
    /// (the others, at the versions docs/agents.md pins, tell them nothing of it).
    pub fn version_variable(self) -> Option<&'static str> {
        match self {
            Self::Copilot => Some("COPILOT_CLI_BINARY_VERSION"),
            Self::Claude | Self::Codex | Self::Gemini | Self::OpenCode | Self::Qwen => None,
        }
    }

    /// Whether the hooks keep anything between a call's before and after (`hook::pending`).
    pub fn keeps_pending(self) -> bool {
        !self.names_calls() || !self.reports_duration()
    }
}

impl HooksConfig {
    /// The `[hooks.<agent>]` section of `agent`.
    pub fn of(&self, agent: Agent) -> &HookConfig {
        match agent {
            Agent::Claude => &self.claude,
            Agent::Codex => &self.codex,
            Agent::Gemini => &self.gemini,
            Agent::Copilot => &self.copilot,
            Agent::OpenCode => &self.opencode,
            Agent::Qwen => &self.qwen,
        }
    }
}

impl fmt::Display for Agent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}
