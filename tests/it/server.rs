//! The server around the gate: health, reflection, and failing closed when the trail cannot
//! commit.

use std::time::Duration;

use tonic::Code;
use tonic_health::pb::HealthCheckRequest;
use tonic_health::pb::health_check_response::ServingStatus;
use tonic_health::pb::health_client::HealthClient;
use tonic_reflection::pb::v1::ServerReflectionRequest;
use tonic_reflection::pb::v1::server_reflection_client::ServerReflectionClient;
use tonic_reflection::pb::v1::server_reflection_request::MessageRequest;
use tonic_reflection::pb::v1::server_reflection_response::MessageResponse;
use toolgate::proto::Outcome;

use crate::helpers::{request, rows, spawn_app, spawn_app_with, verify};

#[tokio::test]
async fn health_reports_the_gate_serving() {
    let app = spawn_app().await;
    let mut health = HealthClient::new(app.channel.clone());

    let status = health
        .check(HealthCheckRequest { service: "toolgate.v1.Gate".into() })
        .await
        .unwrap()
        .into_inner();

    assert_eq!(status.status(), ServingStatus::Serving);
}

#[tokio::test]
async fn reflection_lists_the_gate_and_health_services() {
    let app = spawn_app().await;
    let mut reflection = ServerReflectionClient::new(app.channel.clone());
    let ask = ServerReflectionRequest {
        host: String::new(),
        message_request: Some(MessageRequest::ListServices(String::new())),
    };

    let mut answers =
        reflection.server_reflection_info(tokio_stream::iter([ask])).await.unwrap().into_inner();
    let answer = answers.message().await.unwrap().unwrap();

    let Some(MessageResponse::ListServicesResponse(list)) = answer.message_response else {
        panic!("unexpected answer {answer:?}")
    };
    let names: Vec<_> = list.service.into_iter().map(|s| s.name).collect();
    assert!(names.contains(&"toolgate.v1.Gate".to_owned()), "{names:?}");
    assert!(names.contains(&"grpc.health.v1.Health".to_owned()), "{names:?}");
}

/// The clients that speak only reflection's `v1alpha` (Python's grpcio-reflection, older
/// grpcurl) are answered too.
#[tokio::test]
async fn reflection_answers_v1alpha_clients_too() {
    use tonic_reflection::pb::v1alpha::server_reflection_client::ServerReflectionClient;
    use tonic_reflection::pb::v1alpha::server_reflection_request::MessageRequest;
    use tonic_reflection::pb::v1alpha::server_reflection_response::MessageResponse;
    let app = spawn_app().await;
    let mut reflection = ServerReflectionClient::new(app.channel.clone());
    let ask = tonic_reflection::pb::v1alpha::ServerReflectionRequest {
        host: String::new(),
        message_request: Some(MessageRequest::FileContainingSymbol("toolgate.v1.Gate".into())),
    };

    let mut answers =
        reflection.server_reflection_info(tokio_stream::iter([ask])).await.unwrap().into_inner();
    let answer = answers.message().await.unwrap().unwrap();

    let Some(MessageResponse::FileDescriptorResponse(files)) = answer.message_response else {
        panic!("unexpected answer {answer:?}")
    };
    assert!(!files.file_descriptor_proto.is_empty());
}

#[tokio::test]
async fn a_commit_that_does_not_finish_in_time_answers_unavailable_never_allow() {
    let mut app = spawn_app_with(|c| c.writer.commit_timeout_ms = 300).await;
    // Another process holds the database's write lock, so the writer cannot commit.
    let blocker = rusqlite::Connection::open(&app.db).unwrap();
    blocker.execute_batch("BEGIN EXCLUSIVE").unwrap();

    let status = app.client.decide(request("read")).await.unwrap_err();

    assert_eq!(status.code(), Code::Unavailable, "{status:?}");
    assert!(status.message().contains("not confirmed in time; it may still be recorded"));
    blocker.execute_batch("COMMIT").unwrap();
    drop(blocker);
    // Once the lock is gone the gate recovers by itself.
    tokio::time::sleep(Duration::from_millis(100)).await;
    let answer = app.decide(request("read")).await;
    assert_eq!(answer.outcome(), Outcome::Allow);
    // The held decision did land, and the trail says its caller was never told.
    let rows = rows(&app.db);
    let kinds: Vec<_> = rows.iter().map(|r| r.kind.as_str()).collect();
    assert_eq!(kinds, ["policy_loaded", "decision", "undelivered", "decision"]);
    assert_eq!(rows[2].decision_id, rows[1].decision_id);
    assert_eq!(rows[2].actor_id, rows[1].actor_id);
    let reason = rows[2].reason.as_deref().unwrap();
    assert!(
        reason.starts_with("seq 2 (decision) committed after the caller had stopped"),
        "{reason}"
    );
    let (code, out) = verify(&app.db);
    assert_eq!(code, 0, "{out}");
}

#[tokio::test]
async fn a_failed_commit_answers_unavailable_and_leaves_the_chain_intact() {
    let mut app = spawn_app().await;
    app.decide(request("read")).await;
    // A trigger added behind toolgate's back makes one kind of insert fail inside the writer.
    let conn = rusqlite::Connection::open(&app.db).unwrap();
    conn.execute_batch(
        "CREATE TRIGGER poison BEFORE INSERT ON events WHEN NEW.tool = 'poison'
         BEGIN SELECT RAISE(ABORT, 'injected failure'); END;",
    )
    .unwrap();
    let mut poison = request("poison");
    poison.options = None;

    let status = app.client.decide(poison).await.unwrap_err();
    let after = app.decide(request("read")).await;

    assert_eq!(status.code(), Code::Unavailable);
    assert!(!status.message().contains("injected"), "internal errors stay internal");
    assert_eq!(after.seq, 3, "the failed event took no seq");
    assert!(rows(&app.db).iter().all(|r| r.reason.as_deref() != Some("unknown tool: poison")));
    let (code, out) = verify(&app.db);
    assert_eq!(code, 0, "{out}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_start_the_configuration_refuses_leaves_the_trail_as_it_was() {
    let app = spawn_app().await;
    app.client.clone().decide(request("read")).await.unwrap();
    let (dir, db) = app.stop().await;
    let before = rows(&db);
    // A token whose digest is not a SHA-256: refused at start, before the trail is opened.
    let config = dir.path().join("bad.toml");
    std::fs::write(
        &config,
        "[[auth.tokens]]\nid = \"agents\"\nsha256 = \"not-a-digest\"\nroles = [\"agent\"]\n",
    )
    .unwrap();
    let (config, db_arg) = (config.to_str().unwrap().to_owned(), db.to_str().unwrap().to_owned());
    let out =
        crate::helpers::toolgate_async(&["serve", "--config", &config, "--db", &db_arg]).await;
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("sha256"), "{out:?}");
    assert_eq!(rows(&db), before, "no policy_loaded, no event of any kind");
}

/// The status line's code of a raw HTTP/1.1 request to the side port at `side`.
async fn status_of(side: &str, request: &str) -> u16 {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut stream =
        tokio::net::TcpStream::connect(side.trim_start_matches("http://")).await.unwrap();
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut answer = vec![0; 64];
    let read = stream.read(&mut answer).await.unwrap();
    let line = String::from_utf8_lossy(&answer[..read]).to_string();
    line.split(' ').nth(1).and_then(|code| code.parse().ok()).unwrap_or_else(|| panic!("{line}"))
}

/// DNS rebinding: a page on the attacker's domain, resolved to 127.0.0.1, reaches the side port
/// with its own name as the Host; another site's page sends its Origin.
#[tokio::test]
async fn the_side_port_refuses_a_rebound_host_and_a_foreign_origin() {
    let (_app, side) = crate::helpers::spawn_app_with_side_port(|_| {}).await;
    let port = side.rsplit(':').next().unwrap().to_owned();
    let get =
        |host: &str| format!("GET /metrics HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n");
    let hook = |origin: &str| {
        let body = r#"{"hook_event_name":"Notification","session_id":"s"}"#;
        format!(
            "POST /hooks/claude HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nOrigin: {origin}\r\n\
             Content-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
            body.len()
        )
    };

    assert_eq!(status_of(&side, &get(&format!("127.0.0.1:{port}"))).await, 200);
    assert_eq!(status_of(&side, &get(&format!("localhost:{port}"))).await, 200);
    assert_eq!(status_of(&side, &get(&format!("attacker.example:{port}"))).await, 403);
    assert_eq!(status_of(&side, &hook("https://attacker.example")).await, 403);
    assert_eq!(status_of(&side, &hook(&format!("http://127.0.0.1:{port}"))).await, 200);
}

#[tokio::test]
async fn a_damaged_index_file_is_built_again_and_the_server_decides() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("trail.db");
    std::fs::write(dir.path().join("trail.db-index"), "not a database, nor anything else").unwrap();
    let config = toolgate::config::Config { db: db.clone(), ..toolgate::config::Config::default() };
    let mut app = crate::helpers::start(config, dir).await;
    let decided = app.client.decide(request("read")).await.unwrap().into_inner();
    assert_eq!(decided.outcome(), Outcome::Allow);
    let index = std::fs::read(db.with_file_name("trail.db-index")).unwrap();
    assert!(index.starts_with(b"SQLite format 3\0"), "the index is a database again");
}
