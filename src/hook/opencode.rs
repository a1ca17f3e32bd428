//! OpenCode's tool hooks: OpenCode has no command hooks, so toolgate's plugin
//! (`opencode.js`, written by `hook install`) runs `toolgate hook opencode` from its
//! `tool.execute.before` and `tool.execute.after` with the event as JSON on stdin, and throws
//! the reason when the answer is a deny (OpenCode gives it to the model as the tool's result).
//! The plugin blocks whenever it gets no answer. OpenCode cannot ask from a plugin.

use serde::Deserialize;
use serde_json::{Map, Value, json};

use super::Answer;
use super::call::{Call, Permission, Phase, Report};

/// The plugin, with `__COMMAND__` (a JSON array: the binary and its arguments) and
/// `__TIMEOUT_MS__` to fill in.
pub const PLUGIN: &str = include_str!("opencode.js");

/// The plugin's event.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct Payload {
    pub event: String,
    /// The project's folder.
    pub cwd: String,
    pub tool: String,
    #[serde(rename = "sessionID")]
    pub session_id: String,
    #[serde(rename = "callID")]
    pub call_id: String,
    pub args: Map<String, Value>,
    pub output: Option<String>,
    pub duration_ms: Option<u64>,
    pub failed: bool,
    pub error: Option<String>,
}

impl Payload {
    /// The call this event is about.
    pub fn call(self) -> Call {
        let phase = match self.event.as_str() {
            "before" => Phase::Before,
            "after" => Phase::After { failed: self.failed },
            _ => Phase::Other,
        };
        Call {
            session: self.session_id,
            id: self.call_id,
            tool: self.tool,
            cwd: self.cwd,
            input: self.args,
            response: self.output.map(Value::String),
            duration_ms: self.duration_ms,
            error: self.error,
            ..Call::new(phase)
        }
    }
}

/// The answer to `verdict` or `report`.
pub fn answer(verdict: Result<&Permission, &Report>) -> Answer {
    let value = match verdict {
        Ok(Permission::Defer) | Err(Report { violation: None }) => allow(),
        Ok(Permission::Allow(_, input)) => match input {
            Some(args) => json!({ "decision": "allow", "args": args }),
            None => allow(),
        },
        // OpenCode cannot ask (`can_ask`): an ask that reached here is refused.
        Ok(Permission::Ask(reason, _) | Permission::Deny(reason)) => deny(reason),
        Err(Report { violation: Some(violation) }) => deny(violation),
    };
    Answer::stdout(value.to_string())
}

/// The answer that lets the event go on.
pub fn allow() -> Value {
    json!({ "decision": "allow" })
}

/// The answer that refuses the call, with `reason` for the model.
pub fn deny(reason: &str) -> Value {
    json!({ "decision": "deny", "reason": reason })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_plugin_has_its_blanks_and_events_map_to_phases() {
        assert!(PLUGIN.contains("__COMMAND__") && PLUGIN.contains("__TIMEOUT_MS__"));
        let payload: Payload = serde_json::from_value(json!({
            "event": "after", "tool": "bash", "sessionID": "s", "callID": "c",
            "args": {"command": "ls"}, "output": "a", "durationMs": 12, "failed": true
        }))
        .unwrap();
        let call = payload.call();
        assert_eq!((call.phase, call.id.as_str()), (Phase::After { failed: true }, "c"));
        assert_eq!(call.duration_ms, Some(12));
        assert_eq!(
            answer(Ok(&Permission::Deny("no".into()))).stdout,
            r#"{"decision":"deny","reason":"no"}"#
        );
    }
}
