//! Connection floods against the real server: peers that open connections and say nothing, or
//! a byte at a time, hold at most the port's caps, are closed at the handshake timeout, and
//! never keep `Decide` from its file descriptors.

use std::net::SocketAddr;
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpSocket, TcpStream};

use super::Proc;
use crate::helpers::request;

/// `count` connections to `to` from the loopback address `from`, each saying nothing.
async fn idle(from: &str, to: SocketAddr, count: usize) -> Vec<TcpStream> {
    let mut held = Vec::new();
    for _ in 0..count {
        let socket = TcpSocket::new_v4().unwrap();
        socket.bind(format!("{from}:0").parse().unwrap()).unwrap();
        if let Ok(stream) = socket.connect(to).await {
            held.push(stream);
        }
    }
    held
}

/// Whether the server closes `stream` within `wait` (what it says first, an HTTP/2 server's
/// own settings, read and set aside).
async fn closed(stream: &mut TcpStream, wait: Duration) -> bool {
    let mut buffer = [0u8; 256];
    let end = async {
        loop {
            match stream.read(&mut buffer).await {
                Ok(0) | Err(_) => return,
                Ok(_) => {}
            }
        }
    };
    tokio::time::timeout(wait, end).await.is_ok()
}

#[tokio::test]
async fn idle_connections_hold_at_most_the_caps_and_decide_is_answered() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("trail.db");
    let toml = "[limits]\nmax_connections = 300\nmax_connections_per_peer = 100\n\
                handshake_timeout_ms = 1500\n";
    let proc = Proc::start(&db, toml).await;
    let addr: SocketAddr = proc.url.trim_start_matches("http://").parse().unwrap();
    let before = proc.fds();

    // 600 connections from two other loopback addresses: 100 of each are held.
    let mut flood = idle("127.0.0.2", addr, 400).await;
    flood.extend(idle("127.0.0.3", addr, 200).await);
    tokio::time::sleep(Duration::from_millis(300)).await;
    let during = proc.fds();
    let mut gate = proc.gate().await;
    let answered = tokio::time::timeout(Duration::from_secs(5), gate.decide(request("read"))).await;

    assert!(matches!(answered, Ok(Ok(_))), "Decide is answered during the flood: {answered:?}");
    assert!(during <= before + 200 + 10, "held {during} descriptors, {before} before");
    // At the handshake timeout the server closes every connection that never spoke.
    let count = flood.len();
    let mut closed_count = 0;
    for stream in &mut flood {
        if closed(stream, Duration::from_secs(4)).await {
            closed_count += 1;
        }
    }
    assert_eq!(closed_count, count, "each silent connection is closed");
    let after = proc.fds();
    assert!(after <= before + 10, "{after} descriptors after the flood, {before} before");
}

#[tokio::test]
async fn a_slow_request_head_on_the_side_port_is_cut_and_its_peer_capped() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("trail.db");
    let side = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap();
    let toml = format!(
        "http_listen = \"{side}\"\n[limits]\nmax_connections_per_peer = 20\nhandshake_timeout_ms = 800\n"
    );
    let _proc = Proc::start(&db, &toml).await;

    // A slowloris: a request head that never ends.
    let mut slow = TcpStream::connect(side).await.unwrap();
    slow.write_all(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n").await.unwrap();
    assert!(closed(&mut slow, Duration::from_secs(5)).await, "cut at the header timeout");
    // Past the cap per peer, a connection is closed as soon as it is accepted.
    let mut held = idle("127.0.0.2", side, 20).await;
    let mut over = idle("127.0.0.2", side, 1).await.pop().unwrap();
    assert!(closed(&mut over, Duration::from_secs(2)).await, "over the per-peer cap");
    // Another peer is still served.
    let mut probe = TcpStream::connect(side).await.unwrap();
    probe
        .write_all(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
        .await
        .unwrap();
    let mut answer = String::new();
    probe.read_to_string(&mut answer).await.unwrap();
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    held.clear();
}
