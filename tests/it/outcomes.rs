//! The outcomes beyond allow and deny, reached from policy annotations, end to end.

use toolgate::proto::{DecideResponse, ExecuteRequest, ExecutionStatus, Outcome};

use crate::helpers::{TestApp, request, rows, spawn_app_with};

const POLICY: &str = r#"
@id("permit-all")
permit (principal, action, resource);

@id("deploys-need-approval")
@reason("deploys need a human: {tool}")
@outcome("require_approval")
forbid (principal, action == Action::"release.deploy", resource);

@id("migrations-run-dry")
@reason("migrations run as a dry run first")
@outcome("dry_run")
forbid (principal, action == Action::"db.migrate", resource);

@id("rm-is-interactive")
@reason("rm asks before it deletes")
@outcome("rewrite")
@rewrite("{\"interactive\": true, \"force\": null}")
forbid (principal, action == Action::"fs.delete", resource);

@id("no-rm-of-root")
@reason("never delete /")
forbid (principal, action == Action::"fs.delete", resource)
when { context.harness has target && context.harness.target == "/" };
"#;

async fn app() -> TestApp {
    spawn_app_with(|c| {
        // Beside the test's database, in its temporary directory.
        let policy = c.db.with_file_name("outcomes.cedar");
        std::fs::write(&policy, POLICY).unwrap();
        c.policy = Some(policy);
        c.tools = toml::from_str(
            "[deploy]\nsafety = \"bash\"\naction = \"release.deploy\"\n\
             [migrate]\nsafety = \"write\"\naction = \"db.migrate\"\n\
             [rm]\nsafety = \"write\"\naction = \"fs.delete\"\n",
        )
        .unwrap();
    })
    .await
}

async fn decide(app: &mut TestApp, tool: &str, args: &str) -> DecideResponse {
    let mut req = request(tool);
    req.args_json = args.into();
    app.decide(req).await
}

async fn execute(app: &mut TestApp, decision: &DecideResponse, args: &str) -> String {
    let report = ExecuteRequest {
        decision_id: decision.decision_id.clone(),
        args_json: args.into(),
        status: ExecutionStatus::Ok as i32,
        output: Some("done".into()),
        ..Default::default()
    };
    app.client.execute(report).await.unwrap().into_inner().violation
}

#[tokio::test]
async fn an_annotated_forbid_requires_approval_and_nothing_may_run_yet() {
    let mut app = app().await;

    let answer = decide(&mut app, "deploy", r#"{"env":"prod"}"#).await;
    let violation = execute(&mut app, &answer, r#"{"env":"prod"}"#).await;

    assert_eq!(answer.outcome(), Outcome::RequireApproval);
    assert_eq!(answer.reason, "deploys need a human: deploy");
    assert_eq!(answer.policy_ids, ["deploys-need-approval"]);
    assert_eq!(violation, "the call required approval and was not approved");
}

#[tokio::test]
async fn an_annotated_forbid_asks_for_a_dry_run_which_may_be_reported() {
    let mut app = app().await;

    let answer = decide(&mut app, "migrate", r#"{"to":"v42"}"#).await;
    let violation = execute(&mut app, &answer, r#"{"to":"v42"}"#).await;

    assert_eq!(answer.outcome(), Outcome::DryRun);
    assert_eq!(answer.reason, "migrations run as a dry run first");
    assert_eq!(violation, "");
}

#[tokio::test]
async fn a_rewrite_returns_the_patched_arguments_and_expects_them_at_execute() {
    let mut app = app().await;
    let original = r#"{"path":"build/","force":true}"#;

    let answer = decide(&mut app, "rm", original).await;
    let with_rewritten = execute(&mut app, &answer, &answer.rewritten_args_json).await;
    let again = decide(&mut app, "rm", original).await;
    let with_original = execute(&mut app, &again, original).await;

    assert_eq!(answer.outcome(), Outcome::Rewrite);
    assert_eq!(answer.rewritten_args_json, r#"{"interactive":true,"path":"build/"}"#);
    assert_eq!(answer.policy_ids, ["rm-is-interactive"]);
    assert_eq!(with_rewritten, "");
    assert!(with_original.starts_with("the arguments' hash differs"), "{with_original}");
    let decision = rows(&app.db)
        .into_iter()
        .find(|r| r.kind == "decision" && r.outcome.as_deref() == Some("rewrite"));
    assert!(decision.is_some());
}

#[tokio::test]
async fn a_plain_forbid_beside_an_annotated_one_still_denies() {
    let mut app = app().await;
    let mut req = request("rm");
    req.args_json = r#"{"path":"/"}"#.into();
    req.context_json = r#"{"target":"/"}"#.into();

    let answer = app.decide(req).await;

    assert_eq!(answer.outcome(), Outcome::Deny);
    assert_eq!(answer.policy_ids, ["rm-is-interactive", "no-rm-of-root"]);
    assert_eq!(answer.rewritten_args_json, "");
}
