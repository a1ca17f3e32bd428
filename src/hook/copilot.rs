//! GitHub Copilot CLI's hook protocol: `preToolUse`, `postToolUse` and `postToolUseFailure`
//! command hooks (the `version: 1` hooks file), their JSON on stdin with `toolName` and
//! `toolArgs`, the answer as JSON on stdout (`permissionDecision`, `permissionDecisionReason`).
//! The payload names neither its event (`hook install` gives it with `--event`; without it, an
//! after-event is told by its `toolResult`, a failure by its `error`) nor an id for the call. A hook that exits non-zero blocks the call; one that times out does
//! not, so toolgate answers well within the hook's `timeoutSec`.

use serde::Deserialize;
use serde_json::{Map, Value, json};

use super::Answer;
use super::call::{Call, Permission, Phase, Report};

/// The fields of a hook's input that toolgate reads.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct Payload {
    pub session_id: String,
    pub cwd: String,
    pub tool_name: String,
    /// An object; older versions sent it as a JSON string.
    pub tool_args: Value,
    pub tool_result: Option<Value>,
    pub error: Option<Value>,
}

impl Payload {
    /// The call this event is about, at `event` when the hook's command names it.
    pub fn call(self, event: Option<&str>) -> Call {
        let phase = match (event, &self.tool_result, &self.error) {
            (Some("preToolUse"), _, _) => Phase::Before,
            (Some("postToolUse"), _, _) => Phase::After { failed: false },
            (Some("postToolUseFailure"), _, _) => Phase::After { failed: true },
            (Some(_), _, _) => Phase::Other,
            (None, _, Some(error)) if !error.is_null() => Phase::After { failed: true },
            (None, Some(result), _) if !result.is_null() => Phase::After { failed: false },
            (None, _, _) => Phase::Before,
        };
        let input = match self.tool_args {
            Value::Object(args) => args,
            Value::String(text) => serde_json::from_str(&text).unwrap_or_default(),
            _ => Map::new(),
        };
        let response = self
            .tool_result
            .map(|result| result.get("textResultForLlm").cloned().unwrap_or(result));
        let error = self.error.filter(|e| !e.is_null()).map(|error| match error {
            Value::String(text) => text,
            other => other
                .get("message")
                .and_then(Value::as_str)
                .map_or_else(|| other.to_string(), str::to_owned),
        });
        Call {
            session: self.session_id,
            tool: self.tool_name,
            input,
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
        Ok(Permission::Defer) | Err(Report { violation: None }) => {
            return Answer::stdout(String::new());
        }
        Ok(Permission::Allow(reason, _)) => {
            json!({ "permissionDecision": "allow", "permissionDecisionReason": reason })
        }
        // Copilot CLI does not ask here (`can_ask`): an ask that reached here is refused.
        Ok(Permission::Ask(reason, _) | Permission::Deny(reason)) => deny(reason),
        Err(Report { violation: Some(violation) }) => deny(violation),
    };
    Answer::stdout(value.to_string())
}

/// The answer that refuses the call, with `reason` for the model.
pub fn deny(reason: &str) -> Value {
    json!({ "permissionDecision": "deny", "permissionDecisionReason": reason })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_event_is_read_from_what_the_payload_carries() {
        let call = |payload: Value| serde_json::from_value::<Payload>(payload).unwrap().call(None);
        let before =
            call(json!({"sessionId": "s", "toolName": "bash", "toolArgs": {"command": "ls"}}));
        assert_eq!((before.phase, before.input["command"].as_str()), (Phase::Before, Some("ls")));
        let old = call(json!({"toolName": "bash", "toolArgs": "{\"command\":\"ls\"}"}));
        assert_eq!(old.input["command"], "ls");
        let after = call(
            json!({"toolName": "bash", "toolArgs": {}, "toolResult": {"resultType": "success", "textResultForLlm": "a b"}}),
        );
        assert_eq!(
            (after.phase, after.response),
            (Phase::After { failed: false }, Some(json!("a b")))
        );
        let failed =
            call(json!({"toolName": "bash", "toolArgs": {}, "error": {"message": "boom"}}));
        assert_eq!(
            (failed.phase, failed.error.as_deref()),
            (Phase::After { failed: true }, Some("boom"))
        );
    }
}
