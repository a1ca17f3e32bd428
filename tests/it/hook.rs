//! `toolgate hook claude` against the real server, fed with recorded Claude Code hook payloads
//! (tests/fixtures/claude/) of each event and kind of tool.

use std::path::PathBuf;
use std::process::Output;

use serde_json::Value;

use crate::helpers::{TestApp, rows, spawn_app, spawn_app_with};

/// The default policy, with a `git push` needing a person.
const POLICY: &str = r#"
@id("registered") permit (principal, action, resource) when { context.tool.safety != "unknown" };
@id("unknown") @reason("unknown tool: {tool}")
forbid (principal, action, resource) when { context.tool.safety == "unknown" };
@id("writes-need-allow-write") @reason("tool requires allow_write=true: {tool}")
forbid (principal, action, resource)
when { context.tool.safety == "write" && !context.options.allow_write };
@id("push-needs-a-person") @reason("a push needs a person") @outcome("require_approval")
forbid (principal, action, resource)
when { context.tool.name == "bash" && context.resource.id == "git" };
"#;

async fn app() -> TestApp {
    spawn_app_with(|c| {
        let policy = c.db.with_file_name("hook.cedar");
        std::fs::write(&policy, POLICY).unwrap();
        c.policy = Some(policy);
    })
    .await
}

fn fixture(name: &str) -> String {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/claude").join(name);
    std::fs::read_to_string(path).unwrap()
}

async fn hook(server: &str, payload: String, extra: &[&str]) -> Output {
    let mut args =
        vec!["hook".to_owned(), "claude".to_owned(), "--server".to_owned(), server.to_owned()];
    args.extend(extra.iter().map(|a| (*a).to_owned()));
    tokio::task::spawn_blocking(move || {
        assert_cmd::Command::cargo_bin("toolgate")
            .unwrap()
            .args(&args)
            .write_stdin(payload)
            .output()
            .unwrap()
    })
    .await
    .unwrap()
}

async fn answer(app: &TestApp, name: &str) -> Value {
    answer_with(app, name, &[]).await
}

async fn answer_with(app: &TestApp, name: &str, extra: &[&str]) -> Value {
    let out = hook(&app.url, fixture(name), extra).await;
    assert!(out.status.success(), "{name}: {}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).unwrap()
}

fn decision(answer: &Value) -> (&str, &str) {
    let output = &answer["hookSpecificOutput"];
    assert_eq!(output["hookEventName"], "PreToolUse");
    (
        output["permissionDecision"].as_str().unwrap(),
        output["permissionDecisionReason"].as_str().unwrap(),
    )
}

#[tokio::test]
async fn a_read_is_allowed_and_its_result_paired_by_tool_use_id() {
    let app = app().await;

    let pre = answer(&app, "pre_read.json").await;
    let post = answer(&app, "post_read.json").await;

    // toolgate's allow says nothing: Claude Code's own permission flow decides.
    assert_eq!(pre, serde_json::json!({}));
    assert_eq!(post, serde_json::json!({}));
    let rows = rows(&app.db);
    let decided = rows.iter().find(|r| r.kind == "decision").unwrap();
    assert_eq!(decided.outcome.as_deref(), Some("allow"));
    let executed = rows.iter().find(|r| r.kind == "execution").unwrap();
    assert_eq!(executed.decision_id, decided.decision_id);
    assert!(rows.iter().all(|r| r.kind != "violation"));
    let request: Value = serde_json::from_str(decided.request.as_deref().unwrap()).unwrap();
    assert_eq!(decided.tool.as_deref(), Some("read"));
    assert_eq!(decided.actor_id.as_deref(), Some("claude-code"));
    assert_eq!(decided.resource_id.as_deref(), Some("/home/dev/app/src/main.rs"));
    assert_eq!(request["plan"]["idempotency_key"], "claude:toolu_01ReadMainRs");
    assert_eq!(request["context"]["permission_mode"], "default");
}

#[tokio::test]
async fn edits_follow_the_permission_mode() {
    let app = app().await;

    let accept_edits = answer(&app, "pre_edit.json").await;
    let plan = answer(&app, "pre_edit_plan.json").await;

    assert_eq!(accept_edits, serde_json::json!({}));
    assert_eq!(
        decision(&plan),
        (
            "deny",
            "toolgate: tool requires allow_write=true: write (policies: writes-need-allow-write)"
        )
    );
}

#[tokio::test]
async fn bash_runs_and_an_unregistered_mcp_tool_is_denied() {
    let app = app().await;

    let bash = answer(&app, "pre_bash.json").await;
    let ran = answer(&app, "post_bash.json").await;
    let mcp = answer(&app, "pre_mcp.json").await;

    assert_eq!(bash, serde_json::json!({}));
    assert_eq!(ran, serde_json::json!({}));
    assert_eq!(
        decision(&mcp),
        ("deny", "toolgate: unknown tool: mcp__github__create_issue (policies: unknown)")
    );
}

#[tokio::test]
async fn an_approval_asked_in_claude_code_is_recorded_before_the_run() {
    let app = app().await;

    let pre = answer(&app, "pre_bash_push.json").await;
    let post = answer(&app, "post_bash_push.json").await;

    assert_eq!(
        decision(&pre),
        ("ask", "toolgate: a push needs a person (policies: push-needs-a-person)")
    );
    assert_eq!(post, serde_json::json!({}), "the run is paired with an approved decision");
    let kinds: Vec<_> =
        rows(&app.db).into_iter().map(|r| r.kind).filter(|k| k != "policy_loaded").collect();
    assert_eq!(kinds, ["decision", "approval_requested", "approval_approved", "execution"]);
}

#[tokio::test]
async fn a_dangerous_command_still_meets_claude_codes_own_prompt() {
    // The default policy allows a registered bash tool; before, the hook answered `allow`
    // here, and Claude Code ran `rm -rf /` in its default mode without asking.
    let app = spawn_app().await;

    let default_mode = answer(&app, "pre_bash_rm_default.json").await;

    assert_eq!(default_mode, serde_json::json!({}), "no permissionDecision: Claude Code asks");
    let decided = rows(&app.db).into_iter().find(|r| r.kind == "decision").unwrap();
    assert_eq!(decided.outcome.as_deref(), Some("allow"));
}

#[tokio::test]
async fn with_allow_skips_prompt_only_what_claude_code_runs_unasked_is_allowed() {
    let app = spawn_app().await;
    let config = app.db.with_file_name("hook.toml");
    std::fs::write(&config, "[hooks.claude]\nallow_skips_prompt = true\n").unwrap();
    let config = ["--config", config.to_str().unwrap()];

    let read = answer_with(&app, "pre_read.json", &config).await;
    let rm_default = answer_with(&app, "pre_bash_rm_default.json", &config).await;
    let rm_bypass = answer_with(&app, "pre_bash_rm_bypass.json", &config).await;
    let edit_accept = answer_with(&app, "pre_edit.json", &config).await;

    assert_eq!(decision(&read).0, "allow", "a read skips the prompt");
    assert_eq!(
        decision(&rm_default),
        (
            "deny",
            "toolgate: tool requires allow_bash=true: bash \
             (policies: default.bash_requires_allow_bash)"
        ),
        "in the default mode Claude Code would ask, so toolgate may not allow"
    );
    assert_eq!(decision(&rm_bypass).0, "allow", "bypassPermissions runs commands unasked");
    assert_eq!(decision(&edit_accept).0, "allow", "acceptEdits runs edits unasked");
}

#[tokio::test]
async fn a_failed_run_is_reported_with_its_error_and_duration() {
    let app = app().await;

    let pre = answer(&app, "pre_bash.json").await;
    let failed = answer(&app, "post_bash_failure.json").await;

    assert_eq!(pre, serde_json::json!({}));
    assert_eq!(failed, serde_json::json!({}), "paired with its decision, no violation");
    let conn = rusqlite::Connection::open(&app.db).unwrap();
    let (status, error, duration): (String, String, i64) = conn
        .query_row(
            "SELECT status, error, duration_us FROM events WHERE kind = 'execution'",
            [],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
        )
        .unwrap();
    assert_eq!(status, "error");
    assert!(error.starts_with("Exit code 101"), "{error}");
    assert_eq!(duration, 5_123_000);
}

#[tokio::test]
async fn other_events_pass_untouched() {
    let app = app().await;

    let answer = answer(&app, "user_prompt.json").await;

    assert_eq!(answer, serde_json::json!({}));
    assert!(rows(&app.db).iter().all(|r| r.kind == "policy_loaded"));
}

#[tokio::test]
async fn an_unreachable_sidecar_blocks_the_call_unless_fail_open() {
    // A port nothing listens on: bound, then closed.
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let server = format!("http://127.0.0.1:{port}");

    let blocked = hook(&server, fixture("pre_bash.json"), &[]).await;
    let open = hook(&server, fixture("pre_bash.json"), &["--fail-open"]).await;

    assert_eq!(blocked.status.code(), Some(2));
    let stderr = String::from_utf8(blocked.stderr).unwrap();
    assert!(stderr.contains("toolgate blocked this call: cannot reach the sidecar"), "{stderr}");
    assert_eq!(open.status.code(), Some(0));
    assert_eq!(String::from_utf8(open.stdout).unwrap().trim(), "{}");
}

/// Runs the hook with the token in `TOOLGATE_TOKEN`.
async fn answer_as(app: &TestApp, name: &str, token: &str) -> Value {
    let (server, payload, token) = (app.url.clone(), fixture(name), token.to_owned());
    let out = tokio::task::spawn_blocking(move || {
        assert_cmd::Command::cargo_bin("toolgate")
            .unwrap()
            .args(["hook", "claude", "--server", &server])
            .env("TOOLGATE_TOKEN", token)
            .write_stdin(payload)
            .output()
            .unwrap()
    })
    .await
    .unwrap();
    assert!(out.status.success(), "{name}: {}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).unwrap()
}

/// With auth on, the hook's own agent token (no approver role) reports a run that Claude Code's
/// prompt let through: before, PostToolUse failed on the approval step and the run was never
/// recorded.
#[tokio::test]
async fn with_auth_on_a_run_allowed_in_claude_codes_prompt_is_recorded_with_who_allowed_it() {
    let app = spawn_app_with(|c| {
        let policy = c.db.with_file_name("hook.cedar");
        std::fs::write(&policy, POLICY).unwrap();
        c.policy = Some(policy);
        let mut hook =
            crate::helpers::token("claude-hook", "hook-secret", r#"["agent"]"#, &["claude-code"]);
        hook.harness_approvals = true;
        let plain =
            crate::helpers::token("plain-agent", "plain-secret", r#"["agent"]"#, &["claude-code"]);
        c.auth.tokens = vec![hook, plain];
    })
    .await;

    let pre = answer_as(&app, "pre_bash_push.json", "hook-secret").await;
    let post = answer_as(&app, "post_bash_push.json", "hook-secret").await;

    assert_eq!(decision(&pre).0, "ask");
    assert_eq!(post, serde_json::json!({}), "the run is paired with an approved decision");
    let events: Vec<_> = rows(&app.db).into_iter().filter(|r| r.kind != "policy_loaded").collect();
    let kinds: Vec<_> = events.iter().map(|r| r.kind.as_str()).collect();
    assert_eq!(kinds, ["decision", "approval_requested", "approval_approved", "execution"]);
    let approved = &events[2];
    assert_eq!(approved.actor_id.as_deref(), Some("claude-code:user"));
    let reason = approved.reason.as_deref().unwrap_or_default();
    assert!(
        reason.contains("harness's own permission prompt") && reason.contains("claude-hook"),
        "{reason}"
    );
}

/// A token that may not report harness approvals still gets its run recorded, as a run
/// without an approval.
#[tokio::test]
async fn a_token_without_harness_approvals_cannot_approve_but_its_run_is_recorded() {
    let app = spawn_app_with(|c| {
        let policy = c.db.with_file_name("hook.cedar");
        std::fs::write(&policy, POLICY).unwrap();
        c.policy = Some(policy);
        c.auth.tokens = vec![crate::helpers::token(
            "plain-agent",
            "plain-secret",
            r#"["agent"]"#,
            &["claude-code"],
        )];
    })
    .await;

    answer_as(&app, "pre_bash_push.json", "plain-secret").await;
    let post = answer_as(&app, "post_bash_push.json", "plain-secret").await;

    assert_eq!(post["decision"], "block", "{post}");
    let kinds: Vec<_> =
        rows(&app.db).into_iter().map(|r| r.kind).filter(|k| k != "policy_loaded").collect();
    assert_eq!(kinds, ["decision", "approval_requested", "execution", "violation"]);
}
