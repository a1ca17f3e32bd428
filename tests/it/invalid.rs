//! Bad input: INVALID_ARGUMENT naming the field, and an `invalid_request` event on the trail.

use tonic::Code;
use toolgate::proto::{Actor, DecideRequest, ExecuteRequest, ExecutionStatus, Resource};

use crate::helpers::{TestApp, request, rows, spawn_app_with, verify};

async fn app() -> TestApp {
    spawn_app_with(|c| {
        c.limits.max_args_bytes = 64;
        c.limits.max_name_bytes = 16;
        c.limits.max_output_bytes = 32;
    })
    .await
}

/// Sends a bad Decide and returns the start of the error message (the field).
async fn refused_decide(app: &mut TestApp, req: DecideRequest) -> String {
    let status = app.client.decide(req).await.unwrap_err();
    assert_eq!(status.code(), Code::InvalidArgument, "{status:?}");
    status.message().to_owned()
}

async fn refused_execute(app: &mut TestApp, req: ExecuteRequest) -> String {
    let status = app.client.execute(req).await.unwrap_err();
    assert_eq!(status.code(), Code::InvalidArgument, "{status:?}");
    status.message().to_owned()
}

#[tokio::test]
async fn each_bad_decide_is_refused_by_field_name_and_recorded() {
    let mut app = app().await;
    let cases: Vec<(&str, DecideRequest)> = vec![
        ("tool: required", DecideRequest { tool: String::new(), ..request("read") }),
        ("session_id: required", DecideRequest { session_id: String::new(), ..request("read") }),
        ("actor.id: required", DecideRequest { actor: None, ..request("read") }),
        ("actor.id: required", DecideRequest { actor: Some(Actor::default()), ..request("read") }),
        (
            "args_json: must be a JSON object",
            DecideRequest { args_json: "[1]".into(), ..request("read") },
        ),
        (
            "args_json: must be a JSON object",
            DecideRequest { args_json: "{".into(), ..request("read") },
        ),
        (
            "context_json: must be a JSON object",
            DecideRequest { context_json: "42".into(), ..request("read") },
        ),
        (
            "args_json: 75 bytes, over the limit of 64",
            DecideRequest {
                args_json: format!(r#"{{"p":"{}"}}"#, "x".repeat(67)),
                ..request("read")
            },
        ),
        (
            "tool: 17 bytes, over the limit of 16",
            DecideRequest { tool: "t".repeat(17), ..request("read") },
        ),
        (
            "actor.kind: must be",
            DecideRequest {
                actor: Some(Actor { id: "a".into(), kind: "robot".into(), ..Default::default() }),
                ..request("read")
            },
        ),
        (
            "action: the registry's action for `read` is `fs.read`, not `fs.write`",
            DecideRequest { action: "fs.write".into(), ..request("read") },
        ),
        (
            "args_json: `args.n`: a number beyond",
            DecideRequest { args_json: r#"{"n": 9007199254740993}"#.into(), ..request("read") },
        ),
        // Texts that a harness could run as different calls, never hashed alike.
        (
            "args_json: `args.n`: the number `1e-400` says more",
            DecideRequest { args_json: r#"{"n": 1e-400}"#.into(), ..request("read") },
        ),
        (
            "args_json: `args.n`: a whole number written as a fraction",
            DecideRequest { args_json: r#"{"n": 1.0}"#.into(), ..request("read") },
        ),
        (
            "args_json: `args.n`: negative zero",
            DecideRequest { args_json: r#"{"n": -0}"#.into(), ..request("read") },
        ),
        (
            "args_json: `args.path`: a key given twice",
            DecideRequest {
                args_json: r#"{"path":"secret.key","path":"ok"}"#.into(),
                ..request("read")
            },
        ),
        (
            "context_json: `context.a.0.b`: a key given twice",
            DecideRequest { context_json: r#"{"a":[{"b":1,"b":2}]}"#.into(), ..request("read") },
        ),
        (
            "resource.classification: must be",
            DecideRequest {
                resource: Some(Resource { classification: "ultra".into(), ..Default::default() }),
                ..request("read")
            },
        ),
    ];
    let count = cases.len();

    for (expected, req) in cases {
        let message = refused_decide(&mut app, req).await;
        assert!(message.starts_with(expected), "{message:?} does not start with {expected:?}");
    }

    let refused: Vec<_> =
        rows(&app.db).into_iter().filter(|r| r.kind == "invalid_request").collect();
    assert_eq!(refused.len(), count);
    assert_eq!(refused[0].error.as_deref(), Some("tool: required"));
    assert_eq!(refused[0].request.as_deref(), Some(r#"{"rpc":"toolgate.v1.Gate/Decide"}"#));
    assert!(rows(&app.db).iter().all(|r| r.kind != "decision"));
}

/// The attack of the review: `{amount: 0.1}` decided, then run as a longer decimal that a
/// double reads as 0.1. Its report is refused by the path, and recorded.
#[tokio::test]
async fn a_decided_amount_reported_with_more_digits_than_a_double_holds_is_refused() {
    let mut app = spawn_app_with(|_| {}).await;
    let mut read = request("read");
    read.args_json = r#"{"amount": 0.1}"#.into();
    let decision = app.decide(read).await;
    let report = ExecuteRequest {
        decision_id: decision.decision_id,
        args_json: r#"{"amount": 0.1000000000000000055511151231257827}"#.into(),
        status: ExecutionStatus::Ok as i32,
        ..Default::default()
    };
    let message = refused_execute(&mut app, report).await;
    assert!(
        message.starts_with(
            "args_json: `args.amount`: the number `0.1000000000000000055511151231257827`"
        ),
        "{message}"
    );
    assert!(rows(&app.db).iter().any(|r| r.kind == "invalid_request"));
}

#[tokio::test]
async fn each_bad_execute_is_refused_by_field_name_and_recorded() {
    let mut app = app().await;
    let ok = ExecuteRequest {
        decision_id: "d".into(),
        status: ExecutionStatus::Ok as i32,
        ..Default::default()
    };
    let cases: Vec<(&str, ExecuteRequest)> = vec![
        (
            "decision_id: required (or idempotency_key)",
            ExecuteRequest { decision_id: String::new(), ..ok.clone() },
        ),
        ("status: required", ExecuteRequest { status: 0, ..ok.clone() }),
        ("status: unknown value 7", ExecuteRequest { status: 7, ..ok.clone() }),
        (
            "output: 33 bytes, over the limit of 32",
            ExecuteRequest { output: Some("o".repeat(33)), ..ok.clone() },
        ),
        (
            "args_json: must be a JSON object",
            ExecuteRequest { args_json: "null".into(), ..ok.clone() },
        ),
        ("duration_us: out of range", ExecuteRequest { duration_us: u64::MAX, ..ok.clone() }),
    ];

    for (expected, req) in cases {
        let message = refused_execute(&mut app, req).await;
        assert!(message.starts_with(expected), "{message:?} does not start with {expected:?}");
    }

    let refused: Vec<_> =
        rows(&app.db).into_iter().filter(|r| r.kind == "invalid_request").collect();
    assert_eq!(refused.len(), 6);
    assert_eq!(refused[0].request.as_deref(), Some(r#"{"rpc":"toolgate.v1.Gate/Execute"}"#));
    let (code, _) = verify(&app.db);
    assert_eq!(code, 0);
}

#[tokio::test]
async fn a_refused_request_stores_no_part_of_its_payload() {
    let mut app = app().await;
    let req = DecideRequest { args_json: r#"{"secret":"hunter2"#.into(), ..request("read") };

    refused_decide(&mut app, req).await;

    let refused = rows(&app.db).into_iter().find(|r| r.kind == "invalid_request").unwrap();
    assert!(!refused.error.unwrap().contains("hunter2"));
}

/// A refusal is found beside what it was about: a bad Decide under its session, actor and
/// tool; a bad Execute under its decision, with the decision's session, actor and tool.
#[tokio::test]
async fn a_refusal_carries_the_session_or_decision_it_was_about() {
    let mut app = spawn_app_with(|c| c.limits.max_output_bytes = 32).await;
    let decision = app.decide(request("read")).await;
    let bad_decide = DecideRequest { args_json: "[1]".into(), ..request("read") };
    refused_decide(&mut app, bad_decide).await;
    let oversized = ExecuteRequest {
        decision_id: decision.decision_id.clone(),
        status: ExecutionStatus::Ok as i32,
        output: Some("x".repeat(33)),
        ..Default::default()
    };
    let field = refused_execute(&mut app, oversized).await;
    assert!(field.starts_with("output:"), "{field}");
    // A name past the limit is not kept.
    let long_session =
        DecideRequest { args_json: "[1]".into(), session_id: "s".repeat(1025), ..request("read") };
    refused_decide(&mut app, long_session).await;

    let conn = rusqlite::Connection::open(&app.db).unwrap();
    let mut stmt = conn
        .prepare("SELECT session_id, actor_id, tool, decision_id FROM events WHERE kind = 'invalid_request' ORDER BY seq")
        .unwrap();
    let refusals: Vec<[Option<String>; 4]> = stmt
        .query_map([], |r| Ok([r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?]))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    let (session, actor) = (Some(request("read").session_id), Some("alice".to_owned()));
    assert_eq!(refusals[0], [session.clone(), actor.clone(), Some("read".into()), None]);
    assert_eq!(
        refusals[1],
        [session, actor.clone(), Some("read".into()), Some(decision.decision_id)]
    );
    assert_eq!(refusals[2], [None, actor, Some("read".into()), None]);
}
