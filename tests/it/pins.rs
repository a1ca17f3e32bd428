//! Tool definitions pinned on the trail (`Gate/DefineTools`): the first definition of a tool is
//! pinned, a changed one is recorded once and its calls wait for an approver, whose approval
//! pins it; the pins survive a restart.

use std::collections::HashMap;

use toolgate::config::Config;
use toolgate::proto::approvals_client::ApprovalsClient;
use toolgate::proto::{
    DecideResponse, DefineToolsRequest, DefineToolsResponse, Outcome, ToolDefinition,
    VerdictRequest,
};

use crate::helpers::{TestApp, request, rows, start};

const TOOL: &str = "mcp__fs__read_file";

/// A definition whose hash and description's hash are made of `c`.
fn definition(c: char) -> ToolDefinition {
    ToolDefinition {
        tool: TOOL.into(),
        hash: c.to_string().repeat(64),
        parts: HashMap::from([
            ("description".to_owned(), c.to_string().repeat(64)),
            ("inputSchema".to_owned(), "f".repeat(64)),
        ]),
    }
}

async fn define(app: &mut TestApp, c: char) -> DefineToolsResponse {
    let request = DefineToolsRequest {
        actor: request(TOOL).actor,
        session_id: "s1".into(),
        tools: vec![definition(c)],
    };
    app.client.define_tools(request).await.unwrap().into_inner()
}

async fn call(app: &mut TestApp, c: char) -> DecideResponse {
    let mut req = request(TOOL);
    req.tool_definition = c.to_string().repeat(64);
    app.decide(req).await
}

fn config(dir: &tempfile::TempDir) -> Config {
    let policy = dir.path().join("permit.cedar");
    std::fs::write(&policy, "@id(\"all\") permit (principal, action, resource);").unwrap();
    Config { db: dir.path().join("trail.db"), policy: Some(policy), ..Config::default() }
}

#[tokio::test]
async fn a_changed_definition_waits_for_an_approver_whose_approval_pins_it() {
    let dir = tempfile::tempdir().unwrap();
    let config = config(&dir);
    let mut app = start(config.clone(), dir).await;

    let first = define(&mut app, 'a').await;
    let again = define(&mut app, 'a').await;
    let allowed = call(&mut app, 'a').await;
    let changed = define(&mut app, 'b').await;
    let changed_again = define(&mut app, 'b').await;
    let held = call(&mut app, 'b').await;

    assert!(first.changed.is_empty() && again.changed.is_empty());
    assert_eq!(allowed.outcome(), Outcome::Allow);
    assert_eq!(changed.changed.len(), 1);
    assert_eq!(
        (changed.changed[0].tool.as_str(), &changed.changed[0].parts[..]),
        (TOOL, &["description".to_owned()][..])
    );
    assert_eq!(changed_again.changed, changed.changed);
    assert_eq!(held.outcome(), Outcome::RequireApproval);
    assert_eq!(
        held.reason,
        format!(
            "the definition of `{TOOL}` changed since it was pinned (description): an approver \
             must accept it"
        )
    );
    let defined: Vec<_> = rows(&app.db).into_iter().filter(|r| r.kind == "tool_defined").collect();
    assert_eq!(defined.len(), 2, "each definition is recorded once");
    assert_eq!(defined[0].args_hash.as_deref(), Some(&*"a".repeat(64)));
    assert_eq!(
        defined[1].reason.as_deref(),
        Some("changed since pinned (description): not in force until an approver accepts it")
    );

    let mut approvals = ApprovalsClient::new(app.channel.clone());
    let verdict = VerdictRequest {
        decision_id: held.decision_id.clone(),
        approver: "bob".into(),
        comment: "the new description is fine".into(),
    };
    approvals.approve(verdict).await.unwrap();
    let now_allowed = call(&mut app, 'b').await;
    let old_held = call(&mut app, 'a').await;

    assert_eq!(now_allowed.outcome(), Outcome::Allow);
    assert_eq!(old_held.outcome(), Outcome::RequireApproval, "the old one is no longer in force");
    let accepted = rows(&app.db).into_iter().rfind(|r| r.kind == "tool_defined").unwrap();
    assert_eq!(accepted.actor_id.as_deref(), Some("bob"));
    assert_eq!(accepted.decision_id.as_deref(), Some(held.decision_id.as_str()));
    let decision = rows(&app.db)
        .into_iter()
        .find(|r| r.decision_id.as_deref() == Some(now_allowed.decision_id.as_str()))
        .unwrap();
    assert!(
        decision.request.unwrap().contains(&format!(r#""tool_definition":"{}""#, "b".repeat(64)))
    );

    let (dir, _) = app.stop().await;
    let mut app = start(config, dir).await;
    assert_eq!(call(&mut app, 'b').await.outcome(), Outcome::Allow, "pins survive a restart");
    assert_eq!(call(&mut app, 'a').await.outcome(), Outcome::RequireApproval);
    assert_eq!(crate::helpers::verify(&app.db).0, 0);
    app.stop().await;
}

#[tokio::test]
async fn a_call_that_names_no_definition_is_not_held_and_a_malformed_one_refused() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = start(config(&dir), dir).await;
    define(&mut app, 'a').await;
    define(&mut app, 'b').await;

    let unnamed = app.decide(request(TOOL)).await;
    let mut bad = request(TOOL);
    bad.tool_definition = "not a hash".into();
    let refused = app.client.decide(bad).await.unwrap_err();

    assert_eq!(unnamed.outcome(), Outcome::Allow);
    assert_eq!(refused.code(), tonic::Code::InvalidArgument);
    assert!(refused.message().starts_with("tool_definition"), "{}", refused.message());
    app.stop().await;
}

#[tokio::test]
async fn a_changed_definition_denies_a_rewrite_and_is_never_accepted_by_a_timeout() {
    let dir = tempfile::tempdir().unwrap();
    let mut config = config(&dir);
    let policy = dir.path().join("rewrite.cedar");
    std::fs::write(
        &policy,
        r#"@id("all") permit (principal, action, resource);
        @id("quiet") @outcome("rewrite") @rewrite("{\"quiet\": true}")
        forbid (principal, action, resource) when { context.resource.id == "rewrite-me" };"#,
    )
    .unwrap();
    config.policy = Some(policy);
    config.approvals.ttl_seconds = 1;
    config.approvals.on_timeout = toolgate::config::TimeoutVerdict::Allow;
    let mut app = start(config, dir).await;
    define(&mut app, 'a').await;
    define(&mut app, 'b').await;

    let mut rewrite = request(TOOL);
    rewrite.tool_definition = "b".repeat(64);
    rewrite.resource =
        Some(toolgate::proto::Resource { id: "rewrite-me".into(), ..Default::default() });
    let rewritten = app.decide(rewrite).await;
    let held = call(&mut app, 'b').await;
    let mut expired = None;
    for _ in 0..100 {
        expired = rows(&app.db).into_iter().find(|r| r.kind == "approval_expired");
        if expired.is_some() {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }

    assert_eq!(rewritten.outcome(), Outcome::Deny, "{}", rewritten.reason);
    assert!(rewritten.reason.contains("a rewritten call is not run"), "{}", rewritten.reason);
    assert_eq!(held.outcome(), Outcome::RequireApproval);
    let expired = expired.expect("the approval expires");
    assert_eq!(expired.outcome.as_deref(), Some("deny"), "on_timeout = allow does not accept it");
    assert_eq!(call(&mut app, 'b').await.outcome(), Outcome::RequireApproval, "still not in force");
    app.stop().await;
}

#[tokio::test]
async fn a_gateway_call_that_names_no_definition_of_a_pinned_tool_is_held() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = start(config(&dir), dir).await;
    let from_gateway = || {
        let mut req = request(TOOL);
        req.context_json = r#"{"harness": "mcp"}"#.into();
        req
    };
    let before = app.decide(from_gateway()).await;
    define(&mut app, 'a').await;

    let unnamed = app.decide(from_gateway()).await;
    let other_harness = app.decide(request(TOOL)).await;

    assert_eq!(before.outcome(), Outcome::Allow, "nothing pinned yet");
    assert_eq!(unnamed.outcome(), Outcome::RequireApproval);
    assert!(unnamed.reason.contains("names no definition"), "{}", unnamed.reason);
    assert_eq!(other_harness.outcome(), Outcome::Allow, "a hook's call names no definition");
    app.stop().await;
}
