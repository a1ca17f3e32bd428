//! One tool call as any agent's hook reports it, decided and reported in toolgate's terms: the
//! before-hook is a Decide, the after-hook an Execute, whatever the agent's wire format.
//!
//! Decide records the agent's id for the call as its idempotency key and Execute names its
//! decision by it, so the two pair without the hook keeping any state.

use std::time::Duration;

use serde_json::{Map, Value, json};
use tonic::Status;

use super::agent::Agent;
use super::vocabulary::{agents_input, canonical};
use crate::config::HookConfig;
use crate::proto::{self, ApprovalState, Outcome};
use crate::sidecar::Sidecar;

/// Where in a tool call's life a hook event is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    /// Before the tool runs: decided.
    Before,
    /// After it ran; `failed` when the agent says it failed.
    After { failed: bool },
    /// Any other event: answered with nothing.
    Other,
}

/// One hook event, in toolgate's terms.
#[derive(Debug, Clone)]
pub struct Call {
    pub phase: Phase,
    pub session: String,
    /// The agent's id for this call, the same before and after.
    pub id: String,
    /// The tool's name as the agent calls it.
    pub tool: String,
    pub input: Map<String, Value>,
    pub cwd: String,
    /// The agent's permission mode, when it has one.
    pub mode: String,
    /// The agent's version, when it says.
    pub version: String,
    /// What the tool gave back (after).
    pub response: Option<Value>,
    pub duration_ms: Option<u64>,
    /// Why the tool failed (after, when the agent says).
    pub error: Option<String>,
}

impl Call {
    /// A call with nothing in it but its phase.
    pub fn new(phase: Phase) -> Self {
        Self {
            phase,
            session: String::new(),
            id: String::new(),
            tool: String::new(),
            input: Map::new(),
            cwd: String::new(),
            mode: String::new(),
            version: String::new(),
            response: None,
            duration_ms: None,
            error: None,
        }
    }
}

/// What the agent is told before its call runs.
#[derive(Debug, Clone, PartialEq)]
pub enum Permission {
    /// Nothing: the agent's own permission flow decides, as without the hook.
    Defer,
    /// Run it, with this input instead when given, without the agent's own prompt; toolgate's
    /// reason for the agent's user.
    Allow(String, Option<Value>),
    /// Ask the agent's user, with this input instead when given.
    Ask(String, Option<Value>),
    /// Do not run it; the model is told why.
    Deny(String),
}

/// What the agent is told after its call ran: nothing, or that the call broke its decision.
#[derive(Debug, Clone, PartialEq)]
pub struct Report {
    pub violation: Option<String>,
}

/// How long the sidecar may take to answer one call (a Decide, an Execute, a Withdraw; an Await
/// takes the hold and this): well inside the hook timeout `hook install` writes (the hold and 30
/// s), so that a sidecar that hangs is a blocked call, never an agent's timeout, which some
/// agents take as leave to run the call.
const ANSWER: Duration = Duration::from_secs(8);

/// Permission modes in which an agent shows a person what a hook answers `ask` for: only in
/// these is a call that needs approval handed to the agent's prompt. In any other (bypassing
/// modes, a classifier's, one toolgate does not know) it is held for a person like an agent's
/// that cannot ask at all, so that no approval is recorded that nobody gave.
const PERSON_ASKED: [&str; 3] = ["default", "acceptEdits", "plan"];

/// Whether `agent`, in permission `mode`, asks its user when a hook answers `ask`.
fn asks(agent: Agent, mode: &str) -> bool {
    agent.can_ask() && PERSON_ASKED.contains(&mode)
}

/// Decides `call` (a before-event).
pub async fn decide(
    agent: Agent,
    call: &Call,
    config: &HookConfig,
    sidecar: &mut Sidecar,
) -> Result<Permission, Status> {
    let mut request = sidecar.request(decide_request(agent, call, config));
    request.set_timeout(ANSWER);
    let answer = sidecar.gate.decide(request).await?.into_inner();
    let asks = asks(agent, &call.mode);
    let reason = reason(&answer);
    // The rewritten arguments in the agent's own fields; none when they cannot be put there.
    let rewritten = || match serde_json::from_str::<Value>(&answer.rewritten_args_json) {
        Ok(Value::Object(args)) => agents_input(agent, &call.tool, &args).map(Value::Object),
        _ => None,
    };
    let verdict = match answer.outcome() {
        Outcome::Allow if config.allow_skips_prompt => Permission::Allow(reason, None),
        Outcome::Allow => Permission::Defer,
        // An agent that cannot ask would run a rewritten input without its own prompt, and
        // one that cannot rewrite would run the input as it was: the model is told the input
        // toolgate lets run, and may call it so. A rewrite that cannot be put in the agent's
        // own fields is refused: the call must never run as it was.
        Outcome::Rewrite => match rewritten() {
            Some(input) if agent.can_rewrite() && config.allow_skips_prompt => {
                Permission::Allow(reason, Some(input))
            }
            Some(input) if agent.can_rewrite() && asks => Permission::Ask(reason, Some(input)),
            Some(input) => Permission::Deny(format!("{reason}; call it again as: {input}")),
            None => {
                Permission::Deny(format!("{reason}; the rewritten call cannot be given to {agent}"))
            }
        },
        Outcome::RequireApproval if asks => Permission::Ask(reason, None),
        Outcome::RequireApproval => hold(&answer, reason, config, sidecar).await?,
        Outcome::DryRun => {
            Permission::Deny(format!("{reason}; only a dry run is allowed: run it as a dry run"))
        }
        Outcome::Deny | Outcome::Unspecified => Permission::Deny(reason),
    };
    Ok(verdict)
}

/// The model's reason: toolgate's, with the policies that gave it.
fn reason(answer: &proto::DecideResponse) -> String {
    let policies = if answer.policy_ids.is_empty() {
        String::new()
    } else {
        format!(" (policies: {})", answer.policy_ids.join(", "))
    };
    format!("toolgate: {}{policies}", answer.reason)
}

/// A call that needs approval, for an agent that cannot ask: held while a person approves
/// through toolgate (`hold_ms`), then run as allowed; denied, saying that it waits for a person
/// and how to approve it, when nobody approved in time. Its pending approval is withdrawn then,
/// so that a later approval cannot let a call run that the agent has given up.
async fn hold(
    answer: &proto::DecideResponse,
    reason: String,
    config: &HookConfig,
    sidecar: &mut Sidecar,
) -> Result<Permission, Status> {
    let id = answer.decision_id.clone();
    let mut state = ApprovalState::Pending;
    if config.hold_ms > 0 {
        let wait = proto::AwaitRequest { decision_id: id.clone(), timeout_ms: config.hold_ms };
        let mut wait = sidecar.request(wait);
        wait.set_timeout(Duration::from_millis(u64::from(config.hold_ms)) + ANSWER);
        let approval = sidecar.approvals.r#await(wait).await?.into_inner();
        state = approval.state();
        if state == ApprovalState::Approved || approval.verdict_outcome() == Outcome::Allow {
            return Ok(if config.allow_skips_prompt {
                Permission::Allow(format!("{reason}; approved by {}", approval.approver), None)
            } else {
                Permission::Defer
            });
        }
        if state != ApprovalState::Pending {
            let comment = approval.comment;
            return Ok(Permission::Deny(format!("{reason}; not approved ({comment})")));
        }
    }
    if state == ApprovalState::Pending {
        let why = "the agent cannot wait longer for a person".to_owned();
        let mut withdraw =
            sidecar.request(proto::WithdrawRequest { decision_id: id.clone(), reason: why });
        withdraw.set_timeout(ANSWER);
        // A verdict given in the meantime wins: the call is denied now either way.
        let _ = sidecar.approvals.withdraw(withdraw).await;
    }
    let waited = Duration::from_millis(u64::from(config.hold_ms)).as_secs();
    Ok(Permission::Deny(format!(
        "{reason}; this call waits for a person, and none approved it within {waited} s \
         (decision {id}): ask an approver to watch `toolgate approvals list`, then make the \
         call again and have it approved while it is held"
    )))
}

/// The Decide request for a before-event.
pub fn decide_request(agent: Agent, call: &Call, config: &HookConfig) -> proto::DecideRequest {
    let canonical = canonical(agent, &call.tool, &call.input);
    let tool = config.tools.get(&call.tool).cloned().unwrap_or(canonical.tool);
    let text = |key: &str| canonical.args.get(key).and_then(Value::as_str);
    let resource = if let Some((server, _)) = &canonical.mcp {
        proto::Resource { r#type: "mcp".into(), id: server.clone(), ..Default::default() }
    } else if let Some(path) = text("path") {
        proto::Resource { r#type: "file".into(), id: path.into(), ..Default::default() }
    } else if let Some(command) = text("command") {
        // The program, not the whole line: resource ids are short names policies match.
        let program = command.split_whitespace().next().unwrap_or_default();
        proto::Resource { r#type: "command".into(), id: program.into(), ..Default::default() }
    } else if let Some(url) = text("url") {
        proto::Resource { r#type: "url".into(), id: url.into(), ..Default::default() }
    } else {
        proto::Resource::default()
    };
    let mut context = json!({
        "harness": agent.harness(),
        "harness_tool": call.tool,
        "cwd": call.cwd,
        "permission_mode": call.mode,
    });
    if !call.version.is_empty() {
        context["harness_version"] = json!(call.version);
    }
    if let Some((server, tool)) = &canonical.mcp {
        context["mcp"] = json!({ "server": server, "tool": tool });
    }
    proto::DecideRequest {
        session_id: call.session.clone(),
        actor: Some(proto::Actor {
            id: config.actor(agent.harness()).to_owned(),
            kind: "agent".into(),
            ..Default::default()
        }),
        tool,
        resource: Some(resource),
        args_json: Value::Object(canonical.args).to_string(),
        context_json: context.to_string(),
        options: Some(options(agent, &call.mode, config.allow_skips_prompt)),
        plan: Some(proto::ExecutionPlan {
            idempotency_key: key(agent, &call.id),
            ..Default::default()
        }),
        ..Default::default()
    }
}

/// The idempotency key of a call: the agent's id for it, under the agent's name, so that two
/// agents' ids never meet.
fn key(agent: Agent, id: &str) -> String {
    if id.is_empty() { String::new() } else { format!("{}:{id}", agent.name()) }
}

/// What a call may do (`allow_write`, `allow_bash`) under an agent's permission mode
/// (docs/agents.md has the table). When toolgate's `allow` defers to the agent, its own prompt
/// still stands before every write and command it would ask about, so the options are what the
/// agent may let run after its own checks: everything but in plan mode. When the `allow` skips
/// the prompt, they are what the agent itself runs without asking; a mode toolgate does not
/// know gets neither.
pub fn options(agent: Agent, mode: &str, allow_skips_prompt: bool) -> proto::RunOptions {
    let (allow_write, allow_bash) = match (mode, allow_skips_prompt) {
        ("plan", _) => (false, false),
        (_, false) => (true, true),
        ("acceptEdits" | "auto_edit", true) => (true, false),
        ("bypassPermissions" | "yolo", true) => (true, true),
        // Codex reports `bypassPermissions` in every `exec` run, and has no prompt a hook
        // could skip: its own sandbox and approvals stand either way.
        (_, true) if agent == Agent::Codex => (true, true),
        (_, true) => (false, false),
    };
    proto::RunOptions { allow_write, allow_bash, ..Default::default() }
}

/// Reports `call` (an after-event).
pub async fn report(
    agent: Agent,
    call: &Call,
    config: &HookConfig,
    sidecar: &mut Sidecar,
) -> Result<Report, Status> {
    let mut request = sidecar.request(execute_request(agent, call, config));
    request.set_timeout(ANSWER);
    let answer = sidecar.gate.execute(request).await?.into_inner();
    let violation =
        (!answer.violation.is_empty()).then(|| format!("toolgate: {}", answer.violation));
    Ok(Report { violation })
}

/// The Execute request for an after-event.
pub fn execute_request(agent: Agent, call: &Call, config: &HookConfig) -> proto::ExecuteRequest {
    let Phase::After { failed } = call.phase else {
        unreachable!("only an after-event is reported")
    };
    let response = call.response.clone().unwrap_or(Value::Null);
    let text = match &response {
        Value::String(text) => text.clone(),
        Value::Null => String::new(),
        other => other.to_string(),
    };
    let failed = failed
        || ["is_error", "isError"]
            .iter()
            .any(|key| response.get(key).and_then(Value::as_bool) == Some(true));
    let canonical = canonical(agent, &call.tool, &call.input);
    proto::ExecuteRequest {
        idempotency_key: key(agent, &call.id),
        args_json: Value::Object(canonical.args).to_string(),
        status: if failed { proto::ExecutionStatus::Error } else { proto::ExecutionStatus::Ok }
            as i32,
        result_bytes: text.len() as u64,
        duration_us: call.duration_ms.map_or(0, |ms| ms.saturating_mul(1000)),
        error: call.error.clone().unwrap_or_default(),
        output: config.report_output.then_some(text),
        // A call toolgate answered `ask` for ran only because the person at the agent's own
        // prompt let it through: its pending approval is theirs. An agent that does not ask
        // never names an approver: its calls ran only after a person approved in toolgate.
        approved_in_harness: if asks(agent, &call.mode) {
            config.approver(agent.harness())
        } else {
            String::new()
        },
        ..Default::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn before(tool: &str, input: Value) -> Call {
        Call {
            session: "s".into(),
            id: "call_1".into(),
            tool: tool.into(),
            input: input.as_object().unwrap().clone(),
            ..Call::new(Phase::Before)
        }
    }

    #[test]
    fn a_request_names_the_agent_the_vocabulary_and_what_the_tool_touches() {
        let config = HookConfig::default();
        let call = before("run_shell_command", json!({"command": "git status"}));
        let request = decide_request(Agent::Gemini, &call, &config);
        assert_eq!(request.tool, "bash");
        assert_eq!(request.actor.unwrap().id, "gemini-cli");
        let resource = request.resource.unwrap();
        assert_eq!((resource.r#type.as_str(), resource.id.as_str()), ("command", "git"));
        let context: Value = serde_json::from_str(&request.context_json).unwrap();
        assert_eq!(context["harness"], "gemini-cli");
        assert_eq!(context["harness_tool"], "run_shell_command");
        assert_eq!(request.plan.unwrap().idempotency_key, "gemini:call_1");

        let call = before("mcp__github__create_issue", json!({"title": "x"}));
        let request = decide_request(Agent::Claude, &call, &config);
        let context: Value = serde_json::from_str(&request.context_json).unwrap();
        assert_eq!(context["mcp"], json!({"server": "github", "tool": "create_issue"}));
        assert_eq!(request.resource.unwrap().id, "github");
    }

    #[test]
    fn an_override_names_the_registry_tool() {
        let config = HookConfig {
            tools: [("WebFetch".to_owned(), "read".to_owned())].into(),
            ..HookConfig::default()
        };
        let call = before("WebFetch", json!({"url": "https://a.example"}));
        assert_eq!(decide_request(Agent::Claude, &call, &config).tool, "read");
    }

    #[test]
    fn options_follow_the_permission_mode() {
        let cases = [
            (Agent::Claude, "default", false, (true, true)),
            (Agent::Claude, "plan", false, (false, false)),
            (Agent::Claude, "default", true, (false, false)),
            (Agent::Claude, "acceptEdits", true, (true, false)),
            (Agent::Claude, "bypassPermissions", true, (true, true)),
            (Agent::Claude, "plan", true, (false, false)),
            (Agent::Claude, "auto", true, (false, false)),
            (Agent::Claude, "a-mode-from-the-future", true, (false, false)),
            (Agent::Gemini, "yolo", true, (true, true)),
            (Agent::Codex, "default", true, (true, true)),
        ];
        for (agent, mode, skips, expected) in cases {
            let o = options(agent, mode, skips);
            assert_eq!((o.allow_write, o.allow_bash), expected, "{agent} {mode} {skips}");
        }
    }

    #[test]
    fn only_an_agent_that_asks_names_an_approver() {
        let config = HookConfig::default();
        let mut call = before("Bash", json!({"command": "ls"}));
        call.phase = Phase::After { failed: false };
        call.mode = "default".into();
        assert_eq!(
            execute_request(Agent::Claude, &call, &config).approved_in_harness,
            "claude-code:user"
        );
        assert_eq!(execute_request(Agent::Codex, &call, &config).approved_in_harness, "");
        // Where nobody is asked (a bypass, a classifier, a mode toolgate does not know).
        for mode in ["bypassPermissions", "auto", "dontAsk", "", "a-mode-from-the-future"] {
            call.mode = mode.into();
            assert_eq!(execute_request(Agent::Claude, &call, &config).approved_in_harness, "");
        }
    }
}
