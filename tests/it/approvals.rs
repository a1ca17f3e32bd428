//! Approvals end to end: a policy asks for approval, a person approves, rejects or lets it
//! expire, and the agent waits for the verdict and executes exactly the approved call once.

use std::time::{Duration, Instant};

use tonic::Code;
use toolgate::config::{Config, TimeoutVerdict};
use toolgate::proto::approvals_client::ApprovalsClient;
use toolgate::proto::{
    Approval, ApprovalState, AwaitRequest, DecideResponse, ExecuteRequest, ExecutionStatus,
    ListPendingRequest, Outcome, VerdictRequest, WithdrawRequest,
};

use crate::helpers::{TestApp, request, rows, start, toolgate_async};

/// Deploys need approval; one of them needs it from a lead.
const POLICY: &str = r#"
@id("permit-all")
permit (principal, action, resource);

@id("deploys-need-approval")
@reason("deploys need a human: {tool}")
@outcome("require_approval")
forbid (principal, action == Action::"release.deploy", resource);

@id("prod-needs-a-lead")
@reason("a deploy to prod needs a lead's approval")
forbid (principal, action == Action::"release.deploy", resource)
when {
  context.approval.state == "approved" && context.resource.id == "prod" &&
  !context.approval.approver_roles.contains("lead")
};
"#;

/// Deploys need approval ([`POLICY`]), `deploy` is a registered tool, carol is a lead.
pub fn deploys_need_approval(config: &mut Config) {
    let policy = config.db.with_file_name("approvals.cedar");
    std::fs::write(&policy, POLICY).unwrap();
    config.policy = Some(policy);
    config.tools =
        toml::from_str("[deploy]\nsafety = \"read_only\"\naction = \"release.deploy\"\n").unwrap();
    config.actors = toml::from_str("[carol]\nroles = [\"lead\"]\n").unwrap();
}

fn config(dir: &tempfile::TempDir, configure: impl FnOnce(&mut Config)) -> Config {
    let mut config = Config { db: dir.path().join("trail.db"), ..Config::default() };
    deploys_need_approval(&mut config);
    configure(&mut config);
    config
}

async fn app_with(
    configure: impl FnOnce(&mut Config),
) -> (TestApp, ApprovalsClient<tonic::transport::Channel>) {
    let dir = tempfile::tempdir().unwrap();
    let app = start(config(&dir, configure), dir).await;
    let approvals = ApprovalsClient::new(app.channel.clone());
    (app, approvals)
}

async fn app() -> (TestApp, ApprovalsClient<tonic::transport::Channel>) {
    app_with(|_| {}).await
}

async fn deploy(app: &mut TestApp, env: &str) -> DecideResponse {
    let mut req = request("deploy");
    req.args_json = format!(r#"{{"env":"{env}"}}"#);
    req.resource = Some(toolgate::proto::Resource { id: env.into(), ..Default::default() });
    let answer = app.decide(req).await;
    assert_eq!(answer.outcome(), Outcome::RequireApproval, "{}", answer.reason);
    answer
}

async fn execute(app: &mut TestApp, decision: &DecideResponse, env: &str) -> String {
    let report = ExecuteRequest {
        decision_id: decision.decision_id.clone(),
        args_json: format!(r#"{{"env":"{env}"}}"#),
        duration_us: 1_500,
        status: ExecutionStatus::Ok as i32,
        ..Default::default()
    };
    app.client.execute(report).await.unwrap().into_inner().violation
}

fn verdict(decision: &DecideResponse, approver: &str, comment: &str) -> VerdictRequest {
    VerdictRequest {
        decision_id: decision.decision_id.clone(),
        approver: approver.into(),
        comment: comment.into(),
    }
}

async fn wait(
    approvals: &mut ApprovalsClient<tonic::transport::Channel>,
    decision: &DecideResponse,
    timeout_ms: u32,
) -> Approval {
    let req = AwaitRequest { decision_id: decision.decision_id.clone(), timeout_ms };
    approvals.r#await(req).await.unwrap().into_inner()
}

#[tokio::test]
async fn an_approved_call_executes_once_with_its_own_arguments() {
    let (mut app, mut approvals) = app().await;
    let decision = deploy(&mut app, "staging").await;

    let pending = approvals.list_pending(ListPendingRequest::default()).await.unwrap();
    let pending = pending.into_inner().approvals;
    let approved = approvals.approve(verdict(&decision, "bob", "looks fine")).await.unwrap();
    let first = execute(&mut app, &decision, "staging").await;
    let retried = execute(&mut app, &decision, "staging").await;
    let second = app.client.execute(ExecuteRequest {
        decision_id: decision.decision_id.clone(),
        args_json: r#"{"env":"staging"}"#.into(),
        status: ExecutionStatus::Error as i32,
        error: "ran again".into(),
        ..Default::default()
    });

    assert_eq!(pending.len(), 1);
    let shown = &pending[0];
    assert_eq!(shown.decision_id, decision.decision_id);
    assert_eq!(shown.state(), ApprovalState::Pending);
    assert_eq!((shown.actor_id.as_str(), shown.tool.as_str()), ("alice", "deploy"));
    assert_eq!(shown.action, "release.deploy");
    assert_eq!(shown.args_hash, decision.args_hash);
    assert_eq!(shown.reason, "deploys need a human: deploy");
    assert_eq!(shown.policy_ids, ["deploys-need-approval"]);
    assert_eq!(shown.args_json, "", "arguments are shown only when configured");
    let approved = approved.into_inner();
    assert_eq!(approved.state(), ApprovalState::Approved);
    assert_eq!(approved.verdict_outcome(), Outcome::Allow);
    assert_eq!((approved.approver.as_str(), approved.comment.as_str()), ("bob", "looks fine"));
    assert_eq!(first, "");
    assert_eq!(retried, "", "an exact retry is answered as the first");
    let second = second.await.unwrap().into_inner().violation;
    assert_eq!(second, "the decision was already executed");
}

#[tokio::test]
async fn an_approved_call_with_other_arguments_is_a_violation() {
    let (mut app, mut approvals) = app().await;
    let decision = deploy(&mut app, "staging").await;

    approvals.approve(verdict(&decision, "bob", "")).await.unwrap();
    let violation = execute(&mut app, &decision, "prod").await;

    assert!(violation.starts_with("the arguments' hash differs"), "{violation}");
}

#[tokio::test]
async fn a_rejected_call_may_not_run_and_the_agent_learns_why() {
    let (mut app, mut approvals) = app().await;
    let decision = deploy(&mut app, "staging").await;

    approvals.reject(verdict(&decision, "bob", "not on a Friday")).await.unwrap();
    let told = wait(&mut approvals, &decision, 1_000).await;
    let violation = execute(&mut app, &decision, "staging").await;
    let again = approvals.approve(verdict(&decision, "carol", "")).await.unwrap_err();

    assert_eq!(told.state(), ApprovalState::Rejected);
    assert_eq!(told.verdict_outcome(), Outcome::Deny);
    assert_eq!(told.comment, "not on a Friday");
    assert_eq!(violation, "the call required approval and has none: approval_rejected");
    assert_eq!(again.code(), Code::FailedPrecondition);
}

#[tokio::test]
async fn an_approver_cannot_approve_their_own_call() {
    let (mut app, mut approvals) = app().await;
    let mut req = request("deploy");
    req.actor.as_mut().unwrap().delegation_chain = vec!["dave".into()];
    let decision = app.decide(req).await;

    let own = approvals.approve(verdict(&decision, "alice", "")).await.unwrap_err();
    let delegator = approvals.approve(verdict(&decision, "dave", "")).await.unwrap_err();
    let pending = approvals.list_pending(ListPendingRequest::default()).await.unwrap();

    assert_eq!(own.code(), Code::PermissionDenied);
    assert!(own.message().contains("own call"), "{}", own.message());
    assert_eq!(delegator.code(), Code::PermissionDenied);
    assert_eq!(pending.into_inner().approvals.len(), 1, "still pending");
}

#[tokio::test]
async fn a_policy_can_require_the_approver_to_hold_a_role() {
    let (mut app, mut approvals) = app().await;
    let decision = deploy(&mut app, "prod").await;

    let by_bob = approvals.approve(verdict(&decision, "bob", "")).await.unwrap_err();
    let by_carol = approvals.approve(verdict(&decision, "carol", "")).await.unwrap();

    assert_eq!(by_bob.code(), Code::FailedPrecondition);
    assert!(by_bob.message().contains("a deploy to prod needs a lead's approval"));
    assert!(by_bob.message().contains("prod-needs-a-lead"));
    assert_eq!(by_carol.into_inner().state(), ApprovalState::Approved);
    assert_eq!(execute(&mut app, &decision, "prod").await, "");
}

#[tokio::test]
async fn an_unanswered_approval_expires_as_denied_by_default() {
    let (mut app, mut approvals) = app_with(|c| c.approvals.ttl_seconds = 1).await;
    let decision = deploy(&mut app, "staging").await;

    let told = wait(&mut approvals, &decision, 10_000).await;
    let violation = execute(&mut app, &decision, "staging").await;

    assert_eq!(told.state(), ApprovalState::Expired);
    assert_eq!(told.verdict_outcome(), Outcome::Deny);
    assert!(told.comment.contains("no verdict within 1 s"), "{}", told.comment);
    assert_eq!(told.approver, "");
    assert_eq!(violation, "the call required approval and has none: approval_expired");
}

#[tokio::test]
async fn an_expiry_can_be_configured_to_allow() {
    let (mut app, mut approvals) = app_with(|c| {
        c.approvals.ttl_seconds = 1;
        c.approvals.on_timeout = TimeoutVerdict::Allow;
    })
    .await;
    let decision = deploy(&mut app, "staging").await;

    let told = wait(&mut approvals, &decision, 10_000).await;
    let violation = execute(&mut app, &decision, "staging").await;

    assert_eq!(told.state(), ApprovalState::Expired);
    assert_eq!(told.verdict_outcome(), Outcome::Allow);
    assert_eq!(violation, "");
}

#[tokio::test]
async fn await_returns_as_soon_as_the_verdict_is_given_and_times_out_cleanly() {
    let (mut app, mut approvals) = app().await;
    let decision = deploy(&mut app, "staging").await;

    let timed_out = wait(&mut approvals, &decision, 200).await;
    let mut waiter = approvals.clone();
    let awaited = decision.clone();
    let started = Instant::now();
    let waiting = tokio::spawn(async move { wait(&mut waiter, &awaited, 60_000).await });
    tokio::time::sleep(Duration::from_millis(300)).await;
    approvals.approve(verdict(&decision, "bob", "")).await.unwrap();
    let approved = waiting.await.unwrap();

    assert_eq!(timed_out.state(), ApprovalState::Pending);
    assert_eq!(approved.state(), ApprovalState::Approved);
    assert!(started.elapsed() < Duration::from_secs(30), "the wait ended with the verdict");
}

#[tokio::test]
async fn await_on_a_call_that_needed_no_approval_says_so() {
    let (mut app, mut approvals) = app().await;
    let read = app.decide(request("read")).await;

    let not_required = approvals
        .r#await(AwaitRequest { decision_id: read.decision_id.clone(), timeout_ms: 10 })
        .await
        .unwrap_err();
    let unknown = approvals
        .r#await(AwaitRequest { decision_id: "no-such-decision".into(), timeout_ms: 10 })
        .await
        .unwrap_err();
    let missing = approvals.approve(VerdictRequest::default()).await.unwrap_err();

    assert_eq!(not_required.code(), Code::FailedPrecondition);
    assert!(not_required.message().contains("its outcome is allow"));
    assert_eq!(unknown.code(), Code::NotFound);
    assert_eq!(missing.code(), Code::InvalidArgument);
    assert!(missing.message().contains("decision_id"), "{}", missing.message());
}

#[tokio::test]
async fn pending_approvals_survive_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    let config = config(&dir, |c| c.approvals.show_args = true);
    let mut app = start(config.clone(), dir).await;
    let decision = deploy(&mut app, "staging").await;
    let mut approvals = ApprovalsClient::new(app.channel.clone());
    let before = approvals.list_pending(ListPendingRequest::default()).await.unwrap();
    drop(approvals);
    let (dir, _) = app.stop().await;

    let mut app = start(config, dir).await;
    let mut approvals = ApprovalsClient::new(app.channel.clone());
    let after = approvals.list_pending(ListPendingRequest::default()).await.unwrap();
    approvals.approve(verdict(&decision, "bob", "")).await.unwrap();
    let violation = execute(&mut app, &decision, "staging").await;

    let (before, after) = (before.into_inner().approvals, after.into_inner().approvals);
    assert_eq!(before[0].args_json, r#"{"env":"staging"}"#);
    assert_eq!(after.len(), 1);
    assert_eq!(after[0].decision_id, decision.decision_id);
    assert_eq!(after[0].expires_at, before[0].expires_at);
    assert_eq!(after[0].args_json, "", "arguments are never on the trail");
    assert_eq!(violation, "");
}

#[tokio::test]
async fn every_step_is_on_the_trail_in_order() {
    let (mut app, mut approvals) = app().await;
    let decision = deploy(&mut app, "staging").await;
    approvals.approve(verdict(&decision, "bob", "ok")).await.unwrap();
    execute(&mut app, &decision, "staging").await;
    let rejected = deploy(&mut app, "qa").await;
    approvals.reject(verdict(&rejected, "bob", "no")).await.unwrap();

    let db = app.db.clone();
    let kinds: Vec<_> = rows(&db)
        .into_iter()
        .filter(|r| r.kind != "policy_loaded")
        .map(|r| (r.kind, r.outcome, r.reason))
        .collect();
    let conn = rusqlite::Connection::open(&db).unwrap();
    let (approver, duration): (String, i64) = conn
        .query_row(
            "SELECT (SELECT actor_id FROM events WHERE kind = 'approval_approved'),
                    (SELECT duration_us FROM events WHERE kind = 'execution')",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();

    let step = |kind: &str, outcome: &str, reason: &str| {
        (kind.to_owned(), Some(outcome.to_owned()), Some(reason.to_owned()))
    };
    assert_eq!(
        kinds,
        [
            step("decision", "require_approval", "deploys need a human: deploy"),
            step("approval_requested", "require_approval", "deploys need a human: deploy"),
            step("approval_approved", "allow", "ok"),
            (String::from("execution"), None, None),
            step("decision", "require_approval", "deploys need a human: deploy"),
            step("approval_requested", "require_approval", "deploys need a human: deploy"),
            step("approval_rejected", "deny", "no"),
        ]
    );
    assert_eq!(approver, "bob");
    assert_eq!(duration, 1_500, "the tool's own run time, not the wait");
    assert_eq!(crate::helpers::verify(&db).0, 0);
}

#[tokio::test]
async fn the_command_line_lists_and_approves() {
    let (mut app, _) = app().await;
    let decision = deploy(&mut app, "staging").await;
    let url = app.url.clone();

    let listed = toolgate_async(&["approvals", "list", "--server", &url]).await;
    let approved = toolgate_async(&[
        "approvals",
        "approve",
        &decision.decision_id,
        "--as",
        "bob",
        "--comment",
        "fine",
        "--server",
        &url,
    ])
    .await;
    let again = toolgate_async(&[
        "approvals",
        "reject",
        &decision.decision_id,
        "--as",
        "bob",
        "--server",
        &url,
    ])
    .await;

    let listed = String::from_utf8(listed.stdout).unwrap();
    assert!(listed.contains(&decision.decision_id), "{listed}");
    assert!(listed.contains("PENDING"), "{listed}");
    assert!(approved.status.success());
    let approved = String::from_utf8(approved.stdout).unwrap();
    assert!(approved.contains("APPROVED") && approved.contains("by bob"), "{approved}");
    assert!(!again.status.success(), "a settled approval takes no second verdict");
    assert_eq!(execute(&mut app, &decision, "staging").await, "");

    // An agent withdraws another; what it wrote reaches the terminal without its escapes.
    let other = deploy(&mut app, "prod").await;
    let hostile = "gave up\x1b[2J\r\nAPPROVED by root";
    let args = ["approvals", "withdraw", &other.decision_id, "--reason", hostile, "--server", &url];
    let withdrawn = toolgate_async(&args).await;
    assert!(withdrawn.status.success(), "{}", String::from_utf8_lossy(&withdrawn.stderr));
    let withdrawn = String::from_utf8(withdrawn.stdout).unwrap();
    assert!(withdrawn.contains("WITHDRAWN"), "{withdrawn}");
    assert!(withdrawn.contains("by the agent at"), "{withdrawn}");
    assert!(
        withdrawn.contains("gave up<U+001B>[2J<U+000D><U+000A>APPROVED by root"),
        "{withdrawn}"
    );
    assert!(!withdrawn.contains('\x1b'), "no escape reaches the terminal");
}

#[tokio::test]
async fn an_agent_that_stops_waiting_withdraws_its_approval_and_no_verdict_follows() {
    let (mut app, mut approvals) = app().await;
    let decision = deploy(&mut app, "staging").await;
    let withdraw = |reason: &str| WithdrawRequest {
        decision_id: decision.decision_id.clone(),
        reason: reason.into(),
    };

    let withdrawn = approvals.withdraw(withdraw("gave up after 1 s")).await.unwrap().into_inner();
    let again = approvals.withdraw(withdraw("")).await.unwrap_err();
    let late = approvals.approve(verdict(&decision, "bob", "ok")).await.unwrap_err();
    let told = wait(&mut approvals, &decision, 1_000).await;
    let violation = execute(&mut app, &decision, "staging").await;
    let pending = approvals.list_pending(ListPendingRequest::default()).await.unwrap();

    assert_eq!(withdrawn.state(), ApprovalState::Withdrawn);
    assert_eq!(withdrawn.verdict_outcome(), Outcome::Deny);
    assert_eq!(
        (withdrawn.approver.as_str(), withdrawn.comment.as_str()),
        ("", "gave up after 1 s")
    );
    assert_eq!(again.code(), Code::FailedPrecondition);
    assert_eq!(late.code(), Code::FailedPrecondition, "no verdict after a withdrawal");
    assert_eq!(told.state(), ApprovalState::Withdrawn, "Await reads it back from the trail");
    assert_eq!(violation, "the call required approval and has none: approval_withdrawn");
    assert!(pending.into_inner().approvals.is_empty());
    let rows = rows(&app.db);
    let event = rows.iter().find(|r| r.kind == "approval_withdrawn").unwrap();
    assert_eq!(event.actor_id.as_deref(), Some("alice"), "the call's own actor withdrew it");
    assert_eq!(event.decision_id.as_deref(), Some(decision.decision_id.as_str()));
}

#[tokio::test]
async fn a_verdict_given_first_cannot_be_withdrawn() {
    let (mut app, mut approvals) = app().await;
    let decision = deploy(&mut app, "staging").await;
    approvals.approve(verdict(&decision, "bob", "")).await.unwrap();

    let refused = approvals
        .withdraw(WithdrawRequest {
            decision_id: decision.decision_id.clone(),
            reason: String::new(),
        })
        .await
        .unwrap_err();
    let blank = approvals.withdraw(WithdrawRequest::default()).await.unwrap_err();

    assert_eq!(refused.code(), Code::FailedPrecondition);
    assert_eq!(blank.code(), Code::InvalidArgument);
    assert!(blank.message().contains("decision_id"), "{}", blank.message());
    assert_eq!(execute(&mut app, &decision, "staging").await, "", "the approval stands");
}
