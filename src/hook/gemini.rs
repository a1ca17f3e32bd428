//! Gemini CLI's hook protocol: `BeforeTool` and `AfterTool` command hooks, their JSON on stdin,
//! the answer as JSON on stdout (`decision` and `reason`; `hookSpecificOutput.tool_input` laid
//! over the arguments). Gemini CLI parses stdout as JSON whatever the exit code, and blocks on
//! any text with an exit code of 2 or more; it sends no id for the call, and no event for a
//! failed tool (its `tool_response` carries the `error`). It cannot ask: `ask` waits forever
//! when nobody is at the terminal.

use serde::Deserialize;
use serde_json::{Map, Value, json};

use super::Answer;
use super::call::{Call, Permission, Phase, Report};

/// The fields of a hook's input that toolgate reads.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct Payload {
    pub hook_event_name: String,
    pub session_id: String,
    pub cwd: String,
    pub tool_name: String,
    pub tool_input: Map<String, Value>,
    pub tool_response: Option<Value>,
    /// For an MCP tool: its server and its name there.
    pub mcp_context: Option<McpContext>,
}

/// `mcp_context` of an MCP tool's event.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct McpContext {
    pub server_name: String,
    pub tool_name: String,
}

impl Payload {
    /// The call this event is about (an MCP tool named `mcp__server__tool`, as the other
    /// agents name them).
    pub fn call(self) -> Call {
        let failed =
            self.tool_response.as_ref().and_then(|r| r.get("error")).is_some_and(|e| !e.is_null());
        let phase = match self.hook_event_name.as_str() {
            "BeforeTool" => Phase::Before,
            "AfterTool" => Phase::After { failed },
            _ => Phase::Other,
        };
        let tool = match &self.mcp_context {
            Some(mcp) if !mcp.server_name.is_empty() && !mcp.tool_name.is_empty() => {
                format!("mcp__{}__{}", mcp.server_name, mcp.tool_name)
            }
            _ => self.tool_name,
        };
        let error = failed.then(|| {
            let error = self.tool_response.as_ref().map_or(&Value::Null, |r| &r["error"]);
            error
                .get("message")
                .and_then(Value::as_str)
                .map_or_else(|| error.to_string(), str::to_owned)
        });
        // What the model is given back is the size that counts.
        let response = self.tool_response.map(|r| r.get("llmContent").cloned().unwrap_or(r));
        Call {
            session: self.session_id,
            tool,
            input: self.tool_input,
            cwd: self.cwd,
            response,
            error,
            ..Call::new(phase)
        }
    }
}

/// The answer to `verdict` or `report`, on stdout with exit 0.
pub fn answer(verdict: Result<&Permission, &Report>) -> Answer {
    let value = match verdict {
        Ok(Permission::Defer) => json!({}),
        Ok(Permission::Allow(reason, input)) => {
            let mut allow = json!({ "decision": "allow", "reason": reason });
            if let Some(input) = input {
                allow["hookSpecificOutput"] =
                    json!({ "hookEventName": "BeforeTool", "tool_input": input });
            }
            allow
        }
        // Gemini CLI cannot ask (`can_ask`): an ask that reached here is refused.
        Ok(Permission::Ask(reason, _) | Permission::Deny(reason)) => deny(reason),
        Err(Report { violation: None }) => json!({}),
        Err(Report { violation: Some(violation) }) => deny(violation),
    };
    Answer::stdout(value.to_string())
}

/// The answer that refuses the call, with `reason` for the model.
pub fn deny(reason: &str) -> Value {
    json!({ "decision": "deny", "reason": reason })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_mcp_tool_is_named_as_the_other_agents_name_it_and_a_failure_is_seen() {
        let payload: Payload = serde_json::from_value(json!({
            "hook_event_name": "AfterTool", "session_id": "s", "tool_name": "mcp_gh_create_issue",
            "tool_input": {}, "tool_response": {"error": {"message": "boom"}},
            "mcp_context": {"server_name": "gh", "tool_name": "create_issue"}
        }))
        .unwrap();
        let call = payload.call();
        assert_eq!(call.tool, "mcp__gh__create_issue");
        assert_eq!(
            (call.phase, call.error.as_deref()),
            (Phase::After { failed: true }, Some("boom"))
        );
    }

    #[test]
    fn a_deny_is_a_decision_with_its_reason() {
        let out = answer(Ok(&Permission::Deny("toolgate: no".into())));
        assert_eq!(out.stdout, r#"{"decision":"deny","reason":"toolgate: no"}"#);
        assert_eq!(answer(Ok(&Permission::Defer)).stdout, "{}");
        assert_eq!(crate::hook::blocked(crate::hook::Agent::Gemini, "x").exit, 2);
    }
}
