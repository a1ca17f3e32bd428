//! `Gate/NeverAllowed`: which tools no call could make allowed, by Cedar's partial evaluation
//! against the policy in force, with the request's unknowns left unknown.

use toolgate::proto::{Actor, NeverAllowedRequest, RunOptions, ToolAction};

use crate::helpers::{rows, spawn_app_with};

const POLICY: &str = r#"
@id("permit-registered")
permit (principal, action, resource) when { context.tool.safety != "unknown" };

@id("no-writes-for-interns")
forbid (principal == Actor::"intern", action, resource) when { context.tool.safety == "write" };

@id("deploys-need-approval")
@outcome("require_approval")
forbid (principal, action == Action::"release.deploy", resource);

@id("no-secrets")
forbid (principal, action, resource) when { context.resource.id like "*secret*" };

@id("quiet-hours")
forbid (principal, action == Action::"fs.write", resource) when { context.time.hour >= 22 };
"#;

fn question(actor: &str, tools: &[&str], allow_write: bool) -> NeverAllowedRequest {
    NeverAllowedRequest {
        actor: Some(Actor { id: actor.into(), ..Default::default() }),
        tools: tools
            .iter()
            .map(|t| ToolAction { tool: (*t).into(), action: String::new() })
            .collect(),
        options: Some(RunOptions { allow_write, ..Default::default() }),
    }
}

#[tokio::test]
async fn only_tools_no_call_could_make_allowed_are_named() {
    let mut app = spawn_app_with(|c| {
        let policy = c.db.with_file_name("never.cedar");
        std::fs::write(&policy, POLICY).unwrap();
        c.policy = Some(policy);
        c.tools =
            toml::from_str("[deploy]\nsafety = \"bash\"\naction = \"release.deploy\"\n").unwrap();
    })
    .await;
    let tools = ["read", "write", "deploy", "unregistered"];
    let ask = |actor: &str, allow_write: bool| question(actor, &tools, allow_write);
    let never = app.client.never_allowed(ask("alice", true)).await.unwrap().into_inner().tools;
    // `write` may be denied by the hour or the resource, but not always; `deploy` needs an
    // approval, which may come; an unregistered tool no policy permits.
    assert_eq!(never, ["unregistered"]);
    let never = app.client.never_allowed(ask("intern", true)).await.unwrap().into_inner().tools;
    assert_eq!(never, ["write", "unregistered"]);
    let events = rows(&app.db).len();

    let status = app.client.never_allowed(question("", &tools, true)).await.unwrap_err();
    assert_eq!(status.code(), tonic::Code::InvalidArgument);
    assert!(status.message().starts_with("actor.id"), "{}", status.message());
    let status = app.client.never_allowed(question("a", &["read", ""], true)).await.unwrap_err();
    assert!(status.message().starts_with("tools[1].tool"), "{}", status.message());
    let kinds: Vec<_> = rows(&app.db).into_iter().skip(events).map(|r| r.kind).collect();
    assert_eq!(
        kinds,
        ["invalid_request", "invalid_request"],
        "a question is not recorded; bad input is"
    );
    app.stop().await;
}
