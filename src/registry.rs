//! The tool registry: what toolgate knows about each tool, from its configuration and never from
//! the agent's word. A tool's safety level decides which run options it needs; its default
//! action names the business verb when a request leaves `action` empty.

use std::collections::HashMap;
use std::fmt;

use serde::Deserialize;

/// How dangerous running a tool is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Safety {
    /// Reads only; allowed by the default policy.
    ReadOnly,
    /// Changes files or state; needs `allow_write`.
    Write,
    /// Runs arbitrary commands; needs `allow_bash`.
    Bash,
    /// Not in the registry; denied by the default policy.
    #[serde(skip)]
    Unknown,
}

impl Safety {
    /// The name policies and the trail use.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::ReadOnly => "read_only",
            Self::Write => "write",
            Self::Bash => "bash",
            Self::Unknown => "unknown",
        }
    }
}

impl fmt::Display for Safety {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One tool's entry.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ToolSpec {
    /// Its safety level.
    pub safety: Safety,
    /// The action a request for this tool takes when it names none.
    pub action: String,
    /// The resource type of its calls, whatever the harness says.
    #[serde(default)]
    pub resource_type: Option<String>,
    /// A JSON pointer (RFC 6901) to the argument that names the resource: its text (or
    /// number) is the resource id, whatever the harness says, and the id is empty when the
    /// argument is missing.
    #[serde(default)]
    pub resource_from: Option<String>,
}

/// Tool name to [`ToolSpec`].
#[derive(Debug, Clone)]
pub struct ToolRegistry {
    tools: HashMap<String, ToolSpec>,
}

impl Default for ToolRegistry {
    /// The built-in tools of a coding agent.
    fn default() -> Self {
        let builtin = [
            ("read", Safety::ReadOnly, "fs.read"),
            ("ls", Safety::ReadOnly, "fs.list"),
            ("find", Safety::ReadOnly, "fs.find"),
            ("grep", Safety::ReadOnly, "fs.search"),
            ("write", Safety::Write, "fs.write"),
            ("edit", Safety::Write, "fs.edit"),
            ("bash", Safety::Bash, "shell.exec"),
        ];
        let tools = builtin
            .into_iter()
            .map(|(name, safety, action)| {
                let spec = ToolSpec {
                    safety,
                    action: action.to_owned(),
                    resource_type: None,
                    resource_from: None,
                };
                (name.to_owned(), spec)
            })
            .collect();
        Self { tools }
    }
}

impl ToolRegistry {
    /// Adds a tool, or replaces the entry of one with the same name.
    pub fn insert(&mut self, name: &str, spec: ToolSpec) {
        self.tools.insert(name.to_owned(), spec);
    }

    /// The entry of a registered tool.
    pub fn get(&self, tool: &str) -> Option<&ToolSpec> {
        self.tools.get(tool)
    }

    /// The safety level of a tool; [`Safety::Unknown`] when it is not registered.
    pub fn safety(&self, tool: &str) -> Safety {
        self.get(tool).map_or(Safety::Unknown, |spec| spec.safety)
    }

    /// The action a request for `tool` takes when it names none: the registry's default, or the
    /// tool name itself for an unregistered tool.
    pub fn default_action<'a>(&'a self, tool: &'a str) -> &'a str {
        self.get(tool).map_or(tool, |spec| spec.action.as_str())
    }
}
