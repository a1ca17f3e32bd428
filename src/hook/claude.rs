//! Claude Code's hook protocol, which Codex CLI speaks too: `PreToolUse`, `PostToolUse` and
//! (Claude Code only) `PostToolUseFailure`, their JSON on stdin (or as the body of an http
//! hook's POST), the answer as JSON on stdout, exit code 2 to block with stderr as the reason.
//!
//! Where the two differ: Codex cannot ask (`ask` fails its hook, and a failed hook lets the
//! call run), ignores a deny without a reason, and reports a failed tool with `PostToolUse`
//! like any other (docs/agents.md).

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
    pub tool_name: String,
    pub tool_input: Map<String, Value>,
    pub tool_use_id: String,
    pub cwd: String,
    pub permission_mode: String,
    pub tool_response: Option<Value>,
    /// How long the tool ran (PostToolUse and PostToolUseFailure, when the agent says).
    pub duration_ms: Option<u64>,
    /// Why the tool failed (PostToolUseFailure).
    pub error: Option<String>,
}

impl Payload {
    /// The call this event is about.
    pub fn call(self) -> Call {
        let phase = match self.hook_event_name.as_str() {
            "PreToolUse" => Phase::Before,
            "PostToolUse" => Phase::After { failed: false },
            "PostToolUseFailure" => Phase::After { failed: true },
            _ => Phase::Other,
        };
        Call {
            phase,
            session: self.session_id,
            id: self.tool_use_id,
            tool: self.tool_name,
            input: self.tool_input,
            cwd: self.cwd,
            mode: self.permission_mode,
            version: String::new(),
            response: self.tool_response,
            duration_ms: self.duration_ms,
            error: self.error,
        }
    }
}

/// The PreToolUse answer.
pub fn before(verdict: &Permission) -> Value {
    let (decision, reason, input) = match verdict {
        // No `permissionDecision`: the agent's permission flow goes on as without the hook.
        Permission::Defer => return json!({}),
        Permission::Allow(reason, input) => ("allow", reason, input),
        Permission::Ask(reason, input) => ("ask", reason, input),
        Permission::Deny(reason) => ("deny", reason, &None),
    };
    let mut output = json!({
        "hookEventName": "PreToolUse",
        "permissionDecision": decision,
        "permissionDecisionReason": reason,
    });
    if let Some(input) = input {
        output["updatedInput"] = input.clone();
    }
    json!({ "hookSpecificOutput": output })
}

/// The PostToolUse answer: nothing to add, unless the call broke its decision.
pub fn after(report: &Report) -> Value {
    match &report.violation {
        None => json!({}),
        Some(violation) => json!({ "decision": "block", "reason": violation }),
    }
}

/// The answer to `verdict` or `report`, on stdout with exit 0.
pub fn answer(verdict: Result<&Permission, &Report>) -> Answer {
    let value = match verdict {
        Ok(verdict) => before(verdict),
        Err(report) => after(report),
    };
    Answer::stdout(value.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_deny_always_carries_its_reason_and_a_defer_says_nothing() {
        let deny = before(&Permission::Deny("toolgate: no".into()));
        assert_eq!(deny["hookSpecificOutput"]["permissionDecision"], "deny");
        assert_eq!(deny["hookSpecificOutput"]["permissionDecisionReason"], "toolgate: no");
        assert_eq!(before(&Permission::Defer), json!({}));
    }

    #[test]
    fn a_rewrite_goes_with_its_decision() {
        let input = Some(json!({"command": "rm -i x"}));
        let allow = before(&Permission::Allow("why".into(), input.clone()));
        assert_eq!(allow["hookSpecificOutput"]["permissionDecision"], "allow");
        assert_eq!(allow["hookSpecificOutput"]["updatedInput"]["command"], "rm -i x");
        let ask = before(&Permission::Ask("why".into(), input));
        assert_eq!(ask["hookSpecificOutput"]["permissionDecision"], "ask");
        assert_eq!(ask["hookSpecificOutput"]["updatedInput"]["command"], "rm -i x");
    }

    #[test]
    fn events_map_to_phases() {
        let payload = |event: &str| Payload { hook_event_name: event.into(), ..Default::default() };
        assert_eq!(payload("PreToolUse").call().phase, Phase::Before);
        assert_eq!(payload("PostToolUse").call().phase, Phase::After { failed: false });
        assert_eq!(payload("PostToolUseFailure").call().phase, Phase::After { failed: true });
        assert_eq!(payload("Stop").call().phase, Phase::Other);
    }
}
