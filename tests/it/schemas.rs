//! Tools' input schemas (`[tools.<name>] input_schema`): arguments that break one are denied
//! with the path and the rule, unless the policy takes such calls in hand; a broken schema
//! refuses the start, and a reload that breaks one keeps the registry in force.

use tonic::Code;
use toolgate::config::Config;
use toolgate::proto::admin_client::AdminClient;
use toolgate::proto::{DecideResponse, Outcome, ReloadPolicyRequest, RunOptions};

use crate::helpers::{TestApp, request, rows, spawn_app_with};

const SCHEMA: &str = r#"{
    "type": "object",
    "required": ["path", "mode"],
    "properties": {
        "path": {"type": "string", "pattern": "^/workspace/"},
        "mode": {"enum": ["append", "replace"]}
    }
}"#;

/// A server whose `write` tool has the schema in `file`, with `policy` in force if given.
async fn app(file: &std::path::Path, policy: Option<&str>) -> TestApp {
    std::fs::write(file, SCHEMA).unwrap();
    let tools = format!(
        "[write]\nsafety = \"write\"\naction = \"fs.write\"\ninput_schema = {:?}\n",
        file.display().to_string()
    );
    let policy = policy.map(str::to_owned);
    spawn_app_with(move |c| {
        c.tools = toml::from_str(&tools).unwrap();
        if let Some(policy) = policy {
            let path = c.db.with_file_name("schemas.cedar");
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
async fn arguments_that_break_the_schema_are_denied_with_the_path_and_the_rule() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = app(&dir.path().join("write.json"), None).await;

    let denied = write(&mut app, r#"{"path": "/etc/passwd"}"#).await;
    let allowed = write(&mut app, r#"{"path": "/workspace/a", "mode": "append"}"#).await;

    assert_eq!(denied.outcome(), Outcome::Deny);
    assert_eq!(
        denied.reason,
        "the arguments do not match the input_schema of `write`: args: \"mode\" is a required \
         property; args.path: the value does not match \"^/workspace/\""
    );
    assert!(denied.policy_ids.is_empty());
    assert_eq!(allowed.outcome(), Outcome::Allow);
    let decisions: Vec<_> = rows(&app.db).into_iter().filter(|r| r.kind == "decision").collect();
    assert_eq!(decisions[0].outcome.as_deref(), Some("deny"));
    assert!(!format!("{decisions:?}").contains("passwd"), "the value stays off the trail");
    app.stop().await;
}

#[tokio::test]
async fn a_policy_that_reads_args_valid_decides_such_calls_itself() {
    let policy = r#"
@id("permit-all") permit (principal, action, resource);
@id("odd-arguments-need-a-human")
@reason("odd arguments need a human")
@outcome("require_approval")
forbid (principal, action, resource)
when { !context.args_valid && context.args_errors.contains("args: \"mode\" is a required property") };
"#;
    let dir = tempfile::tempdir().unwrap();
    let mut app = app(&dir.path().join("write.json"), Some(policy)).await;

    let held = write(&mut app, r#"{"path": "/workspace/a"}"#).await;
    let allowed = write(&mut app, r#"{"path": "/etc/passwd", "mode": "append"}"#).await;

    assert_eq!(
        (held.outcome(), held.reason.as_str()),
        (Outcome::RequireApproval, "odd arguments need a human")
    );
    // Its policy took invalid arguments in hand, and lets this mismatch through.
    assert_eq!(allowed.outcome(), Outcome::Allow);
    app.stop().await;
}

#[tokio::test]
async fn a_broken_schema_refuses_the_start_and_a_reload_that_breaks_one_keeps_the_registry() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("write.json");
    std::fs::write(&file, r#"{"type": "no-such-type"}"#).unwrap();
    let mut config = Config { db: dir.path().join("refused.db"), ..Config::default() };
    config.tools = toml::from_str(&format!(
        "[write]\nsafety = \"write\"\naction = \"fs.write\"\ninput_schema = {:?}\n",
        file.display().to_string()
    ))
    .unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let refused =
        toolgate::server::run(config, toolgate::listener::Listener::Tcp(listener), None, async {})
            .await
            .unwrap_err();
    assert!(
        refused.to_string().starts_with("tool `write`: input_schema: not a valid JSON Schema"),
        "{refused}"
    );

    let mut app = app(&file, None).await;
    std::fs::write(&file, "{ not json").unwrap();
    let reload = AdminClient::new(app.channel.clone()).reload_policy(ReloadPolicyRequest {}).await;
    let still = write(&mut app, r#"{"path": "/etc/passwd", "mode": "append"}"#).await;

    let refused = reload.unwrap_err();
    assert_eq!(refused.code(), Code::FailedPrecondition);
    assert!(refused.message().contains("is not JSON"), "{}", refused.message());
    assert_eq!(still.outcome(), Outcome::Deny, "the schema in force stays");
    app.stop().await;
}
