//! SIGTERM under load: the server stops taking calls, says it is not ready, commits what it
//! holds, exits 0 within its grace period, and a restart continues the chain.

use std::io::{Read, Write};
use std::time::{Duration, Instant};

use super::load::Load;
use super::{Proc, decisions_on_trail};
use crate::helpers::{request, verify};

/// `GET /readyz` on the side port: the status code, or `None` when nothing answers.
fn readyz(port: u16) -> Option<u16> {
    let mut stream = std::net::TcpStream::connect(("127.0.0.1", port)).ok()?;
    stream.set_read_timeout(Some(Duration::from_secs(1))).ok()?;
    stream.write_all(b"GET /readyz HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n").ok()?;
    let mut answer = String::new();
    stream.read_to_string(&mut answer).ok()?;
    answer.split_whitespace().nth(1)?.parse().ok()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_under_load_commits_what_it_holds_and_exits_cleanly() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("trail.db");
    let http = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    // Slow commits keep a batch in flight when the signal comes.
    let toml = format!("http_listen = \"127.0.0.1:{http}\"\nshutdown_grace_ms = 5000\n");
    let mut proc = Proc::start_slow(&db, &toml, 500).await;
    let load = Load::start(&proc, 8).await;
    tokio::time::sleep(Duration::from_millis(600)).await;
    assert_eq!(readyz(http), Some(200));
    // One call surely in flight when the signal comes (the load's clients may be between
    // calls on a busy machine): its commit waits 500 ms.
    let mut gate = proc.gate().await;
    let in_flight = tokio::spawn(async move { gate.decide(request("read")).await });
    tokio::time::sleep(Duration::from_millis(100)).await;

    proc.sigterm();
    let signalled = Instant::now();
    let mut saw_not_ready = false;
    let status = loop {
        if let Some(status) = proc.exited_within(Duration::from_millis(10)) {
            break status;
        }
        saw_not_ready |= readyz(http) == Some(503);
        assert!(signalled.elapsed() < Duration::from_secs(8), "exits within the grace period");
    };
    let stopped_in = signalled.elapsed();
    let tally = load.stop().await;
    let in_flight = in_flight.await.unwrap();
    assert!(in_flight.is_ok(), "the call in flight was answered: {in_flight:?}");

    let (on_trail, contiguous) = decisions_on_trail(&db);
    let lost = tally.acked.iter().filter(|a| !on_trail.contains(a)).count();
    println!(
        "SIGTERM under load: exited {status} after {stopped_in:?}, {} acknowledged, {lost} lost, \
         not ready while draining: {saw_not_ready}",
        tally.acked.len()
    );
    assert!(status.success());
    assert!(saw_not_ready, "/readyz said 503 while the server drained");
    assert_eq!(lost, 0);
    assert!(contiguous);

    let last = on_trail.last().map_or(0, |(seq, _)| *seq);
    let proc = Proc::start(&db, "").await;
    let answer = proc.gate().await.decide(request("read")).await.unwrap().into_inner();
    drop(proc);
    assert!(answer.seq as i64 > last, "the chain continues");
    assert!(decisions_on_trail(&db).1);
    assert_eq!(verify(&db).0, 0);
}

/// An ingest service that takes the connection and never answers: SIGTERM still stops the
/// sidecar within its bound, and the events stay on the trail (they ship after the restart).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hung_ingest_service_never_holds_the_stop_past_its_bound() {
    let hung = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = hung.local_addr().unwrap().port();
    let (accepted, took) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut held = Vec::new();
        for stream in hung.incoming().flatten() {
            held.push(stream);
            let _ = accepted.send(());
        }
    });
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("trail.db");
    let token = dir.path().join("node.token");
    std::fs::write(&token, format!("tgnode_{}", "A".repeat(43))).unwrap();
    let toml = format!(
        "[fleet]\nnode_id = \"a\"\ningest_url = \"http://127.0.0.1:{port}\"\ntoken_file = \"{}\"\n",
        token.display()
    );
    let mut proc = Proc::start(&db, &toml).await;
    let mut gate = proc.gate().await;
    for _ in 0..5 {
        gate.decide(request("read")).await.unwrap();
    }
    took.recv_timeout(Duration::from_secs(10)).unwrap();
    let stopping = Instant::now();
    proc.sigterm();
    let exited = proc.exited_within(Duration::from_secs(15));
    println!("stopped {:?} after SIGTERM with the ingest hung", stopping.elapsed());
    assert!(exited.is_some_and(|status| status.success()), "{exited:?}");
    assert!(stopping.elapsed() < Duration::from_secs(10), "{:?}", stopping.elapsed());
    let (decisions, contiguous) = decisions_on_trail(&db);
    assert!(contiguous && decisions.len() == 5, "{decisions:?}");
}
