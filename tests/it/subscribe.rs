//! `Audit/Subscribe` and `toolgate tail`: the events from an old seq, then each new one as it
//! commits, and after a restart from where the consumer stopped, with no gap and no duplicate.

use std::time::Duration;

use tokio_stream::StreamExt;
use toolgate::config::Config;
use toolgate::proto::audit_client::AuditClient;
use toolgate::proto::{Event, Filter, SubscribeRequest};

use crate::helpers::{TestApp, request, start, toolgate_async};

async fn subscribe(app: &TestApp, from_seq: u64, kind: &str) -> tonic::Streaming<Event> {
    let filter = Filter { kind: kind.into(), ..Default::default() };
    let request = SubscribeRequest { from_seq, filter: Some(filter) };
    AuditClient::new(app.channel.clone()).subscribe(request).await.unwrap().into_inner()
}

async fn next(events: &mut tonic::Streaming<Event>) -> Event {
    tokio::time::timeout(Duration::from_secs(10), events.next())
        .await
        .expect("an event within 10 s")
        .expect("the stream open")
        .unwrap()
}

#[tokio::test]
async fn a_subscriber_gets_the_old_events_then_the_new_and_resumes_after_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    let config = Config { db: dir.path().join("trail.db"), ..Config::default() };
    let mut app = start(config.clone(), dir).await;
    for _ in 0..3 {
        app.decide(request("read")).await;
    }

    let mut all = subscribe(&app, 1, "").await;
    let mut decisions = subscribe(&app, 3, "decision").await;
    let mut seen = Vec::new();
    for _ in 0..4 {
        seen.push(next(&mut all).await.seq);
    }
    let old: Vec<_> = [next(&mut decisions).await, next(&mut decisions).await]
        .iter()
        .map(|e| (e.seq, e.kind.clone()))
        .collect();
    let live = app.decide(request("read")).await;
    let got = next(&mut all).await;
    let got_decision = next(&mut decisions).await;

    assert_eq!(seen, [1, 2, 3, 4], "policy_loaded and three decisions, in order");
    assert_eq!(old, [(3, "decision".to_owned()), (4, "decision".to_owned())]);
    assert_eq!((got.seq, got.decision_id.as_deref()), (live.seq, Some(live.decision_id.as_str())));
    assert_eq!(got_decision.seq, live.seq);
    seen.push(got.seq);

    // The server stops: the stream ends, and the shutdown does not wait for it.
    let stopped = tokio::time::Instant::now();
    let (dir, _) = app.stop().await;
    assert!(stopped.elapsed() < Duration::from_secs(5), "{:?}", stopped.elapsed());
    let ended = tokio::time::timeout(Duration::from_secs(5), all.next()).await.unwrap();
    assert!(!matches!(ended, Some(Ok(_))), "{ended:?}");

    let mut app = start(config, dir).await;
    app.decide(request("read")).await;
    let mut resumed = subscribe(&app, seen.last().unwrap() + 1, "").await;
    for _ in 0..2 {
        seen.push(next(&mut resumed).await.seq);
    }
    assert_eq!(seen, (1..=7).collect::<Vec<_>>(), "no gap, no duplicate");
    app.stop().await;
}

#[tokio::test]
async fn tail_prints_the_latest_events_and_follows_a_server() {
    let dir = tempfile::tempdir().unwrap();
    let config = Config { db: dir.path().join("trail.db"), ..Config::default() };
    let mut app = start(config, dir).await;
    for _ in 0..25 {
        app.decide(request("read")).await;
    }
    let db = app.db.display().to_string();

    let out = toolgate_async(&["tail", "--db", &db, "--json"]).await;
    let lines: Vec<serde_json::Value> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    assert_eq!(lines.len(), 20, "the last 20");
    assert_eq!(lines.last().unwrap()["seq"], 26);

    let mut follower = tokio::process::Command::new(env!("CARGO_BIN_EXE_toolgate"))
        .args(["tail", "--server", &app.url, "--follow", "--kind", "decision", "--from-seq", "26"])
        .stdout(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let live = app.decide(request("read")).await;
    let mut stdout = tokio::io::BufReader::new(follower.stdout.take().unwrap());
    let mut lines = Vec::new();
    for _ in 0..2 {
        let mut line = String::new();
        let read = tokio::io::AsyncBufReadExt::read_line(&mut stdout, &mut line);
        tokio::time::timeout(Duration::from_secs(10), read).await.unwrap().unwrap();
        lines.push(line);
    }
    assert!(lines[0].starts_with("26  "), "{lines:?}");
    assert!(lines[1].starts_with(&format!("{}  ", live.seq)), "{lines:?}");
    follower.kill().await.unwrap();
    app.stop().await;
}
