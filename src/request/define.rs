//! The definitions of `DefineTools`: which tools a harness was shown, each definition by hash
//! and by its parts' hashes, so that a change can be named.

use std::collections::{BTreeMap, BTreeSet};

use super::decide::{Actor, actor};
use super::{hash, required, within};
use crate::config::Limits;
use crate::error::FieldError;
use crate::proto;

/// The most tools one request may define, and the most parts one definition may have.
const MAX_TOOLS: usize = 1_000;
const MAX_PARTS: usize = 32;
/// The longest name of a part.
const MAX_PART_NAME_BYTES: usize = 64;

/// The name under which an MCP server's `instructions` are pinned like a tool's definition:
/// `mcp__<server>/instructions`, which no tool of any server is named (theirs are
/// `mcp__<server>__<tool>`). A call of it is no call: it asks an approver to accept them.
pub fn instructions_tool(server: &str) -> String {
    format!("mcp__{server}/instructions")
}

/// Whether `tool` names a server's instructions (see [`instructions_tool`]).
pub fn is_instructions(tool: &str) -> bool {
    tool.starts_with("mcp__") && tool.ends_with("/instructions") && !tool.contains("__/")
}

/// One tool's definition, by hash.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Definition {
    /// Lower-case hex SHA-256 of the whole definition.
    pub hash: String,
    /// Each part's hash, by the part's name.
    pub parts: BTreeMap<String, String>,
}

impl Definition {
    /// The parts that differ between this definition and `other`: added, gone or changed.
    pub fn differences(&self, other: &Self) -> Vec<String> {
        let names: BTreeSet<&String> = self.parts.keys().chain(other.parts.keys()).collect();
        names
            .into_iter()
            .filter(|name| self.parts.get(*name) != other.parts.get(*name))
            .cloned()
            .collect()
    }
}

/// A validated `DefineTools` request.
#[derive(Debug)]
pub struct ToolDefinitions {
    pub actor: Actor,
    pub session_id: String,
    pub tools: Vec<(String, Definition)>,
}

impl ToolDefinitions {
    /// The largest request that can be valid: every tool and part at its limit.
    pub fn max_bytes(limits: &Limits) -> usize {
        let part = MAX_PART_NAME_BYTES + 64 + 8;
        64 * limits.max_name_bytes + MAX_TOOLS * (limits.max_name_bytes + 64 + MAX_PARTS * part)
    }

    /// Validates a request: every rejection names its field, as Decide's do.
    pub fn from_proto(req: proto::DefineToolsRequest, limits: &Limits) -> Result<Self, FieldError> {
        let name = limits.max_name_bytes;
        let actor = actor(req.actor, name)?;
        within("session_id", &req.session_id, name)?;
        if req.tools.len() > MAX_TOOLS {
            return Err(FieldError::new("tools", format!("at most {MAX_TOOLS} tools")));
        }
        let mut tools = Vec::with_capacity(req.tools.len());
        let mut names = BTreeSet::new();
        for (i, tool) in req.tools.into_iter().enumerate() {
            required(&format!("tools[{i}].tool"), &tool.tool, name)?;
            // Two definitions of one name in one listing would both be taken as first seen.
            if !names.insert(tool.tool.clone()) {
                let field = format!("tools[{i}].tool");
                return Err(FieldError::new(&field, "listed twice"));
            }
            hash(&format!("tools[{i}].hash"), &tool.hash)?;
            if tool.parts.len() > MAX_PARTS {
                let field = format!("tools[{i}].parts");
                return Err(FieldError::new(&field, format!("at most {MAX_PARTS} parts")));
            }
            for (part, value) in &tool.parts {
                required(&format!("tools[{i}].parts"), part, MAX_PART_NAME_BYTES)?;
                hash(&format!("tools[{i}].parts[{part}]"), value)?;
            }
            let parts = tool.parts.into_iter().collect();
            tools.push((tool.tool, Definition { hash: tool.hash, parts }));
        }
        Ok(Self { actor, session_id: req.session_id, tools })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const H: &str = "0000000000000000000000000000000000000000000000000000000000000000";

    fn definition(parts: &[(&str, &str)]) -> Definition {
        let parts = parts.iter().map(|(n, h)| ((*n).to_owned(), (*h).to_owned())).collect();
        Definition { hash: H.into(), parts }
    }

    #[test]
    fn differences_name_parts_added_gone_and_changed() {
        let old = definition(&[("description", "a"), ("inputSchema", "b"), ("title", "t")]);
        let new = definition(&[("description", "x"), ("inputSchema", "b"), ("annotations", "c")]);
        assert_eq!(new.differences(&old), ["annotations", "description", "title"]);
        assert!(old.differences(&old).is_empty());
    }

    #[test]
    fn bad_definitions_are_named() {
        let request = |tool: &str, hash: &str| proto::DefineToolsRequest {
            actor: Some(proto::Actor { id: "a".into(), ..Default::default() }),
            session_id: String::new(),
            tools: vec![proto::ToolDefinition {
                tool: tool.into(),
                hash: hash.into(),
                parts: [("description".to_owned(), "nothex".to_owned())].into(),
            }],
        };
        let field = |req| ToolDefinitions::from_proto(req, &Limits::default()).unwrap_err().field;
        assert_eq!(field(request("", H)), "tools[0].tool");
        assert_eq!(field(request("t", "ABC")), "tools[0].hash");
        assert_eq!(field(request("t", H)), "tools[0].parts[description]");
    }
}
