//! The hooks of the agents that cannot ask, and of those that name no call, against the real
//! server: a call that needs approval is held until a person approves it (and is denied, its
//! approval withdrawn, when nobody does); Gemini CLI's before and after pair without an id.
//! The agents' own CLIs drive the same hooks in tests/agents.

use std::path::Path;
use std::process::Output;
use std::time::Duration;

use serde_json::{Value, json};
use toolgate::proto::approvals_client::ApprovalsClient;
use toolgate::proto::{ListPendingRequest, VerdictRequest};

use crate::helpers::{TestApp, rows, spawn_app_with};

/// The default policy, with a `git push` needing a person.
const POLICY: &str = r#"
@id("registered") permit (principal, action, resource) when { context.tool.safety != "unknown" };
@id("unknown") forbid (principal, action, resource) when { context.tool.safety == "unknown" };
@id("push-needs-a-person") @reason("a push needs a person") @outcome("require_approval")
forbid (principal, action, resource)
when { context.tool.name == "bash" && context.args.command == "git push" };
"#;

async fn app() -> TestApp {
    spawn_app_with(|c| {
        let policy = c.db.with_file_name("agents.cedar");
        std::fs::write(&policy, POLICY).unwrap();
        c.policy = Some(policy);
    })
    .await
}

/// `toolgate hook <agent>` with `payload` on stdin, `XDG_RUNTIME_DIR` in `runtime`.
async fn hook(
    agent: &str,
    app: &TestApp,
    payload: Value,
    extra: &[&str],
    runtime: &Path,
) -> Output {
    let mut args =
        vec!["hook".to_owned(), agent.to_owned(), "--server".to_owned(), app.url.clone()];
    args.extend(extra.iter().map(|a| (*a).to_owned()));
    let runtime = runtime.to_owned();
    tokio::task::spawn_blocking(move || {
        assert_cmd::Command::cargo_bin("toolgate")
            .unwrap()
            .args(&args)
            .env("XDG_RUNTIME_DIR", runtime)
            .write_stdin(payload.to_string())
            .output()
            .unwrap()
    })
    .await
    .unwrap()
}

fn codex(event: &str, command: &str) -> Value {
    json!({
        "session_id": "s-codex", "turn_id": "t1", "cwd": "/w", "hook_event_name": event,
        "model": "m", "permission_mode": "bypassPermissions", "tool_name": "Bash",
        "tool_input": {"command": command}, "tool_use_id": "call_push",
        "tool_response": if event == "PostToolUse" { json!("pushed\n") } else { Value::Null },
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_codex_cannot_ask_about_is_held_until_a_person_approves_and_runs_once() {
    let app = app().await;
    let runtime = tempfile::tempdir().unwrap();
    let held = {
        let (url, runtime) = (app.url.clone(), runtime.path().to_owned());
        let app_url = url.clone();
        tokio::spawn(async move {
            let args = ["hook", "codex", "--server", &app_url];
            let payload = codex("PreToolUse", "git push").to_string();
            let args: Vec<String> = args.iter().map(|a| (*a).to_owned()).collect();
            tokio::task::spawn_blocking(move || {
                assert_cmd::Command::cargo_bin("toolgate")
                    .unwrap()
                    .args(&args)
                    .env("XDG_RUNTIME_DIR", runtime)
                    .write_stdin(payload)
                    .output()
                    .unwrap()
            })
            .await
            .unwrap()
        })
    };
    // A person finds the call waiting and approves it while the hook holds it.
    let mut approvals = ApprovalsClient::new(app.channel.clone());
    let pending = loop {
        let list =
            approvals.list_pending(ListPendingRequest::default()).await.unwrap().into_inner();
        if let Some(first) = list.approvals.first() {
            break first.clone();
        }
        assert!(!held.is_finished(), "the hook ended before anyone could approve");
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    assert_eq!((pending.actor_id.as_str(), pending.tool.as_str()), ("codex", "bash"));
    let verdict = VerdictRequest {
        decision_id: pending.decision_id.clone(),
        approver: "alice".into(),
        comment: "ok".into(),
    };
    approvals.approve(verdict).await.unwrap();
    let out = held.await.unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    // Approved: Codex's own checks decide as without the hook.
    assert_eq!(serde_json::from_slice::<Value>(&out.stdout).unwrap(), json!({}));

    let after = hook("codex", &app, codex("PostToolUse", "git push"), &[], runtime.path()).await;
    assert_eq!(serde_json::from_slice::<Value>(&after.stdout).unwrap(), json!({}));
    let rows = rows(&app.db);
    let approved: Vec<_> = rows.iter().filter(|r| r.kind == "approval_approved").collect();
    assert_eq!(approved.len(), 1);
    assert_eq!(approved[0].actor_id.as_deref(), Some("alice"), "only the person approved it");
    let executed: Vec<_> = rows.iter().filter(|r| r.kind == "execution").collect();
    assert_eq!(executed.len(), 1);
    assert_eq!(executed[0].decision_id.as_deref(), Some(pending.decision_id.as_str()));
    assert!(rows.iter().all(|r| r.kind != "violation"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_held_call_nobody_approves_is_denied_saying_so_and_its_approval_withdrawn() {
    let app = app().await;
    let runtime = tempfile::tempdir().unwrap();
    let config = app.db.with_file_name("hold.toml");
    std::fs::write(&config, "[hooks.codex]\nhold_ms = 300\n").unwrap();
    let config = config.to_str().unwrap().to_owned();
    let out = hook(
        "codex",
        &app,
        codex("PreToolUse", "git push"),
        &["--config", &config],
        runtime.path(),
    )
    .await;
    assert_eq!(out.status.code(), Some(0));
    let answer: Value = serde_json::from_slice(&out.stdout).unwrap();
    let output = &answer["hookSpecificOutput"];
    assert_eq!(output["permissionDecision"], "deny");
    let reason = output["permissionDecisionReason"].as_str().unwrap();
    assert!(
        reason.contains("a push needs a person") && reason.contains("waits for a person"),
        "{reason}"
    );
    let rows = rows(&app.db);
    assert!(rows.iter().any(|r| r.kind == "approval_withdrawn"));
    assert!(rows.iter().all(|r| r.kind != "approval_approved"));
}

#[tokio::test]
async fn gemini_clis_before_and_after_pair_without_an_id() {
    let app = app().await;
    let runtime = tempfile::tempdir().unwrap();
    let event = |name: &str, command: &str| {
        json!({
            "session_id": "s-gemini", "cwd": "/w", "hook_event_name": name, "timestamp": "t",
            "tool_name": "run_shell_command", "tool_input": {"command": command},
            "tool_response": if name == "AfterTool" { json!({"llmContent": "a b c"}) } else { Value::Null },
        })
    };
    for command in ["ls", "git status"] {
        let out = hook("gemini", &app, event("BeforeTool", command), &[], runtime.path()).await;
        assert_eq!(serde_json::from_slice::<Value>(&out.stdout).unwrap(), json!({}));
    }
    // The after-events come in the other order: each pairs with its own call.
    for command in ["git status", "ls"] {
        let out = hook("gemini", &app, event("AfterTool", command), &[], runtime.path()).await;
        assert_eq!(serde_json::from_slice::<Value>(&out.stdout).unwrap(), json!({}));
    }
    let rows = rows(&app.db);
    let decisions: Vec<_> = rows.iter().filter(|r| r.kind == "decision").collect();
    let executions: Vec<_> = rows.iter().filter(|r| r.kind == "execution").collect();
    assert_eq!((decisions.len(), executions.len()), (2, 2));
    assert_eq!(executions[0].decision_id, decisions[1].decision_id);
    assert_eq!(executions[1].decision_id, decisions[0].decision_id);
    assert!(decisions.iter().all(|d| d.actor_id.as_deref() == Some("gemini-cli")));
    assert!(rows.iter().all(|r| r.kind != "violation"));
    // Nothing is left waiting.
    assert_eq!(std::fs::read_dir(runtime.path().join("toolgate-hooks")).unwrap().count(), 0);
}

#[tokio::test]
async fn an_agent_blocks_in_its_own_form_when_the_sidecar_is_gone() {
    let runtime = tempfile::tempdir().unwrap();
    let gone = |agent: &str, payload: Value| {
        let runtime = runtime.path().to_owned();
        let agent = agent.to_owned();
        move || {
            assert_cmd::Command::cargo_bin("toolgate")
                .unwrap()
                .args(["hook", &agent, "--server", "http://127.0.0.1:1"])
                .env("XDG_RUNTIME_DIR", runtime)
                .write_stdin(payload.to_string())
                .output()
                .unwrap()
        }
    };
    let gemini = json!({"hook_event_name": "BeforeTool", "tool_name": "run_shell_command",
                        "tool_input": {"command": "ls"}});
    let out = gone("gemini", gemini)();
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(serde_json::from_slice::<Value>(&out.stdout).unwrap()["decision"], "deny");
    let copilot = json!({"toolName": "bash", "toolArgs": {"command": "ls"}});
    let out = gone("copilot", copilot)();
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(serde_json::from_slice::<Value>(&out.stdout).unwrap()["permissionDecision"], "deny");
    let out = gone("opencode", json!({"event": "before", "tool": "bash", "args": {}}))();
    assert_eq!(
        (
            out.status.code(),
            serde_json::from_slice::<Value>(&out.stdout).unwrap()["decision"].clone()
        ),
        (Some(2), json!("deny"))
    );
    let out =
        gone("qwen", json!({"hook_event_name": "PreToolUse", "tool_name": "run_shell_command"}))();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("toolgate blocked this call"));
    // Input that is not the agent's hook JSON blocks too.
    let out = gone("codex", json!("not an event"))();
    assert_eq!(out.status.code(), Some(2));
}

#[tokio::test]
async fn qwen_codes_http_hook_is_served_beside_claude_codes() {
    let (app, side) = crate::helpers::spawn_app_with_side_port(|_| {}).await;
    let event = json!({
        "hook_event_name": "PreToolUse", "session_id": "s-qwen", "cwd": "/w",
        "permission_mode": "default", "tool_name": "run_shell_command",
        "tool_input": {"command": "rm -rf /"}, "tool_use_id": "toolu_q1",
    });
    let answer = reqwest::Client::new()
        .post(format!("{side}/hooks/qwen"))
        .header("content-type", "application/json")
        .body(event.to_string())
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    let answer: Value = serde_json::from_str(&answer).unwrap();
    // The default policy: bash runs only with allow_bash, which Qwen Code's default mode gives
    // (it asks its user itself), so the call is decided by the registry and allowed.
    assert_eq!(answer, json!({}));
    let rows = rows(&app.db);
    let decided = rows.iter().find(|r| r.kind == "decision").unwrap();
    assert_eq!(
        (decided.actor_id.as_deref(), decided.tool.as_deref()),
        (Some("qwen-code"), Some("bash"))
    );
    let request: Value = serde_json::from_str(decided.request.as_deref().unwrap()).unwrap();
    assert_eq!(request["plan"]["idempotency_key"], "qwen:toolu_q1");
}

/// A sidecar that takes the connection and never answers is a blocked call, and well before
/// the hook timeout `hook install` writes (the hold and 30 s): an agent whose hook times out
/// runs the call (Codex, Copilot CLI).
#[tokio::test]
async fn a_sidecar_that_never_answers_blocks_the_call_inside_the_hook_timeout() {
    let silent = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", silent.local_addr().unwrap());
    let held = std::thread::spawn(move || {
        // Accepts, reads nothing, answers nothing.
        let _connections: Vec<_> = silent.incoming().take(2).collect();
    });
    let runtime = tempfile::tempdir().unwrap();
    let started = std::time::Instant::now();
    let out = tokio::task::spawn_blocking({
        let runtime = runtime.path().to_owned();
        move || {
            assert_cmd::Command::cargo_bin("toolgate")
                .unwrap()
                .args(["hook", "codex", "--server", &url])
                .env("XDG_RUNTIME_DIR", runtime)
                .write_stdin(codex("PreToolUse", "ls").to_string())
                .output()
                .unwrap()
        }
    })
    .await
    .unwrap();
    let took = started.elapsed();
    assert_eq!(out.status.code(), Some(2), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(String::from_utf8_lossy(&out.stderr).contains("toolgate blocked this call"));
    // The hold (120 s by default) is for a person's approval, not for a silent sidecar.
    assert!(took < Duration::from_secs(30), "blocked only after {took:?}");
    drop(held);
}
