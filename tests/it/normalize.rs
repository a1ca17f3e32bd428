//! Tools' normalizations (`[tools.<name>] normalize`): two spellings of one call hash alike and
//! name one resource, a path that leaves the root is denied, an Execute that reports the
//! arguments as the harness sent them still pairs with its decision, and the hash of the
//! arguments as sent is kept when asked.

use toolgate::config::Config;
use toolgate::proto::{DecideResponse, ExecuteRequest, ExecutionStatus, Outcome, RunOptions};

use crate::helpers::{TestApp, request, rows, spawn_app_with};

/// `write` normalized: its path against /workspace (and the resource named by it), its
/// amount as a decimal, its time in UTC, its mode in lower case; `mode` an enum of the schema.
const TOOLS: &str = r#"
[write]
safety = "write"
action = "fs.write"
resource_type = "file"
resource_from = "/path"
root = "/workspace"
input_schema = { type = "object", properties = { mode = { enum = ["append", "replace"] } } }
normalize = { "/path" = "path", "/amount" = "decimal", "/at" = "datetime", "/mode" = "lowercase" }
"#;

async fn app(raw: bool) -> TestApp {
    app_with(raw, None).await
}

/// The same, with `policy` in force if given.
async fn app_with(raw: bool, policy: Option<&'static str>) -> TestApp {
    spawn_app_with(move |c| {
        c.tools = toml::from_str(TOOLS).unwrap();
        c.args_hash.raw = raw;
        if let Some(policy) = policy {
            let path = c.db.with_file_name("normalize.cedar");
            std::fs::write(&path, policy).unwrap();
            c.policy = Some(path);
        }
    })
    .await
}

async fn write(app: &mut TestApp, args: &str) -> DecideResponse {
    let mut req = request("write");
    req.args_json = args.into();
    req.options = Some(RunOptions { allow_write: true, ..Default::default() });
    app.decide(req).await
}

#[tokio::test]
async fn two_spellings_of_one_call_hash_alike_and_name_one_resource() {
    let mut app = app(false).await;

    let one = write(
        &mut app,
        r#"{"path": "src/./lib.rs", "amount": 1e2, "at": "2026-12-02T10:00:00+09:00", "mode": "APPEND"}"#,
    )
    .await;
    let other = write(
        &mut app,
        r#"{"mode": "append", "at": "2026-12-02T01:00:00Z", "amount": "100.00", "path": "/workspace/x/../src/lib.rs"}"#,
    )
    .await;
    let different = write(&mut app, r#"{"path": "src/main.rs", "amount": 100}"#).await;

    assert_eq!((one.outcome(), other.outcome()), (Outcome::Allow, Outcome::Allow));
    assert_eq!(one.args_hash, other.args_hash);
    assert_ne!(one.args_hash, different.args_hash);
    let expected = toolgate::request::canonicalize(
        serde_json::json!({
            "path": "/workspace/src/lib.rs", "amount": "100",
            "at": "2026-12-02T01:00:00Z", "mode": "append",
        })
        .as_object()
        .unwrap(),
    )
    .unwrap();
    assert_eq!(one.args_hash, expected.hash, "the trail hashes the normal form");
    let decisions: Vec<_> = rows(&app.db).into_iter().filter(|r| r.kind == "decision").collect();
    assert_eq!(decisions[0].resource_id.as_deref(), Some("/workspace/src/lib.rs"));
    assert_eq!(decisions[1].resource_id, decisions[0].resource_id);
    assert!(!decisions[0].request.as_deref().unwrap_or("").contains("raw_args_hash"));
    app.stop().await;
}

#[tokio::test]
async fn a_path_that_leaves_the_root_is_denied_and_bad_values_named() {
    let mut app = app(false).await;

    let escape = write(&mut app, r#"{"path": "src/../../etc/passwd"}"#).await;
    let bad = write(&mut app, r#"{"amount": "ten", "at": "tomorrow"}"#).await;
    let off_schema = write(&mut app, r#"{"mode": "Overwrite"}"#).await;

    assert_eq!(escape.outcome(), Outcome::Deny);
    assert_eq!(
        escape.reason,
        "the arguments of `write` cannot be normalized: args.path: the value escapes the root \
         \"/workspace\""
    );
    assert_eq!(bad.outcome(), Outcome::Deny);
    let why = &bad.reason;
    assert!(why.contains("args.amount: the value is not a decimal number"), "{why}");
    assert!(why.contains("args.at: the value is not an RFC 3339"), "{why}");
    assert_eq!(off_schema.outcome(), Outcome::Deny);
    let why = &off_schema.reason;
    assert!(why.contains("args.mode: the value is not one of"), "{why}");
    // The resource is named as sent; the reason never quotes a value.
    let denied = rows(&app.db).into_iter().find(|r| r.kind == "decision").unwrap();
    assert_eq!(denied.resource_id.as_deref(), Some("src/../../etc/passwd"));
    assert!(!denied.reason.unwrap().contains("passwd"));
    app.stop().await;
}

#[tokio::test]
async fn an_execution_reported_as_the_harness_sent_it_pairs_with_its_decision() {
    let mut app = app(true).await;
    let sent = r#"{"path": "src/lib.rs", "mode": "Append"}"#;
    let decision = write(&mut app, sent).await;
    let report = |args: &str| ExecuteRequest {
        decision_id: decision.decision_id.clone(),
        args_json: args.into(),
        status: ExecutionStatus::Ok as i32,
        ..Default::default()
    };

    let paired = app.client.execute(report(sent)).await.unwrap().into_inner();
    let raw = toolgate::request::canonicalize(
        serde_json::from_str::<serde_json::Value>(sent).unwrap().as_object().unwrap(),
    )
    .unwrap();

    assert_eq!(paired.violation, "");
    let stored = rows(&app.db);
    let cell = stored.iter().find(|r| r.kind == "decision").unwrap().request.clone().unwrap();
    assert!(cell.contains(&format!(r#""raw_args_hash":"{}""#, raw.hash)), "{cell}");
    assert_ne!(raw.hash, decision.args_hash);

    let second = write(&mut app, sent).await;
    let other = ExecuteRequest { decision_id: second.decision_id.clone(), ..report("{}") };
    let other = ExecuteRequest { args_json: r#"{"path": "src/main.rs"}"#.into(), ..other };
    let broke = app.client.execute(other).await.unwrap().into_inner();
    assert!(broke.violation.starts_with("the arguments' hash differs"), "{}", broke.violation);
    app.stop().await;
}

#[tokio::test]
async fn a_policy_that_takes_invalid_arguments_in_hand_still_cannot_let_a_path_escape() {
    let policy = r#"@id("anything-goes") permit (principal, action, resource)
        when { context.args_valid || !context.args_valid };"#;
    let mut app = app_with(false, Some(policy)).await;

    let off_schema = write(&mut app, r#"{"mode": "Overwrite"}"#).await;
    let escape = write(&mut app, r#"{"path": "../etc/passwd"}"#).await;

    assert_eq!(off_schema.outcome(), Outcome::Allow, "its policy decides schema mismatches");
    assert_eq!(escape.outcome(), Outcome::Deny, "but not values that cannot be normalized");
    assert!(escape.policy_ids.is_empty());
    app.stop().await;
}

#[tokio::test]
async fn a_rewrite_runs_the_arguments_as_sent_patched_and_pairs_in_normal_form() {
    let policy = r#"@id("all") permit (principal, action, resource);
        @id("append-only") @outcome("rewrite") @rewrite("{\"mode\": \"append\"}")
        forbid (principal, action, resource) when { context.tool.name == "write" };"#;
    let mut app = app_with(false, Some(policy)).await;
    let decision =
        write(&mut app, r#"{"path": "src/lib.rs", "amount": 100, "mode": "replace"}"#).await;

    let rewritten: serde_json::Value = serde_json::from_str(&decision.rewritten_args_json).unwrap();
    let report = ExecuteRequest {
        decision_id: decision.decision_id.clone(),
        args_json: decision.rewritten_args_json.clone(),
        status: ExecutionStatus::Ok as i32,
        ..Default::default()
    };
    let paired = app.client.execute(report).await.unwrap().into_inner();

    assert_eq!(decision.outcome(), Outcome::Rewrite);
    assert_eq!(
        rewritten,
        serde_json::json!({"path": "src/lib.rs", "amount": 100, "mode": "append"}),
        "the tool runs what the harness sent, patched: its types kept"
    );
    assert_eq!(paired.violation, "");
    app.stop().await;
}

#[tokio::test]
async fn a_normalization_that_cannot_work_refuses_the_start() {
    let dir = tempfile::tempdir().unwrap();
    let mut config = Config { db: dir.path().join("refused.db"), ..Config::default() };
    config.tools = toml::from_str(&TOOLS.replace("\"/workspace\"", "\"workspace\"")).unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();

    let refused =
        toolgate::server::run(config, toolgate::listener::Listener::Tcp(listener), None, async {})
            .await
            .unwrap_err();

    assert_eq!(
        refused.to_string(),
        "tool `write`: normalize: root `workspace` is not an absolute path"
    );
}

#[tokio::test]
async fn a_resource_that_contradicts_the_arguments_is_refused_and_recorded() {
    let mut app = app(false).await;
    let mut req = request("write");
    req.args_json = r#"{"path": "src/lib.rs"}"#.into();
    req.options = Some(RunOptions { allow_write: true, ..Default::default() });
    // The harness says the call writes a harmless file; its arguments name another.
    req.resource = Some(toolgate::proto::Resource {
        r#type: "file".into(),
        id: "/tmp/harmless".into(),
        ..Default::default()
    });
    let status = app.client.decide(req.clone()).await.unwrap_err();
    assert_eq!(status.code(), tonic::Code::InvalidArgument);
    assert!(
        status.message().starts_with("resource.id: contradicts the argument `/path`"),
        "{status:?}"
    );
    // The path as sent, or as normalized, names the same resource.
    for id in ["src/lib.rs", "/workspace/src/lib.rs", ""] {
        req.resource.as_mut().unwrap().id = id.into();
        assert_eq!(app.decide(req.clone()).await.outcome(), Outcome::Allow, "{id}");
    }
    let kinds: Vec<_> = rows(&app.db).into_iter().map(|r| r.kind).collect();
    assert_eq!(kinds.iter().filter(|k| *k == "invalid_request").count(), 1, "{kinds:?}");
}

#[tokio::test]
async fn amounts_beyond_json_numbers_are_exact_decimals_or_refused() {
    let mut app = app(false).await;
    // With a `decimal` rule, 2^53 + 1 and 2^53 are two amounts, hashed apart.
    let one = write(&mut app, r#"{"path": "a", "amount": 9007199254740993}"#).await;
    let other = write(&mut app, r#"{"path": "a", "amount": 9007199254740992}"#).await;
    assert_eq!((one.outcome(), other.outcome()), (Outcome::Allow, Outcome::Allow));
    assert_ne!(one.args_hash, other.args_hash);
    // Without one, the number is refused with its path, never rounded into another's hash.
    let mut req = request("write");
    req.args_json = r#"{"path": "a", "tokens": {"n": 9007199254740993}}"#.into();
    let status = app.client.decide(req).await.unwrap_err();
    assert_eq!(status.code(), tonic::Code::InvalidArgument);
    assert!(
        status.message().starts_with("args_json: `args.tokens.n`: a number beyond"),
        "{status:?}"
    );
    // An approved amount cannot run as another: the Execute that reports it is a violation.
    let report = ExecuteRequest {
        decision_id: one.decision_id.clone(),
        args_json: r#"{"path": "a", "amount": "9007199254740992"}"#.into(),
        status: ExecutionStatus::Ok as i32,
        ..Default::default()
    };
    let executed = app.client.execute(report).await.unwrap().into_inner();
    assert!(!executed.violation.is_empty(), "{executed:?}");
}
