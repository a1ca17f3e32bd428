//! The tool registry: what toolgate knows about each tool, from its configuration and never from
//! the agent's word. A tool's safety level decides which run options it needs; its default
//! action names the business verb when a request leaves `action` empty.

mod normalize;
mod schema;

use std::collections::{BTreeMap, HashMap};
use std::fmt;

use serde::Deserialize;
use serde_json::Value;

pub use normalize::{Normalization, Normalizer};
pub use schema::{InputSchema, SchemaError};

/// How dangerous running a tool is.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Safety {
    /// Reads only; allowed by the default policy.
    ReadOnly,
    /// Changes files or state; needs `allow_write`.
    Write,
    /// Runs arbitrary commands; needs `allow_bash`.
    Bash,
    /// Not in the registry; denied by the default policy. (A `[tools.X]` entry that leaves
    /// `safety` out keeps the built-in tool's level, and is refused for any other tool.)
    #[serde(skip)]
    #[default]
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
    /// Its safety level. Optional for a built-in tool (it keeps its own); toolgate never
    /// guesses how dangerous any other tool is.
    #[serde(default)]
    pub safety: Safety,
    /// The action a request for this tool takes when it names none: by default the built-in
    /// tool's, or else the tool's name.
    #[serde(default)]
    pub action: String,
    /// The resource type of its calls, whatever the harness says.
    #[serde(default)]
    pub resource_type: Option<String>,
    /// A JSON pointer (RFC 6901) to the argument that names the resource: its text (or
    /// number) is the resource id, whatever the harness says, and the id is empty when the
    /// argument is missing.
    #[serde(default)]
    pub resource_from: Option<String>,
    /// The JSON Schema (2020-12) its arguments must match: a file's path, or inline.
    #[serde(default)]
    pub input_schema: Option<Value>,
    /// What is done to each argument (by JSON pointer) before the schema, the policy and the
    /// hash see the arguments.
    #[serde(default)]
    pub normalize: BTreeMap<String, Normalization>,
    /// The absolute directory `path` normalizations resolve against and keep calls inside.
    #[serde(default)]
    pub root: Option<String>,
}

/// Tool name to [`ToolSpec`], and the tools' compiled input schemas and normalizations.
#[derive(Debug, Clone)]
pub struct ToolRegistry {
    tools: HashMap<String, ToolSpec>,
    schemas: HashMap<String, InputSchema>,
    normalizers: HashMap<String, Normalizer>,
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
                    input_schema: None,
                    normalize: BTreeMap::new(),
                    root: None,
                };
                (name.to_owned(), spec)
            })
            .collect();
        Self { tools, schemas: HashMap::new(), normalizers: HashMap::new() }
    }
}

impl ToolRegistry {
    /// The default registry with `tools` laid over it, their schemas compiled.
    pub fn with(tools: &BTreeMap<String, ToolSpec>) -> Result<Self, SchemaError> {
        let mut registry = Self::default();
        for (name, spec) in tools {
            registry.insert(name, spec.clone())?;
        }
        Ok(registry)
    }

    /// Adds a tool, or replaces the entry of one with the same name, compiling its input
    /// schema (a file is read now: a reload builds the registry again) and normalizations.
    pub fn insert(&mut self, name: &str, mut spec: ToolSpec) -> Result<(), SchemaError> {
        let known = self.tools.get(name);
        if spec.safety == Safety::Unknown {
            spec.safety = known.map(|known| known.safety).ok_or_else(|| {
                let message = "not given: say how dangerous the tool is (read_only, write or bash)";
                SchemaError::new(name, "safety", message.to_owned())
            })?;
        }
        if spec.action.is_empty() {
            spec.action = known.map_or_else(|| name.to_owned(), |known| known.action.clone());
        }
        match &spec.input_schema {
            Some(source) => {
                self.schemas.insert(name.to_owned(), InputSchema::compile(name, source)?)
            }
            None => self.schemas.remove(name),
        };
        if spec.normalize.is_empty() {
            self.normalizers.remove(name);
        } else {
            let normalizer = Normalizer::new(name, &spec.normalize, spec.root.as_deref())?;
            self.normalizers.insert(name.to_owned(), normalizer);
        }
        self.tools.insert(name.to_owned(), spec);
        Ok(())
    }

    /// Normalizes `args` for `tool`, then checks them against its input schema: the values
    /// that could not be normalized, and the schema's mismatches (both empty when all is well).
    pub fn check(&self, tool: &str, args: &mut Value) -> (Vec<String>, Vec<String>) {
        let unnormalized = self.normalize(tool, args);
        let mismatches = self.schemas.get(tool).map_or_else(Vec::new, |s| s.mismatches(args));
        (unnormalized, mismatches)
    }

    /// Normalizes `args` for `tool` in place; the values that could not be.
    pub fn normalize(&self, tool: &str, args: &mut Value) -> Vec<String> {
        self.normalizers.get(tool).map_or_else(Vec::new, |n| n.apply(args))
    }

    /// Whether `tool` declares normalizations.
    pub fn normalizes(&self, tool: &str) -> bool {
        self.normalizers.contains_key(tool)
    }

    /// The entry of a registered tool.
    pub fn get(&self, tool: &str) -> Option<&ToolSpec> {
        self.tools.get(tool)
    }

    /// The default actions of the registered tools (the actions a policy can expect).
    pub fn actions(&self) -> impl Iterator<Item = &str> {
        self.tools.values().map(|spec| spec.action.as_str())
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
