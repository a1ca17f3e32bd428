//! Access control: every RPC under every role, identities bound to tokens, refusals recorded
//! (rate-limited) and never a token on the trail or in the log.

use std::time::Duration;

use tonic::metadata::MetadataValue;
use tonic::transport::Channel;
use tonic::{Code, Request};
use toolgate::auth::token_digest;
use toolgate::config::AuthConfig;
use toolgate::config::Config;
use toolgate::proto::admin_client::AdminClient;
use toolgate::proto::approvals_client::ApprovalsClient;
use toolgate::proto::audit_client::AuditClient;
use toolgate::proto::gate_client::GateClient;
use toolgate::proto::{
    Actor, AwaitRequest, CheckpointRequest, ConsistencyProofRequest, DefineToolsRequest,
    ExecuteRequest, ExecutionStatus, ExportRequest, HeadRequest, InclusionProofRequest,
    ListPendingRequest, QueryRequest, RecordRefusalRequest, ReloadPolicyRequest, StatsRequest,
    TlogProofRequest, VerdictRequest, VerifyRequest, WithdrawRequest,
};

use crate::helpers::{TestApp, request, rows, spawn_app_with, token};

const AGENT: &str = "agent-secret-1f0c";
const APPROVER: &str = "approver-secret-77aa";
const AUDITOR: &str = "auditor-secret-93be";
const ADMIN: &str = "admin-secret-c410";
const GATEWAY: &str = "gateway-secret-5d1e";

fn auth(config: &mut Config) {
    config.auth = AuthConfig {
        tokens: vec![
            token("agents-of-team-a", AGENT, r#"["agent"]"#, &["team-a/*"]),
            token("carol", APPROVER, r#"["approver"]"#, &["carol"]),
            token("audit", AUDITOR, r#"["auditor"]"#, &[]),
            token("ops", ADMIN, r#"["admin"]"#, &[]),
            token("mcp-gateway", GATEWAY, r#"["gateway"]"#, &["*"]),
        ],
        ..AuthConfig::default()
    };
    config.policy = Some(config.db.with_file_name("p.cedar"));
    std::fs::write(
        config.policy.as_ref().unwrap(),
        "permit(principal, action, resource);\n\
         @outcome(\"require_approval\") forbid(principal, action, resource) when { context.tool.name == \"deploy\" };",
    )
    .unwrap();
}

fn with_token<T>(message: T, secret: Option<&str>) -> Request<T> {
    let mut request = Request::new(message);
    if let Some(secret) = secret {
        let value: MetadataValue<_> = format!("Bearer {secret}").parse().unwrap();
        request.metadata_mut().insert("authorization", value);
    }
    request
}

fn as_actor(id: &str, chain: &[&str]) -> toolgate::proto::DecideRequest {
    let mut req = request("read");
    req.actor = Some(Actor {
        id: id.into(),
        kind: if chain.is_empty() { "agent" } else { "subagent" }.into(),
        delegation_chain: chain.iter().map(|a| (*a).to_owned()).collect(),
    });
    req
}

/// Calls one RPC with a token; the gRPC code it ends with (`Ok` when answered).
async fn call(channel: &Channel, rpc: &str, secret: Option<&str>) -> Code {
    let code = |r: Result<(), tonic::Status>| r.err().map_or(Code::Ok, |s| s.code());
    let (gate, approvals, audit, admin) = (
        GateClient::new(channel.clone()),
        ApprovalsClient::new(channel.clone()),
        AuditClient::new(channel.clone()),
        AdminClient::new(channel.clone()),
    );
    let verdict =
        VerdictRequest { decision_id: "d".into(), approver: "carol".into(), ..Default::default() };
    match rpc {
        "Decide" => code(
            gate.clone().decide(with_token(as_actor("team-a/bot", &[]), secret)).await.map(drop),
        ),
        "Execute" => {
            let report = ExecuteRequest {
                decision_id: "d".into(),
                status: ExecutionStatus::Ok as i32,
                ..Default::default()
            };
            code(gate.clone().execute(with_token(report, secret)).await.map(drop))
        }
        "DefineTools" => {
            let define = DefineToolsRequest {
                actor: Some(Actor { id: "team-a/bot".into(), ..Default::default() }),
                ..Default::default()
            };
            code(gate.clone().define_tools(with_token(define, secret)).await.map(drop))
        }
        "RecordRefusal" => {
            let refusal = RecordRefusalRequest {
                actor: Some(Actor { id: "team-a/bot".into(), ..Default::default() }),
                peer: "mcp_server".into(),
                reason: "a test".into(),
                ..Default::default()
            };
            code(gate.clone().record_refusal(with_token(refusal, secret)).await.map(drop))
        }
        "ListPending" => code(
            approvals
                .clone()
                .list_pending(with_token(ListPendingRequest::default(), secret))
                .await
                .map(drop),
        ),
        "Approve" => code(approvals.clone().approve(with_token(verdict, secret)).await.map(drop)),
        "Reject" => code(approvals.clone().reject(with_token(verdict, secret)).await.map(drop)),
        "Await" => code(
            approvals
                .clone()
                .r#await(with_token(
                    AwaitRequest { decision_id: "d".into(), timeout_ms: 1 },
                    secret,
                ))
                .await
                .map(drop),
        ),
        "Withdraw" => {
            let withdraw = WithdrawRequest { decision_id: "d".into(), ..Default::default() };
            code(approvals.clone().withdraw(with_token(withdraw, secret)).await.map(drop))
        }
        "Query" => {
            code(audit.clone().query(with_token(QueryRequest::default(), secret)).await.map(drop))
        }
        "ExportCsv" => code(
            audit.clone().export_csv(with_token(ExportRequest::default(), secret)).await.map(drop),
        ),
        "Verify" => {
            code(audit.clone().verify(with_token(VerifyRequest::default(), secret)).await.map(drop))
        }
        "Head" => {
            code(audit.clone().head(with_token(HeadRequest::default(), secret)).await.map(drop))
        }
        "Stats" => {
            code(audit.clone().stats(with_token(StatsRequest::default(), secret)).await.map(drop))
        }
        "Checkpoint" => code(
            audit
                .clone()
                .checkpoint(with_token(CheckpointRequest::default(), secret))
                .await
                .map(drop),
        ),
        "InclusionProof" => code(
            audit
                .clone()
                .inclusion_proof(with_token(InclusionProofRequest { seq: 1, tree_size: 0 }, secret))
                .await
                .map(drop),
        ),
        "TlogProof" => code(
            audit
                .clone()
                .tlog_proof(with_token(TlogProofRequest { seq: 1, tree_size: 0 }, secret))
                .await
                .map(drop),
        ),
        "ConsistencyProof" => code(
            audit
                .clone()
                .consistency_proof(with_token(
                    ConsistencyProofRequest { old_size: 1, new_size: 0 },
                    secret,
                ))
                .await
                .map(drop),
        ),
        "ReloadPolicy" => code(
            admin
                .clone()
                .reload_policy(with_token(ReloadPolicyRequest::default(), secret))
                .await
                .map(drop),
        ),
        other => panic!("no RPC {other}"),
    }
}

/// Whether `secret` is anywhere in the bytes of the trail `db` or its write-ahead log.
fn on_trail(db: &std::path::Path, secret: &str) -> bool {
    let wal = std::fs::read(db.with_extension("db-wal")).unwrap_or_default();
    [std::fs::read(db).unwrap(), wal]
        .iter()
        .any(|bytes| bytes.windows(secret.len()).any(|w| w == secret.as_bytes()))
}

#[tokio::test]
async fn every_rpc_admits_exactly_its_roles() {
    let app = spawn_app_with(auth).await;
    // RPC, and the tokens it admits.
    let matrix: [(&str, &[&str]); 19] = [
        ("Decide", &[AGENT]),
        ("Execute", &[AGENT]),
        ("DefineTools", &[GATEWAY]),
        ("RecordRefusal", &[GATEWAY]),
        ("ListPending", &[AGENT, APPROVER, AUDITOR]),
        ("Approve", &[APPROVER]),
        ("Reject", &[APPROVER]),
        ("Await", &[AGENT, APPROVER, AUDITOR]),
        ("Withdraw", &[AGENT]),
        ("Query", &[AUDITOR]),
        ("ExportCsv", &[AUDITOR]),
        ("Verify", &[AUDITOR]),
        ("Head", &[AUDITOR]),
        ("Stats", &[AUDITOR]),
        ("Checkpoint", &[AUDITOR]),
        ("InclusionProof", &[AUDITOR]),
        ("TlogProof", &[AUDITOR]),
        ("ConsistencyProof", &[AUDITOR]),
        ("ReloadPolicy", &[ADMIN]),
    ];
    let mut wrong = Vec::new();
    for (rpc, admitted) in matrix {
        for secret in [AGENT, APPROVER, AUDITOR, ADMIN, GATEWAY] {
            let code = call(&app.channel, rpc, Some(secret)).await;
            let refused = matches!(code, Code::PermissionDenied | Code::Unauthenticated);
            if admitted.contains(&secret) == refused || (refused && code != Code::PermissionDenied)
            {
                wrong.push(format!("{rpc} with {secret}: {code:?}"));
            }
        }
        for secret in [None, Some("not-a-token")] {
            let code = call(&app.channel, rpc, secret).await;
            if code != Code::Unauthenticated {
                wrong.push(format!("{rpc} with {secret:?}: {code:?}"));
            }
        }
    }
    assert!(wrong.is_empty(), "{wrong:#?}");
}

#[tokio::test]
async fn refusals_are_recorded_without_the_token_and_a_flood_is_folded() {
    let app = spawn_app_with(auth).await;

    for _ in 0..50 {
        call(&app.channel, "Query", Some("not-a-token")).await;
    }
    call(&app.channel, "Query", Some(AGENT)).await;
    tokio::time::sleep(Duration::from_millis(1100)).await;
    call(&app.channel, "Query", Some("not-a-token")).await;

    let denied: Vec<_> = rows(&app.db).into_iter().filter(|r| r.kind == "access_denied").collect();
    assert_eq!(denied.len(), 3, "{denied:#?}");
    assert_eq!(denied[0].error.as_deref(), Some("UNAUTHENTICATED"));
    assert_eq!(denied[1].error.as_deref(), Some("PERMISSION_DENIED"));
    assert!(denied[2].reason.as_deref().unwrap().contains("49 more refusals like it folded"));
    assert!(denied[0].request.as_deref().unwrap().contains("toolgate.v1.Audit/Query"));
    let conn = rusqlite::Connection::open(&app.db).unwrap();
    let actor: String = conn
        .query_row("SELECT actor_id FROM events WHERE kind = 'access_denied' AND error = 'PERMISSION_DENIED'", [], |r| r.get(0))
        .unwrap();
    assert_eq!(actor, "agents-of-team-a");
    for secret in [AGENT, "not-a-token"] {
        assert!(!on_trail(&app.db, secret), "the token `{secret}` is on the trail");
    }
}

#[tokio::test]
async fn an_agent_may_act_only_as_its_identities() {
    let app = spawn_app_with(auth).await;
    let mut gate = GateClient::new(app.channel.clone());

    let own = gate.decide(with_token(as_actor("team-a/bot", &[]), Some(AGENT))).await;
    let other =
        gate.decide(with_token(as_actor("team-b/bot", &[]), Some(AGENT))).await.unwrap_err();
    let sub = gate.decide(with_token(as_actor("team-a/sub", &["team-a/bot"]), Some(AGENT))).await;
    let smuggled = gate
        .decide(with_token(as_actor("team-a/sub", &["team-b/boss"]), Some(AGENT)))
        .await
        .unwrap_err();

    assert!(own.is_ok());
    assert_eq!(other.code(), Code::PermissionDenied);
    assert!(other.message().contains("may not act as `team-b/bot`"), "{}", other.message());
    assert!(sub.is_ok());
    assert_eq!(smuggled.code(), Code::PermissionDenied);
    // Both are this token's identity refusals on Decide, within a second: one event, the
    // other folded into the next one due (refusals fold by the peer, not by what it claims).
    let denied = rows(&app.db).into_iter().filter(|r| r.kind == "access_denied").count();
    assert_eq!(denied, 1);
}

#[tokio::test]
async fn an_execution_under_another_identity_is_refused_and_recorded() {
    let app = spawn_app_with(|c| {
        auth(c);
        c.auth.tokens.push(token("team-b", "team-b-secret", r#"["agent"]"#, &["team-b/*"]));
    })
    .await;
    let mut gate = GateClient::new(app.channel.clone());
    let decision = gate
        .decide(with_token(as_actor("team-a/bot", &[]), Some(AGENT)))
        .await
        .unwrap()
        .into_inner();
    let report = ExecuteRequest {
        decision_id: decision.decision_id.clone(),
        args_json: r#"{"path":"src/main.rs"}"#.into(),
        status: ExecutionStatus::Ok as i32,
        ..Default::default()
    };

    let stolen = gate.execute(with_token(report.clone(), Some("team-b-secret"))).await.unwrap_err();
    let own = gate.execute(with_token(report, Some(AGENT))).await.unwrap().into_inner();

    assert_eq!(stolen.code(), Code::PermissionDenied);
    assert_eq!(own.violation, "", "the refused report did not count as the execution");
    let kinds: Vec<_> =
        rows(&app.db).into_iter().map(|r| r.kind).filter(|k| k != "policy_loaded").collect();
    assert_eq!(kinds, ["decision", "access_denied", "execution"]);
}

#[tokio::test]
async fn only_an_agent_that_may_act_as_the_calls_actor_withdraws_its_approval() {
    let app = spawn_app_with(|c| {
        auth(c);
        c.auth.tokens.push(token("team-b", "team-b-secret", r#"["agent"]"#, &["team-b/*"]));
    })
    .await;
    let mut gate = GateClient::new(app.channel.clone());
    let mut deploy = as_actor("team-a/bot", &[]);
    deploy.tool = "deploy".into();
    let decision = gate.decide(with_token(deploy, Some(AGENT))).await.unwrap().into_inner();
    let mut approvals = ApprovalsClient::new(app.channel.clone());
    let withdraw =
        || WithdrawRequest { decision_id: decision.decision_id.clone(), ..Default::default() };

    let by_team_b =
        approvals.withdraw(with_token(withdraw(), Some("team-b-secret"))).await.unwrap_err();
    let by_team_a = approvals.withdraw(with_token(withdraw(), Some(AGENT))).await;

    assert_eq!(by_team_b.code(), Code::PermissionDenied, "{}", by_team_b.message());
    assert!(by_team_b.message().contains("team-a/bot"), "{}", by_team_b.message());
    assert_eq!(by_team_a.unwrap().into_inner().state(), toolgate::proto::ApprovalState::Withdrawn);
}

#[tokio::test]
async fn an_approver_cannot_approve_calls_under_identities_they_may_act_as() {
    let app = spawn_app_with(|c| {
        auth(c);
        c.auth.tokens.push(token(
            "lead",
            "lead-secret",
            r#"["agent", "approver"]"#,
            &["lead", "team-a/*"],
        ));
    })
    .await;
    let mut gate = GateClient::new(app.channel.clone());
    let mut deploy = as_actor("team-a/bot", &[]);
    deploy.tool = "deploy".into();
    let decision = gate.decide(with_token(deploy, Some(AGENT))).await.unwrap().into_inner();
    let mut approvals = ApprovalsClient::new(app.channel.clone());
    let verdict = |approver: &str| VerdictRequest {
        decision_id: decision.decision_id.clone(),
        approver: approver.into(),
        comment: String::new(),
    };

    let as_lead =
        approvals.approve(with_token(verdict("lead"), Some("lead-secret"))).await.unwrap_err();
    let as_someone_else =
        approvals.approve(with_token(verdict("dave"), Some(APPROVER))).await.unwrap_err();
    let as_carol = approvals.approve(with_token(verdict("carol"), Some(APPROVER))).await;

    assert_eq!(as_lead.code(), Code::PermissionDenied, "{}", as_lead.message());
    assert_eq!(as_someone_else.code(), Code::PermissionDenied);
    assert!(as_carol.is_ok());
    // The trail names who asked and who approved: the token as well as the actor.
    let rows = rows(&app.db);
    let asked = rows.iter().find(|r| r.kind == "decision" && r.tool.as_deref() == Some("deploy"));
    let asked = asked.and_then(|r| r.request.clone()).unwrap_or_default();
    assert!(asked.contains(r#""identity":"agents-of-team-a""#), "{asked}");
    let approved = rows.iter().find(|r| r.kind == "approval_approved").unwrap();
    assert_eq!(approved.actor_id.as_deref(), Some("carol"));
    assert_eq!(approved.request.as_deref(), Some(r#"{"identity":"carol"}"#));
}

#[tokio::test]
async fn without_auth_a_remote_address_is_refused_unless_insisted_on() {
    let refused = crate::helpers::toolgate_async(&[
        "serve",
        "--listen",
        "0.0.0.0:0",
        "--db",
        "/nonexistent/x.db",
    ])
    .await;

    assert_eq!(refused.status.code(), Some(2));
    let stderr = String::from_utf8(refused.stderr).unwrap();
    assert!(stderr.contains("refusing to listen on `0.0.0.0:0`"), "{stderr}");
    assert!(stderr.contains("--insecure-allow-remote"), "{stderr}");
}

#[tokio::test]
async fn auth_off_admits_everyone_on_loopback() {
    let app: TestApp = crate::helpers::spawn_app().await;
    assert_eq!(call(&app.channel, "Query", None).await, Code::Ok);
}

#[tokio::test]
async fn no_token_reaches_the_log_or_the_trail_of_a_real_process() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("trail.db");
    let toml = format!(
        "[[auth.tokens]]\nid = \"a\"\nsha256 = \"{}\"\nroles = [\"agent\"]\nactors = [\"team-a/*\"]\n",
        token_digest(AGENT)
    );
    let proc = crate::faults::Proc::start(&db, &toml).await;
    let channel = proc.channel().await;
    for secret in [Some(AGENT), Some("wrong-secret-5d1e"), None] {
        for rpc in ["Decide", "Query", "Approve"] {
            call(&channel, rpc, secret).await;
        }
    }
    drop(proc);

    let log = std::fs::read_to_string(dir.path().join("server.log")).unwrap();
    assert!(log.contains("access denied"), "refusals are logged: {log}");
    for secret in [AGENT, "wrong-secret-5d1e"] {
        assert!(!log.contains(secret), "the token `{secret}` is in the log");
        assert!(!on_trail(&db, secret), "the token `{secret}` is on the trail");
    }
}

#[tokio::test]
async fn the_command_line_sends_the_token_from_the_environment() {
    let app = spawn_app_with(auth).await;
    let run = |token: Option<&'static str>, args: Vec<String>| {
        tokio::task::spawn_blocking(move || {
            let mut command = assert_cmd::Command::cargo_bin("toolgate").unwrap();
            command.args(&args).env_remove("TOOLGATE_TOKEN");
            if let Some(token) = token {
                command.env("TOOLGATE_TOKEN", token);
            }
            command.output().unwrap()
        })
    };
    let query = vec!["query".to_owned(), "--server".to_owned(), app.url.clone()];
    let list =
        vec!["approvals".to_owned(), "list".to_owned(), "--server".to_owned(), app.url.clone()];

    let auditor = run(Some(AUDITOR), query.clone()).await.unwrap();
    let anonymous = run(None, query).await.unwrap();
    let approver = run(Some(APPROVER), list).await.unwrap();

    assert!(auditor.status.success(), "{}", String::from_utf8_lossy(&auditor.stderr));
    assert!(!anonymous.status.success());
    assert!(
        String::from_utf8_lossy(&anonymous.stderr)
            .contains("no bearer token and no client certificate")
    );
    assert!(approver.status.success(), "{}", String::from_utf8_lossy(&approver.stderr));
}

/// Another tenant with a valid agent token: it may not see, await or pre-empt team a's calls.
#[tokio::test]
async fn another_agent_neither_sees_awaits_nor_takes_over_a_call_of_team_a() {
    let app = spawn_app_with(|c| {
        auth(c);
        c.auth.tokens.push(token("team-b", "team-b-secret", r#"["agent"]"#, &["team-b/*"]));
    })
    .await;
    let mut gate = GateClient::new(app.channel.clone());
    let mut approvals = ApprovalsClient::new(app.channel.clone());
    let mut deploy = as_actor("team-a/bot", &[]);
    deploy.tool = "deploy".into();
    let held = gate.decide(with_token(deploy, Some(AGENT))).await.unwrap().into_inner();
    let list = |secret| with_token(ListPendingRequest::default(), Some(secret));
    let wait = |secret| {
        with_token(
            AwaitRequest { decision_id: held.decision_id.clone(), timeout_ms: 1 },
            Some(secret),
        )
    };

    let team_b_sees = approvals.list_pending(list("team-b-secret")).await.unwrap().into_inner();
    let team_a_sees = approvals.list_pending(list(AGENT)).await.unwrap().into_inner();
    let approver_sees = approvals.list_pending(list(APPROVER)).await.unwrap().into_inner();
    let team_b_awaits = approvals.r#await(wait("team-b-secret")).await.unwrap_err();
    let team_a_awaits = approvals.r#await(wait(AGENT)).await.unwrap().into_inner();

    assert!(team_b_sees.approvals.is_empty());
    assert_eq!(team_a_sees.approvals.len(), 1);
    assert_eq!(approver_sees.approvals.len(), 1);
    assert_eq!(team_b_awaits.code(), Code::PermissionDenied, "{}", team_b_awaits.message());
    assert_eq!(team_a_awaits.decision_id, held.decision_id);

    // Team b decides with team a's idempotency key; team a's report by that key still pairs
    // with team a's own decision.
    let mut read = as_actor("team-a/bot", &[]);
    read.plan = Some(toolgate::proto::ExecutionPlan {
        idempotency_key: "call-1".into(),
        ..Default::default()
    });
    let mine = gate.decide(with_token(read.clone(), Some(AGENT))).await.unwrap().into_inner();
    read.actor = Some(Actor { id: "team-b/bot".into(), ..Default::default() });
    gate.decide(with_token(read, Some("team-b-secret"))).await.unwrap();
    let report = ExecuteRequest {
        idempotency_key: "call-1".into(),
        args_json: r#"{"path":"src/main.rs"}"#.into(),
        status: ExecutionStatus::Ok as i32,
        ..Default::default()
    };
    let executed = gate.execute(with_token(report, Some(AGENT))).await.unwrap().into_inner();
    assert!(executed.violation.is_empty(), "{}", executed.violation);
    let execution = rows(&app.db).into_iter().find(|r| r.kind == "execution").unwrap();
    assert_eq!(execution.decision_id.as_deref(), Some(mine.decision_id.as_str()));
}

#[tokio::test]
async fn auth_over_plain_http_beyond_loopback_warns_at_start() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("trail.db");
    let toml = format!(
        "http_listen = \"0.0.0.0:0\"\n[[auth.tokens]]\nid = \"a\"\nsha256 = \"{}\"\nroles = [\"agent\"]\n",
        token_digest(AGENT)
    );
    drop(crate::faults::Proc::start(&db, &toml).await);

    let log = std::fs::read_to_string(dir.path().join("server.log")).unwrap();
    assert!(log.contains("the HTTP side port serves plain HTTP beyond loopback"), "{log}");
}

/// A valid token that claims a flood of distinct, long actor ids: a bounded number of
/// `access_denied` events, each reason cut. Before, each distinct id was its own kind of
/// refusal, recorded in full.
#[tokio::test]
async fn a_flood_of_claimed_identities_leaves_a_bounded_number_of_short_events() {
    let app = spawn_app_with(auth).await;
    let mut gate = GateClient::new(app.channel.clone());
    for n in 0..200 {
        let claimed = format!("team-b/{n}-{}", "x".repeat(10_000));
        let _ = gate.decide(with_token(as_actor(&claimed, &[]), Some(AGENT))).await;
    }

    let denied: Vec<_> = rows(&app.db).into_iter().filter(|r| r.kind == "access_denied").collect();
    assert!(!denied.is_empty() && denied.len() <= 3, "{}", denied.len());
    for event in &denied {
        let reason = event.reason.as_deref().unwrap_or_default();
        assert!(reason.len() <= 256 + 80, "{} bytes", reason.len());
    }
}

/// A flood of calls that require approval: bounded per actor, and the list still answers.
#[tokio::test]
async fn pending_approvals_are_bounded_per_actor_and_the_list_stays_short() {
    let app = spawn_app_with(|c| {
        auth(c);
        c.approvals.max_pending_per_actor = 5;
        c.approvals.max_pending = 8;
    })
    .await;
    let mut gate = GateClient::new(app.channel.clone());
    let mut outcomes = Vec::new();
    for n in 0..12 {
        let actor = if n < 7 { "team-a/one" } else { "team-a/two" };
        let mut deploy = as_actor(actor, &[]);
        deploy.tool = "deploy".into();
        let decided = gate.decide(with_token(deploy, Some(AGENT))).await.unwrap().into_inner();
        outcomes.push((decided.outcome(), decided.reason));
    }

    let held =
        outcomes.iter().filter(|(o, _)| *o == toolgate::proto::Outcome::RequireApproval).count();
    assert_eq!(held, 8, "5 of the first actor's, 3 of the second's: {outcomes:#?}");
    let (_, reason) = &outcomes[5];
    assert!(
        reason.contains("not sent for approval") && reason.contains("max_pending_per_actor"),
        "{reason}"
    );
    let (_, reason) = &outcomes[11];
    assert!(reason.contains("[approvals] max_pending"), "{reason}");
    let mut approvals = ApprovalsClient::new(app.channel.clone());
    let listed = approvals
        .list_pending(with_token(
            ListPendingRequest { limit: 3, ..Default::default() },
            Some(APPROVER),
        ))
        .await
        .unwrap()
        .into_inner();
    assert_eq!((listed.approvals.len(), listed.total), (3, 8));
    let requested = rows(&app.db).into_iter().filter(|r| r.kind == "approval_requested").count();
    assert_eq!(requested, 8);
}

/// One tenant's token, acting as a dozen actor ids, cannot fill the pending approvals so that
/// another tenant's call is denied instead of held: each credential fills its own share.
#[tokio::test]
async fn one_credential_fills_its_own_share_of_pending_approvals_and_another_tenants_call_is_held()
{
    const AGENT_B: &str = "agent-secret-of-team-b";
    let app = spawn_app_with(|c| {
        auth(c);
        c.auth.tokens.push(token("agents-of-team-b", AGENT_B, r#"["agent"]"#, &["team-b/*"]));
    })
    .await;
    // 1,000 deploys of team-a's token across 12 actor ids, 100 of each at a time: as many as
    // the per-actor caps let through, and the most pending in all.
    let mut held = 0;
    for wave in 0..10 {
        let mut calls = tokio::task::JoinSet::new();
        for n in 0..100 {
            let mut gate = GateClient::new(app.channel.clone());
            let mut deploy = as_actor(&format!("team-a/{}", (wave * 100 + n) % 12), &[]);
            deploy.tool = "deploy".into();
            calls.spawn(async move {
                gate.decide(with_token(deploy, Some(AGENT))).await.unwrap().into_inner()
            });
        }
        while let Some(decided) = calls.join_next().await {
            let decided = decided.unwrap();
            if decided.outcome() == toolgate::proto::Outcome::RequireApproval {
                held += 1;
            } else {
                assert!(decided.reason.contains("max_pending_per_caller"), "{}", decided.reason);
            }
        }
    }
    assert_eq!(held, 100, "team-a's token holds its share, [approvals] max_pending_per_caller");

    let mut gate = GateClient::new(app.channel.clone());
    let mut deploy = as_actor("team-b/bot", &[]);
    deploy.tool = "deploy".into();
    let decided = gate.decide(with_token(deploy, Some(AGENT_B))).await.unwrap().into_inner();
    assert_eq!(
        decided.outcome(),
        toolgate::proto::Outcome::RequireApproval,
        "team-b's deploy waits for a person: {}",
        decided.reason
    );
    // After a restart the share is rebuilt from the trail: the credential each call came with
    // is on its decision.
    let config = Config { db: app.db.clone(), ..Config::default() };
    let (dir, _) = app.stop().await;
    let mut config = config;
    auth(&mut config);
    let app = crate::helpers::start(config, dir).await;
    let mut gate = GateClient::new(app.channel.clone());
    let mut deploy = as_actor("team-a/0", &[]);
    deploy.tool = "deploy".into();
    let decided = gate.decide(with_token(deploy, Some(AGENT))).await.unwrap().into_inner();
    assert_eq!(decided.outcome(), toolgate::proto::Outcome::Deny, "{}", decided.reason);
    assert!(decided.reason.contains("max_pending_per_caller"), "{}", decided.reason);
}

/// A token that may report harness approvals cannot use it to approve in the name of someone
/// policies know (whose roles a policy may demand).
#[tokio::test]
async fn a_harness_approval_in_a_configured_approvers_name_is_not_recorded() {
    let app = spawn_app_with(|c| {
        auth(c);
        c.actors = toml::from_str("[lead]\nroles = [\"lead\"]\n").unwrap();
        let mut hook = token("hook", "hook-secret", r#"["agent"]"#, &["team-a/*"]);
        hook.harness_approvals = true;
        c.auth.tokens.push(hook);
    })
    .await;
    let mut gate = GateClient::new(app.channel.clone());
    let mut deploy = as_actor("team-a/bot", &[]);
    deploy.tool = "deploy".into();
    let held = gate.decide(with_token(deploy, Some("hook-secret"))).await.unwrap().into_inner();
    let report = ExecuteRequest {
        decision_id: held.decision_id.clone(),
        args_json: r#"{"path":"src/main.rs"}"#.into(),
        status: ExecutionStatus::Ok as i32,
        approved_in_harness: "lead".into(),
        ..Default::default()
    };

    let executed =
        gate.execute(with_token(report, Some("hook-secret"))).await.unwrap().into_inner();

    assert!(!executed.violation.is_empty(), "a run without an approval");
    let kinds: Vec<_> =
        rows(&app.db).into_iter().map(|r| r.kind).filter(|k| k != "policy_loaded").collect();
    assert_eq!(kinds, ["decision", "approval_requested", "execution", "violation"]);
}
