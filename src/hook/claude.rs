//! Claude Code's `PreToolUse` and `PostToolUse` hooks as toolgate's Decide and Execute.
//!
//! The hook's JSON comes in (on stdin for a command hook, as the body of `POST /hooks/claude`
//! for an http hook) and its answer goes out in the same form; docs/claude-code.md shows both.
//! Decide records the hook's `tool_use_id` as its idempotency key, and Execute names its
//! decision by it, so the two pair without the hook keeping any state.

use std::collections::BTreeMap;

use serde::Deserialize;
use serde_json::{Map, Value, json};
use tonic::Status;

use crate::config::ClaudeHookConfig;
use crate::proto::{self, Outcome};
use crate::sidecar::Sidecar;

/// Claude Code's tools and the registry tools they are by default (`[hooks.claude.tools]`
/// overrides; any other name, `mcp__server__tool` included, is looked up as it is).
const TOOLS: [(&str, &str); 9] = [
    ("Read", "read"),
    ("Glob", "find"),
    ("Grep", "grep"),
    ("LS", "ls"),
    ("Write", "write"),
    ("Edit", "edit"),
    ("MultiEdit", "edit"),
    ("NotebookEdit", "edit"),
    ("Bash", "bash"),
];

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
    /// How long the tool ran (PostToolUse and PostToolUseFailure, when Claude Code says).
    pub duration_ms: Option<u64>,
    /// Why the tool failed (PostToolUseFailure).
    pub error: Option<String>,
}

/// Answers one hook event; events other than PreToolUse, PostToolUse and PostToolUseFailure
/// get `{}`.
pub async fn handle(
    payload: &Payload,
    config: &ClaudeHookConfig,
    sidecar: &mut Sidecar,
) -> Result<Value, Status> {
    match payload.hook_event_name.as_str() {
        "PreToolUse" => {
            let request = sidecar.request(decide_request(payload, config));
            let answer = sidecar.gate.decide(request).await?;
            Ok(pre_answer(&answer.into_inner(), config))
        }
        // A tool that failed ran too: its run is reported, with the error.
        "PostToolUse" | "PostToolUseFailure" => {
            let request = sidecar.request(execute_request(payload, config));
            let answer = sidecar.gate.execute(request).await?;
            Ok(post_answer(&answer.into_inner()))
        }
        _ => Ok(json!({})),
    }
}

/// The registry tool a Claude Code tool is.
pub fn tool(name: &str, overrides: &BTreeMap<String, String>) -> String {
    if let Some(tool) = overrides.get(name) {
        return tool.clone();
    }
    TOOLS.iter().find(|(claude, _)| *claude == name).map_or(name, |(_, tool)| tool).to_owned()
}

/// The Decide request for a PreToolUse event.
pub fn decide_request(payload: &Payload, config: &ClaudeHookConfig) -> proto::DecideRequest {
    let input = &payload.tool_input;
    let text = |key: &str| input.get(key).and_then(Value::as_str);
    let resource = if let Some(path) =
        text("file_path").or_else(|| text("notebook_path")).or_else(|| text("path"))
    {
        proto::Resource { r#type: "file".into(), id: path.into(), ..Default::default() }
    } else if let Some(command) = text("command") {
        // The program, not the whole line: resource ids are short names policies match.
        let program = command.split_whitespace().next().unwrap_or_default();
        proto::Resource { r#type: "command".into(), id: program.into(), ..Default::default() }
    } else if let Some(server) = payload.tool_name.strip_prefix("mcp__") {
        let server = server.split("__").next().unwrap_or_default();
        proto::Resource { r#type: "mcp".into(), id: server.into(), ..Default::default() }
    } else {
        proto::Resource::default()
    };
    let options = options(&payload.permission_mode, config.allow_skips_prompt);
    proto::DecideRequest {
        session_id: payload.session_id.clone(),
        actor: Some(proto::Actor {
            id: config.actor.clone(),
            kind: "agent".into(),
            ..Default::default()
        }),
        tool: tool(&payload.tool_name, &config.tools),
        resource: Some(resource),
        args_json: Value::Object(input.clone()).to_string(),
        context_json: json!({
            "harness": "claude-code",
            "claude_tool": payload.tool_name,
            "cwd": payload.cwd,
            "permission_mode": payload.permission_mode,
        })
        .to_string(),
        options: Some(options),
        plan: Some(proto::ExecutionPlan {
            idempotency_key: payload.tool_use_id.clone(),
            ..Default::default()
        }),
        ..Default::default()
    }
}

/// What a call may do (`allow_write`, `allow_bash`) under a Claude Code permission mode
/// (docs/claude-code.md has the table). When toolgate's `allow` defers to Claude Code, its
/// prompt still stands before every write and command it would ask about, so the options are
/// what Claude Code may let run after its own checks: everything but in plan mode. When the
/// `allow` skips the prompt, they are what Claude Code itself runs without asking; a mode
/// toolgate does not know gets neither.
pub fn options(permission_mode: &str, allow_skips_prompt: bool) -> proto::RunOptions {
    let (allow_write, allow_bash) = match (permission_mode, allow_skips_prompt) {
        ("plan", _) => (false, false),
        (_, false) => (true, true),
        ("acceptEdits", true) => (true, false),
        ("bypassPermissions", true) => (true, true),
        (_, true) => (false, false),
    };
    proto::RunOptions { allow_write, allow_bash, ..Default::default() }
}

/// The PreToolUse answer for a decision. A deny (and a dry run, which a hook cannot run) is
/// `deny` with the reason; a call that needs approval is `ask`: Claude Code's prompt is the
/// approval. An allow skips the prompt only with `allow_skips_prompt`; otherwise it is no
/// decision at all, and a rewrite is `ask` with the rewritten input, so that nothing runs that
/// Claude Code would not have asked about.
pub fn pre_answer(answer: &proto::DecideResponse, config: &ClaudeHookConfig) -> Value {
    let policies = if answer.policy_ids.is_empty() {
        String::new()
    } else {
        format!(" (policies: {})", answer.policy_ids.join(", "))
    };
    let reason = format!("toolgate: {}{policies}", answer.reason);
    let (decision, reason) = match answer.outcome() {
        Outcome::Allow | Outcome::Rewrite if config.allow_skips_prompt => ("allow", reason),
        // No `permissionDecision`: Claude Code's permission flow goes on as without the hook.
        Outcome::Allow => return json!({}),
        Outcome::Rewrite => ("ask", reason),
        Outcome::RequireApproval => ("ask", reason),
        Outcome::DryRun => {
            ("deny", format!("{reason}; only a dry run is allowed: run it as a dry run"))
        }
        Outcome::Deny | Outcome::Unspecified => ("deny", reason),
    };
    let mut output = json!({
        "hookEventName": "PreToolUse",
        "permissionDecision": decision,
        "permissionDecisionReason": reason,
    });
    if answer.outcome() == Outcome::Rewrite
        && let Ok(updated) = serde_json::from_str::<Value>(&answer.rewritten_args_json)
    {
        output["updatedInput"] = updated;
    }
    json!({ "hookSpecificOutput": output })
}

/// The Execute request for a PostToolUse event.
pub fn execute_request(payload: &Payload, config: &ClaudeHookConfig) -> proto::ExecuteRequest {
    let response = payload.tool_response.clone().unwrap_or(Value::Null);
    let text = match &response {
        Value::String(text) => text.clone(),
        Value::Null => String::new(),
        other => other.to_string(),
    };
    let failed = payload.hook_event_name == "PostToolUseFailure"
        || ["is_error", "isError"]
            .iter()
            .any(|key| response.get(key).and_then(Value::as_bool) == Some(true));
    proto::ExecuteRequest {
        idempotency_key: payload.tool_use_id.clone(),
        args_json: Value::Object(payload.tool_input.clone()).to_string(),
        status: if failed { proto::ExecutionStatus::Error } else { proto::ExecutionStatus::Ok }
            as i32,
        result_bytes: text.len() as u64,
        duration_us: payload.duration_ms.map_or(0, |ms| ms.saturating_mul(1000)),
        error: payload.error.clone().unwrap_or_default(),
        output: config.report_output.then_some(text),
        // A call toolgate answered `ask` for ran only because the person at Claude Code's
        // permission prompt let it through: its pending approval is theirs.
        approved_in_harness: config.approver.clone(),
        ..Default::default()
    }
}

/// The PostToolUse answer: nothing to add, unless the call broke its decision.
pub fn post_answer(answer: &proto::ExecuteResponse) -> Value {
    if answer.violation.is_empty() {
        json!({})
    } else {
        json!({ "decision": "block", "reason": format!("toolgate: {}", answer.violation) })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn claude_tools_map_to_the_registry_and_overrides_win() {
        let overrides = BTreeMap::from([("WebFetch".to_owned(), "read".to_owned())]);
        assert_eq!(tool("Read", &overrides), "read");
        assert_eq!(tool("NotebookEdit", &overrides), "edit");
        assert_eq!(tool("WebFetch", &overrides), "read");
        assert_eq!(tool("mcp__github__create_issue", &overrides), "mcp__github__create_issue");
    }

    #[test]
    fn a_rewrite_is_allowed_with_the_updated_input() {
        let answer = proto::DecideResponse {
            outcome: Outcome::Rewrite as i32,
            reason: "made interactive".into(),
            rewritten_args_json: r#"{"command":"rm -i x"}"#.into(),
            ..Default::default()
        };
        let skipping = ClaudeHookConfig { allow_skips_prompt: true, ..Default::default() };
        let output = pre_answer(&answer, &skipping);
        assert_eq!(output["hookSpecificOutput"]["permissionDecision"], "allow");
        assert_eq!(output["hookSpecificOutput"]["updatedInput"]["command"], "rm -i x");
        let output = pre_answer(&answer, &ClaudeHookConfig::default());
        assert_eq!(output["hookSpecificOutput"]["permissionDecision"], "ask");
        assert_eq!(output["hookSpecificOutput"]["updatedInput"]["command"], "rm -i x");
    }

    #[test]
    fn an_allow_defers_to_claude_code_unless_it_may_skip_the_prompt() {
        let answer = proto::DecideResponse { outcome: Outcome::Allow as i32, ..Default::default() };
        assert_eq!(pre_answer(&answer, &ClaudeHookConfig::default()), json!({}));
        let skipping = ClaudeHookConfig { allow_skips_prompt: true, ..Default::default() };
        assert_eq!(
            pre_answer(&answer, &skipping)["hookSpecificOutput"]["permissionDecision"],
            "allow"
        );
    }

    #[test]
    fn options_follow_the_permission_mode() {
        let cases = [
            ("default", false, (true, true)),
            ("plan", false, (false, false)),
            ("default", true, (false, false)),
            ("acceptEdits", true, (true, false)),
            ("bypassPermissions", true, (true, true)),
            ("plan", true, (false, false)),
            ("auto", true, (false, false)),
            ("a-mode-from-the-future", true, (false, false)),
        ];
        for (mode, skips, expected) in cases {
            let o = options(mode, skips);
            assert_eq!((o.allow_write, o.allow_bash), expected, "{mode} {skips}");
        }
    }
}
