//! Flow policies against the real server: what a session's executed calls read decides what it
//! may send (examples/policies/flows), across calls, actors, sessions and a restart.

use toolgate::config::Config;
use toolgate::proto::approvals_client::ApprovalsClient;
use toolgate::proto::{
    Actor, DecideRequest, DecideResponse, ExecuteRequest, ExecutionPlan, ExecutionStatus, Outcome,
    Resource, RunOptions, VerdictRequest,
};

use crate::helpers::{TestApp, rows, start};

/// The flows example's configuration, on a fresh database.
fn config(dir: &tempfile::TempDir) -> Config {
    let text = std::fs::read_to_string("examples/policies/flows/toolgate.toml").unwrap();
    Config { db: dir.path().join("trail.db"), ..toml::from_str(&text).unwrap() }
}

async fn app() -> TestApp {
    let dir = tempfile::tempdir().unwrap();
    start(config(&dir), dir).await
}

fn call(tool: &str, actor: &str, session: &str, args: &str) -> DecideRequest {
    DecideRequest {
        session_id: session.into(),
        actor: Some(Actor { id: actor.into(), kind: "agent".into(), ..Default::default() }),
        tool: tool.into(),
        args_json: args.into(),
        options: Some(RunOptions { allow_write: true, ..Default::default() }),
        ..Default::default()
    }
}

/// Decides `req` and, when allowed, reports it run; the execution's seq, if it ran.
async fn run(app: &mut TestApp, req: DecideRequest) -> (DecideResponse, Option<i64>) {
    let args_json = req.args_json.clone();
    let decision = app.decide(req).await;
    if decision.outcome() != Outcome::Allow {
        return (decision, None);
    }
    let report = ExecuteRequest {
        decision_id: decision.decision_id.clone(),
        args_json,
        status: ExecutionStatus::Ok as i32,
        output: Some("ok".into()),
        ..Default::default()
    };
    let executed = app.client.execute(report).await.unwrap().into_inner();
    (decision, Some(executed.seq as i64))
}

const POST: &str = r#"{"channel":"ops","text":"hello"}"#;

#[tokio::test]
async fn an_external_send_after_a_secret_read_is_held_and_names_the_read() {
    let mut app = app().await;
    let (_, read) = run(&mut app, call("vault_read", "agent", "s1", r#"{"name":"db"}"#)).await;
    let read = read.expect("the read runs");

    let (held, _) = run(&mut app, call("post_chat", "agent", "s1", POST)).await;

    assert_eq!(held.outcome(), Outcome::RequireApproval, "{}", held.reason);
    assert_eq!(held.policy_ids, ["flows.secret_then_external"]);
    assert_eq!(
        held.reason,
        format!(
            "external send after reading secret data in this session: approval required \
             (read by seq {read} (secret))"
        )
    );
    let execution = rows(&app.db).into_iter().find(|r| r.seq == read).unwrap();
    assert_eq!(execution.request.as_deref(), Some(r#"{"reads":["secret"]}"#));
    // An internal call after it is not held.
    let (internal, _) = run(&mut app, call("read", "agent", "s1", r#"{"path":"a"}"#)).await;
    assert_eq!(internal.outcome(), Outcome::Allow);

    // A person approves: the approval is judged with what the session has read, and stands.
    let mut approvals = ApprovalsClient::new(app.channel.clone());
    let verdict = |decision: &DecideResponse| VerdictRequest {
        decision_id: decision.decision_id.clone(),
        approver: "carol".into(),
        comment: "the channel is private".into(),
    };
    approvals.approve(verdict(&held)).await.unwrap();
    // Another post waits; meanwhile the session reads customer data: no approval lets it out.
    let again = r#"{"channel":"ops","text":"again"}"#;
    let (waiting, _) = run(&mut app, call("post_chat", "agent", "s1", again)).await;
    assert_eq!(waiting.outcome(), Outcome::RequireApproval);
    run(&mut app, call("crm_lookup", "agent", "s1", r#"{"customer":7}"#)).await.1.unwrap();
    let refused = approvals.approve(verdict(&waiting)).await.unwrap_err();
    assert_eq!(refused.code(), tonic::Code::FailedPrecondition);
    assert!(refused.message().contains("customer_pii"), "{}", refused.message());
}

#[tokio::test]
async fn a_decision_that_never_ran_taints_nothing() {
    let mut app = app().await;
    let decided = app.decide(call("vault_read", "agent", "s1", r#"{"name":"db"}"#)).await;
    assert_eq!(decided.outcome(), Outcome::Allow);

    let (post, _) = run(&mut app, call("post_chat", "agent", "s1", POST)).await;

    assert_eq!(post.outcome(), Outcome::Allow, "{}", post.reason);
}

#[tokio::test]
async fn another_session_or_another_actor_is_not_tainted() {
    let mut app = app().await;
    run(&mut app, call("crm_lookup", "agent", "s1", r#"{"customer":7}"#)).await.1.unwrap();

    let (other_session, _) = run(&mut app, call("fetch_url", "agent", "s2", r#"{"u":"x"}"#)).await;
    let (other_actor, _) = run(&mut app, call("fetch_url", "intruder", "s1", r#"{"u":"x"}"#)).await;
    let (own, _) = run(&mut app, call("fetch_url", "agent", "s1", r#"{"u":"x"}"#)).await;

    assert_eq!(other_session.outcome(), Outcome::Allow, "{}", other_session.reason);
    assert_eq!(other_actor.outcome(), Outcome::Allow, "{}", other_actor.reason);
    assert_eq!(own.outcome(), Outcome::Deny);
    assert_eq!(own.policy_ids, ["flows.pii_stays_inside"]);
}

#[tokio::test]
async fn the_resources_classification_is_read_too() {
    let mut app = app().await;
    let mut read = call("read", "agent", "s1", r#"{"path":"keys.txt"}"#);
    read.resource = Some(Resource { classification: "secret".into(), ..Default::default() });
    run(&mut app, read).await.1.unwrap();

    let (post, _) = run(&mut app, call("post_chat", "agent", "s1", POST)).await;

    assert_eq!(post.outcome(), Outcome::RequireApproval, "{}", post.reason);
}

#[tokio::test]
async fn a_session_that_read_nothing_sensitive_is_never_held() {
    let mut app = app().await;
    let calls = [
        ("read", r#"{"path":"README.md"}"#, "internal"),
        ("grep", r#"{"pattern":"fn"}"#, ""),
        ("write", r#"{"path":"NOTES.md"}"#, "internal"),
        ("fetch_url", r#"{"u":"https://example.com"}"#, "public"),
        ("post_chat", POST, ""),
        ("post_chat", r#"{"channel":"ops","text":"done"}"#, ""),
    ];
    for (tool, args, classification) in calls {
        let mut req = call(tool, "agent", "s1", args);
        req.resource =
            Some(Resource { classification: classification.into(), ..Default::default() });
        let (decision, ran) = run(&mut app, req).await;
        assert_eq!(decision.outcome(), Outcome::Allow, "{tool}: {}", decision.reason);
        assert!(ran.is_some());
    }
    // It read internal data, which no flow rule holds for, and public data, which taints nothing.
    let reads: Vec<Option<String>> =
        rows(&app.db).into_iter().filter(|r| r.kind == "execution").map(|r| r.request).collect();
    let internal = Some(r#"{"reads":["internal"]}"#.to_owned());
    assert_eq!(reads, [internal.clone(), None, internal, None, None, None]);
}

#[tokio::test]
async fn the_classes_survive_a_restart() {
    let mut app = app().await;
    let read =
        run(&mut app, call("vault_read", "agent", "s1", r#"{"name":"db"}"#)).await.1.unwrap();
    let (dir, db) = app.stop().await;

    let mut app = start(Config { db, ..config(&dir) }, dir).await;
    let (held, _) = run(&mut app, call("post_chat", "agent", "s1", POST)).await;

    assert_eq!(held.outcome(), Outcome::RequireApproval, "{}", held.reason);
    assert!(held.reason.ends_with(&format!("(read by seq {read} (secret))")), "{}", held.reason);
    let (clean, _) = run(&mut app, call("post_chat", "agent", "s2", POST)).await;
    assert_eq!(clean.outcome(), Outcome::Allow);
}

#[tokio::test]
async fn replay_shows_what_a_new_flow_policy_would_have_held_on_an_old_trail() {
    // A trail written before any tool was labelled, under the default policy.
    let dir = tempfile::tempdir().unwrap();
    let mut old = config(&dir);
    old.policy = None;
    old.tools.values_mut().for_each(|spec| spec.reads.clear());
    let mut app = start(old, dir).await;
    run(&mut app, call("vault_read", "agent", "s1", r#"{"name":"db"}"#)).await.1.unwrap();
    let (posted, _) = run(&mut app, call("post_chat", "agent", "s1", POST)).await;
    assert_eq!(posted.outcome(), Outcome::Allow);
    run(&mut app, call("post_chat", "agent", "s2", POST)).await.1.unwrap();
    let db = app.db.to_str().unwrap().to_owned();

    let args = [
        "policy",
        "replay",
        "--db",
        &db,
        "--policy",
        "examples/policies/flows/policy.cedar",
        "--config",
        "examples/policies/flows/toolgate.toml",
    ];
    let out = crate::helpers::toolgate_async(&args).await;

    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains(&format!(
            "seq {}: allow -> require_approval (flows.secret_then_external)",
            posted.seq
        )),
        "{text}"
    );
    assert!(text.contains("replayed 3 decisions") && text.contains(": 1 would change"), "{text}");
}

#[tokio::test]
async fn a_run_reported_by_its_key_or_against_a_deny_has_still_read() {
    let mut app = app().await;
    // Reported by the idempotency key, as the Claude Code hook reports.
    let mut read = call("vault_read", "agent", "s1", r#"{"name":"db"}"#);
    read.plan = Some(ExecutionPlan { idempotency_key: "toolu_1".into(), ..Default::default() });
    assert_eq!(app.decide(read).await.outcome(), Outcome::Allow);
    let by_key = ExecuteRequest {
        idempotency_key: "toolu_1".into(),
        args_json: r#"{"name":"db"}"#.into(),
        status: ExecutionStatus::Ok as i32,
        ..Default::default()
    };
    app.client.execute(by_key).await.unwrap();
    // A write the policy denied, to a secret file, run anyway: a violation, and a read.
    let mut write = call("write", "agent", "s2", r#"{"path":"keys.txt"}"#);
    write.options = None;
    write.resource = Some(Resource { classification: "secret".into(), ..Default::default() });
    let denied = app.decide(write).await;
    assert_eq!(denied.outcome(), Outcome::Deny);
    let ran = ExecuteRequest {
        decision_id: denied.decision_id.clone(),
        args_json: r#"{"path":"keys.txt"}"#.into(),
        status: ExecutionStatus::Error as i32,
        ..Default::default()
    };
    assert!(!app.client.execute(ran).await.unwrap().into_inner().violation.is_empty());

    for session in ["s1", "s2"] {
        let (post, _) = run(&mut app, call("post_chat", "agent", session, POST)).await;
        assert_eq!(post.outcome(), Outcome::RequireApproval, "{session}: {}", post.reason);
    }
}
