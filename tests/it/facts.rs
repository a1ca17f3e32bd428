//! Stateful facts through the default policy: loops and session caps, and their survival
//! across a restart.

use toolgate::config::Config;
use toolgate::proto::Outcome;

use crate::helpers::{request, spawn_app, spawn_app_with, start};

#[tokio::test]
async fn the_sixth_identical_call_is_denied_as_a_loop() {
    let mut app = spawn_app().await;

    let mut outcomes = Vec::new();
    for _ in 0..6 {
        outcomes.push(app.decide(request("read")).await);
    }

    assert!(outcomes[..5].iter().all(|a| a.outcome() == Outcome::Allow));
    assert_eq!(outcomes[5].outcome(), Outcome::Deny);
    assert_eq!(outcomes[5].policy_ids, ["default.loop"]);
    assert!(outcomes[5].reason.starts_with("loop detected"), "{}", outcomes[5].reason);
}

#[tokio::test]
async fn six_calls_with_different_arguments_are_not_a_loop() {
    let mut app = spawn_app().await;

    for i in 0..6 {
        let mut req = request("read");
        req.args_json = format!(r#"{{"path":"src/file{i}.rs"}}"#);
        assert_eq!(app.decide(req).await.outcome(), Outcome::Allow, "call {i}");
    }
    let mut other_session = request("read");
    other_session.session_id = "s2".into();
    assert_eq!(app.decide(other_session).await.outcome(), Outcome::Allow);
}

#[tokio::test]
async fn the_counts_survive_a_restart() {
    let mut app = spawn_app().await;
    for _ in 0..5 {
        app.decide(request("read")).await;
    }
    let (dir, db) = app.stop().await;

    let mut app = start(Config { db, ..Config::default() }, dir).await;
    let sixth = app.decide(request("read")).await;

    assert_eq!(sixth.outcome(), Outcome::Deny);
    assert_eq!(sixth.policy_ids, ["default.loop"]);
}

#[tokio::test]
async fn a_session_stops_at_its_task_types_cap() {
    let mut app = spawn_app_with(|c| {
        c.session_caps.insert("review".into(), 3);
    })
    .await;

    let mut answers = Vec::new();
    for i in 0..4 {
        let mut req = request("read");
        req.task_type = "review".into();
        req.args_json = format!(r#"{{"n":{i}}}"#);
        answers.push(app.decide(req).await);
    }

    assert_eq!(answers[2].outcome(), Outcome::Allow);
    assert_eq!(answers[3].outcome(), Outcome::Deny);
    assert_eq!(answers[3].reason, "session call cap reached for task type review");
}
