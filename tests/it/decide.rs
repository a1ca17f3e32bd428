//! Decide against the embedded default policy and a replacement policy.

use toolgate::proto::{ExecutionPlan, Outcome, RunOptions};

use crate::helpers::{request, rows, spawn_app, spawn_app_with, with_options};

#[tokio::test]
async fn decide_allows_read_tool_with_default_limits() {
    let mut app = spawn_app().await;

    let answer = app.decide(request("read")).await;

    assert_eq!(answer.outcome(), Outcome::Allow);
    assert_eq!(answer.policy_ids, ["default.permit_registered_tools"]);
    assert_eq!(answer.max_output_chars, 8000);
    assert_eq!(answer.timeout_ms, 10_000);
    assert_eq!(answer.args_hash.len(), 64);
    assert_eq!(answer.policy_version.len(), 64);
}

#[tokio::test]
async fn decide_denies_write_tool_without_allow_write() {
    let mut app = spawn_app().await;

    let answer = app.decide(request("write")).await;

    assert_eq!(answer.outcome(), Outcome::Deny);
    assert_eq!(answer.reason, "tool requires allow_write=true: write");
    assert_eq!(answer.policy_ids, ["default.write_requires_allow_write"]);
}

#[tokio::test]
async fn decide_allows_write_tool_with_allow_write() {
    let mut app = spawn_app().await;

    let answer = app.decide(with_options(request("edit"), true, false)).await;

    assert_eq!(answer.outcome(), Outcome::Allow);
    assert_eq!(answer.timeout_ms, 30_000);
}

#[tokio::test]
async fn decide_denies_bash_tool_without_allow_bash() {
    let mut app = spawn_app().await;

    let denied = app.decide(with_options(request("bash"), true, false)).await;
    let allowed = app.decide(with_options(request("bash"), false, true)).await;

    assert_eq!(denied.outcome(), Outcome::Deny);
    assert_eq!(denied.reason, "tool requires allow_bash=true: bash");
    assert_eq!(allowed.outcome(), Outcome::Allow);
}

#[tokio::test]
async fn decide_denies_unknown_tool() {
    let mut app = spawn_app().await;

    let answer = app.decide(with_options(request("rm_rf"), true, true)).await;

    assert_eq!(answer.outcome(), Outcome::Deny);
    assert_eq!(answer.reason, "unknown tool: rm_rf");
    assert_eq!(answer.policy_ids, ["default.unknown_tool"]);
}

#[tokio::test]
async fn decide_allows_a_tool_the_configured_registry_adds() {
    let mut app = spawn_app_with(|c| {
        c.tools = toml::from_str("[deploy]\nsafety = \"read_only\"\naction = \"release.status\"")
            .unwrap();
    })
    .await;

    let answer = app.decide(request("deploy")).await;

    assert_eq!(answer.outcome(), Outcome::Allow);
    let stored = rows(&app.db).into_iter().find(|r| r.kind == "decision").unwrap();
    assert_eq!(stored.action.as_deref(), Some("release.status"));
}

#[tokio::test]
async fn decide_takes_the_smaller_of_requested_and_default_limits() {
    let mut app = spawn_app().await;
    let mut smaller = request("read");
    smaller.options = Some(RunOptions { max_output_chars: 100, ..Default::default() });
    smaller.plan = Some(ExecutionPlan { timeout_ms: 500, ..Default::default() });
    let mut larger = request("read");
    larger.options = Some(RunOptions { max_output_chars: 1_000_000, ..Default::default() });

    let small = app.decide(smaller).await;
    let large = app.decide(larger).await;

    assert_eq!((small.max_output_chars, small.timeout_ms), (100, 500));
    assert_eq!(large.max_output_chars, 8000);
}

#[tokio::test]
async fn decision_is_on_disk_when_it_is_answered() {
    let mut app = spawn_app().await;

    let answer = app.decide(request("read")).await;

    let stored = rows(&app.db);
    let row = stored.iter().find(|r| r.seq == answer.seq as i64).unwrap();
    assert_eq!(row.kind, "decision");
    assert_eq!(row.decision_id.as_deref(), Some(answer.decision_id.as_str()));
    assert_eq!(row.outcome.as_deref(), Some("allow"));
}

#[tokio::test]
async fn stored_request_keeps_the_argument_hash_not_the_arguments() {
    let mut app = spawn_app().await;
    let mut secret = request("read");
    secret.args_json = r#"{"path":"/home/alice/.ssh/id_rsa"}"#.into();

    let answer = app.decide(secret).await;

    let stored = rows(&app.db).into_iter().find(|r| r.kind == "decision").unwrap();
    assert_eq!(stored.args_hash, Some(answer.args_hash));
    assert_eq!(stored.request.as_deref(), Some("{}"), "the request beyond its columns");
    assert!(!format!("{stored:?}").contains("id_rsa"));
}

#[tokio::test]
async fn policy_file_replaces_the_default_policy_and_is_recorded() {
    let dir = tempfile::tempdir().unwrap();
    let policy = dir.path().join("strict.cedar");
    std::fs::write(
        &policy,
        "@id(\"only-alice-reads\")\n@reason(\"{actor} may read\")\n\
         permit(principal == Actor::\"alice\", action == Action::\"fs.read\", resource);",
    )
    .unwrap();
    let mut app = spawn_app_with(|c| c.policy = Some(policy)).await;

    let read = app.decide(request("read")).await;
    let ls = app.decide(request("ls")).await;

    assert_eq!((read.outcome(), read.reason.as_str()), (Outcome::Allow, "alice may read"));
    assert_eq!(read.policy_ids, ["only-alice-reads"]);
    assert_eq!(ls.outcome(), Outcome::Deny);
    assert_eq!(ls.reason, "not permitted: no policy permits action `fs.list` with tool `ls`");
    let loaded = rows(&app.db).into_iter().find(|r| r.kind == "policy_loaded").unwrap();
    assert!(loaded.reason.unwrap().contains("strict.cedar"));
}

#[tokio::test]
async fn configured_roles_and_action_groups_reach_the_policy() {
    let mut app = spawn_app_with(|c| {
        let policy = c.db.with_file_name("roles.cedar");
        std::fs::write(
            &policy,
            "@id(\"readers\") permit (principal in Role::\"reader\", action in Action::\"reads\", resource);",
        )
        .unwrap();
        c.policy = Some(policy);
        c.actors = toml::from_str("[alice]\nroles = [\"reader\"]").unwrap();
        c.action_groups = toml::from_str("reads = [\"fs.read\", \"fs.list\"]").unwrap();
    })
    .await;
    let mut bob = request("read");
    bob.actor = Some(toolgate::proto::Actor { id: "bob".into(), ..Default::default() });

    let alice = app.decide(request("ls")).await;
    let bob = app.decide(bob).await;

    assert_eq!(
        (alice.outcome(), alice.policy_ids.as_slice()),
        (Outcome::Allow, &["readers".to_owned()][..])
    );
    assert_eq!(bob.outcome(), Outcome::Deny);
}
