//! The question of `NeverAllowed`: which of these tools no call by this actor, with these run
//! options, could make allowed.

use super::decide::{Actor, RunOptions, actor};
use super::{required, within};
use crate::config::Limits;
use crate::error::FieldError;
use crate::proto;
use crate::registry::ToolRegistry;

/// The most tools one question may name.
pub const MAX_TOOLS: usize = 10_000;

/// A validated `NeverAllowed` request.
#[derive(Debug)]
pub struct NeverAllowed {
    pub actor: Actor,
    /// Each tool, and the action its calls take (the registry's default when it named none).
    pub tools: Vec<(String, String)>,
    pub options: RunOptions,
}

impl NeverAllowed {
    /// The largest request that can be valid: every tool and action at its limit.
    pub fn max_bytes(limits: &Limits) -> usize {
        64 * limits.max_name_bytes + MAX_TOOLS * (2 * limits.max_name_bytes + 8)
    }

    /// Validates a request: every rejection names its field, as Decide's do.
    pub fn from_proto(
        req: proto::NeverAllowedRequest,
        limits: &Limits,
        registry: &ToolRegistry,
    ) -> Result<Self, FieldError> {
        let name = limits.max_name_bytes;
        let actor = actor(req.actor, name)?;
        if req.tools.len() > MAX_TOOLS {
            return Err(FieldError::new("tools", format!("at most {MAX_TOOLS} tools")));
        }
        let mut tools = Vec::with_capacity(req.tools.len());
        for (i, tool) in req.tools.into_iter().enumerate() {
            required(&format!("tools[{i}].tool"), &tool.tool, name)?;
            within(&format!("tools[{i}].action"), &tool.action, name)?;
            let field = format!("tools[{i}].action");
            let action = super::decide::action_of(registry, &tool.tool, tool.action, &field)?;
            tools.push((tool.tool, action));
        }
        let options = req.options.unwrap_or_default();
        let options = RunOptions {
            allow_write: options.allow_write,
            allow_bash: options.allow_bash,
            max_output_chars: None,
        };
        Ok(Self { actor, tools, options })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(tools: Vec<proto::ToolAction>) -> proto::NeverAllowedRequest {
        proto::NeverAllowedRequest {
            actor: Some(proto::Actor { id: "a".into(), ..Default::default() }),
            tools,
            options: None,
        }
    }

    #[test]
    fn tools_take_the_registrys_action_and_bad_ones_are_named() {
        let tool = |tool: &str, action: &str| proto::ToolAction {
            tool: tool.into(),
            action: action.into(),
        };
        let (limits, registry) = (Limits::default(), ToolRegistry::default());
        let ok = NeverAllowed::from_proto(
            request(vec![tool("read", ""), tool("x", "y")]),
            &limits,
            &registry,
        )
        .unwrap();
        assert_eq!(ok.tools, [("read".into(), "fs.read".into()), ("x".into(), "y".into())]);
        let err = NeverAllowed::from_proto(
            request(vec![tool("read", ""), tool("", "")]),
            &limits,
            &registry,
        )
        .unwrap_err();
        assert_eq!(err.field, "tools[1].tool");
        let err =
            NeverAllowed::from_proto(proto::NeverAllowedRequest::default(), &limits, &registry)
                .unwrap_err();
        assert_eq!(err.field, "actor.id");
    }
}
