//! The tool registry: what toolgate knows about each tool, from its configuration and never from
//! the agent's word. A tool's safety level decides which run options it needs; its default
//! action names the business verb when a request leaves `action` empty; the data classes it
//! reads and where it sends make the flow facts (`state::facts`).

mod normalize;
mod schema;

use std::collections::{BTreeMap, HashMap};
use std::fmt;

use serde::Deserialize;
use serde_json::Value;

pub use normalize::{Normalization, Normalizer};
pub use schema::{InputSchema, SchemaError};

/// The largest integer every JSON number carries exactly (2^53 - 1, I-JSON's and RFC 8785's
/// range): beyond it two integers may be written, and so hashed, alike. A normalization must not
/// round past it, and canonical arguments refuse a number beyond it.
pub const MAX_EXACT_INTEGER: u64 = (1 << 53) - 1;

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

/// Where a tool's calls can send data.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Sends {
    /// Only inside the organisation: files, internal services.
    Internal,
    /// Out of it: a chat, e-mail, the web. Any tool that does not say otherwise.
    External,
}

impl Sends {
    /// The name policies see (`context.tool.sends`).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Internal => "internal",
            Self::External => "external",
        }
    }
}

/// The most data classes one tool may declare.
const MAX_READS: usize = 32;

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
    /// The data classes every call of the tool reads (`secret`, `customer_pii`…), beside the
    /// classification of the resource it names.
    #[serde(default)]
    pub reads: Vec<String>,
    /// Where its calls send: by default the built-in tool's, or else `external`.
    #[serde(default)]
    pub sends: Option<Sends>,
}

/// Whether `name` is a data class's name: `[a-z][a-z0-9_]*`, at most 64 bytes.
fn class_name(name: &str) -> bool {
    let mut bytes = name.bytes();
    name.len() <= 64
        && bytes.next().is_some_and(|b| b.is_ascii_lowercase())
        && bytes.all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_')
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
        // A shell can reach the network: it sends externally. The others touch local files.
        let builtin = [
            ("read", Safety::ReadOnly, "fs.read", Sends::Internal),
            ("ls", Safety::ReadOnly, "fs.list", Sends::Internal),
            ("find", Safety::ReadOnly, "fs.find", Sends::Internal),
            ("grep", Safety::ReadOnly, "fs.search", Sends::Internal),
            ("write", Safety::Write, "fs.write", Sends::Internal),
            ("edit", Safety::Write, "fs.edit", Sends::Internal),
            ("bash", Safety::Bash, "shell.exec", Sends::External),
        ];
        let tools = builtin
            .into_iter()
            .map(|(name, safety, action, sends)| {
                let spec = ToolSpec {
                    safety,
                    action: action.to_owned(),
                    resource_type: None,
                    resource_from: None,
                    input_schema: None,
                    normalize: BTreeMap::new(),
                    root: None,
                    reads: Vec::new(),
                    sends: Some(sends),
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
        if spec.sends.is_none() {
            spec.sends = Some(known.and_then(|known| known.sends).unwrap_or(Sends::External));
        }
        if let Some(bad) = spec.reads.iter().find(|class| !class_name(class)) {
            let message = format!("`{bad}` is no data class name: [a-z][a-z0-9_]*, 64 bytes");
            return Err(SchemaError::new(name, "reads", message));
        }
        if spec.reads.len() > MAX_READS {
            let message = format!("more than {MAX_READS} data classes");
            return Err(SchemaError::new(name, "reads", message));
        }
        spec.reads.sort();
        spec.reads.dedup();
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

    /// What the registry says of `tool`, looked up once; an unregistered tool's defaults when
    /// it is not registered.
    pub fn describe<'a>(&'a self, tool: &'a str) -> Described<'a> {
        match self.get(tool) {
            Some(spec) => Described {
                safety: spec.safety,
                action: &spec.action,
                reads: &spec.reads,
                sends: spec.sends.unwrap_or(Sends::External),
            },
            None => Described {
                safety: Safety::Unknown,
                action: tool,
                reads: &[],
                sends: Sends::External,
            },
        }
    }

    /// The safety level of a tool; [`Safety::Unknown`] when it is not registered.
    pub fn safety(&self, tool: &str) -> Safety {
        self.describe(tool).safety
    }

    /// Where `tool` sends: [`Sends::External`] when it is not registered.
    pub fn sends(&self, tool: &str) -> Sends {
        self.describe(tool).sends
    }

    /// The data classes `tool` reads by itself (sorted; none when it is not registered).
    pub fn reads<'a>(&'a self, tool: &'a str) -> &'a [String] {
        self.describe(tool).reads
    }

    /// The data classes a call of `tool` on a resource of `classification` reads: the tool's
    /// own and the resource's but `public` (toolgate cannot see what a tool's output holds, so
    /// a call on a classified resource is taken to have read it), sorted.
    pub fn classes_read(&self, tool: &str, classification: &str) -> Vec<String> {
        let mut classes = self.reads(tool).to_vec();
        let classified = !matches!(classification, "" | "public");
        if classified && !classes.iter().any(|c| c == classification) {
            classes.push(classification.to_owned());
            classes.sort();
        }
        classes
    }

    /// The action a request for `tool` takes when it names none: the registry's default, or the
    /// tool name itself for an unregistered tool.
    pub fn default_action<'a>(&'a self, tool: &'a str) -> &'a str {
        self.describe(tool).action
    }
}

/// What the registry says of one tool ([`ToolRegistry::describe`]).
#[derive(Debug, Clone, Copy)]
pub struct Described<'a> {
    pub safety: Safety,
    /// The action a request for it takes when it names none.
    pub action: &'a str,
    /// The data classes every call reads, sorted.
    pub reads: &'a [String],
    pub sends: Sends,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(toml: &str) -> ToolSpec {
        toml::from_str(toml).unwrap()
    }

    #[test]
    fn what_a_tool_sends_defaults_to_external_but_for_the_file_tools() {
        let mut registry = ToolRegistry::default();
        registry.insert("post", spec("safety = \"write\"")).unwrap();
        registry.insert("read", spec("reads = [\"secret\"]")).unwrap();
        let sends = |tool| registry.sends(tool);
        assert_eq!((sends("read"), sends("edit")), (Sends::Internal, Sends::Internal));
        assert_eq!((sends("bash"), sends("post")), (Sends::External, Sends::External));
        assert_eq!(sends("never-registered"), Sends::External);
        assert_eq!(registry.classes_read("read", "customer_pii"), ["customer_pii", "secret"]);
        assert_eq!(registry.classes_read("read", "secret"), ["secret"]);
        assert!(registry.classes_read("never-registered", "").is_empty());
        assert!(registry.classes_read("never-registered", "public").is_empty(), "no taint");
    }

    #[test]
    fn a_data_class_is_a_plain_name() {
        let mut registry = ToolRegistry::default();
        for bad in ["Secret", "pii data", "", "9lives", &"x".repeat(65)] {
            let refused =
                registry.insert("t", spec(&format!("safety = \"read_only\"\nreads = [\"{bad}\"]")));
            assert!(refused.unwrap_err().to_string().contains("reads"), "{bad:?}");
        }
        let many: Vec<String> = (0..=MAX_READS).map(|n| format!("\"c{n}\"")).collect();
        let refused = registry
            .insert("t", spec(&format!("safety = \"read_only\"\nreads = [{}]", many.join(","))));
        assert!(refused.is_err());
    }
}
