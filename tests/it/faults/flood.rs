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

/// An HTTP/2 connection to `to` from the loopback address `from` that says its preface and
/// settings, answers PINGs, and never asks anything: its driver's task ends when the server
/// closes it.
async fn silent_h2(
    from: &str,
    to: SocketAddr,
) -> Option<(h2::client::SendRequest<bytes::Bytes>, tokio::task::JoinHandle<()>)> {
    let socket = TcpSocket::new_v4().unwrap();
    socket.bind(format!("{from}:0").parse().unwrap()).unwrap();
    let stream = socket.connect(to).await.ok()?;
    let (send, connection) = h2::client::handshake(stream).await.ok()?;
    let driver = tokio::spawn(async move {
        let _ = connection.await;
    });
    Some((send, driver))
}

#[tokio::test]
async fn silent_http2_connections_from_the_agents_own_address_never_lock_it_out() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("trail.db");
    let toml = "[limits]\nmax_connections = 200\nmax_connections_per_peer = 50\n\
                unauthenticated_timeout_ms = 2000\n";
    let proc = Proc::start(&db, toml).await;
    let addr: SocketAddr = proc.url.trim_start_matches("http://").parse().unwrap();
    let (fds, rss) = (proc.fds(), proc.rss_kib());

    // 120 silent connections from the agent's own address, 40 from each of five others: more
    // than the port holds in all, and more than it holds of one peer.
    let mut flood = Vec::new();
    for from in ["127.0.0.1", "127.0.0.2", "127.0.0.3", "127.0.0.4", "127.0.0.5", "127.0.0.6"] {
        let count = if from == "127.0.0.1" { 120 } else { 40 };
        for _ in 0..count {
            if let Some(connection) = silent_h2(from, addr).await {
                flood.push(connection);
            }
        }
    }
    tokio::time::sleep(Duration::from_millis(200)).await;
    let open = flood.iter().filter(|(_, driver)| !driver.is_finished()).count();
    eprintln!(
        "flood: {} connections made, {open} open; {} descriptors ({fds} before), {} KiB resident \
         ({rss} before)",
        flood.len(),
        proc.fds(),
        proc.rss_kib()
    );
    assert!(open <= 200, "{open} silent connections held, over the cap in all");

    // The agent, from 127.0.0.1, is served while the flood is on, and its connection stays.
    let mut gate = proc.gate().await;
    let answered = tokio::time::timeout(Duration::from_secs(5), gate.decide(request("read"))).await;
    assert!(matches!(answered, Ok(Ok(_))), "Decide is answered during the flood: {answered:?}");

    // Past the deadline for an authenticated call, every silent connection is closed; the
    // agent's is not.
    tokio::time::sleep(Duration::from_millis(3500)).await;
    let open = flood.iter().filter(|(_, driver)| !driver.is_finished()).count();
    eprintln!("after the deadline: {open} silent connections open, {} descriptors", proc.fds());
    assert_eq!(open, 0, "each silent connection is closed at the deadline");
    let again = tokio::time::timeout(Duration::from_secs(5), gate.decide(request("read"))).await;
    assert!(matches!(again, Ok(Ok(_))), "the agent's connection is kept: {again:?}");
    assert!(proc.fds() <= fds + 10, "{} descriptors after the flood, {fds} before", proc.fds());
}

/// A token the server takes, for the body tests.
const AGENT_TOKEN: &str = "agent-secret-5e1d";

/// Opens a gRPC call to `path` on `send` (with `token`, if any) whose message says it is
/// `declared` bytes long, pushes up to `pushed` bytes of it as flow control lets it, then
/// stalls. Returns the answer's `grpc-status` and how long it took to come, or `None` if none
/// came within `wait`.
async fn stalled_call(
    send: h2::client::SendRequest<bytes::Bytes>,
    path: &str,
    token: Option<&str>,
    declared: u32,
    pushed: usize,
    wait: Duration,
) -> Option<(String, Duration)> {
    let mut send = send.ready().await.ok()?;
    let mut request = http::Request::post(format!("http://127.0.0.1{path}"))
        .header("content-type", "application/grpc")
        .header("te", "trailers");
    if let Some(token) = token {
        request = request.header("authorization", format!("Bearer {token}"));
    }
    let started = std::time::Instant::now();
    let (answer, mut body) = send.send_request(request.body(()).unwrap(), false).ok()?;
    let mut prefix = vec![0u8];
    prefix.extend_from_slice(&declared.to_be_bytes());
    body.send_data(bytes::Bytes::from(prefix), false).ok()?;
    // Pushes what flow control lets through; the stream stays open (the body never ends).
    let pushing = tokio::spawn(async move {
        let chunk = bytes::Bytes::from(vec![b'x'; 16 * 1024]);
        let mut sent = 0;
        while sent < pushed {
            body.reserve_capacity(chunk.len());
            match std::future::poll_fn(|cx| body.poll_capacity(cx)).await {
                Some(Ok(n)) if n > 0 => {
                    let part = chunk.slice(..n.min(chunk.len()));
                    sent += part.len();
                    if body.send_data(part, false).is_err() {
                        return body;
                    }
                }
                Some(Ok(_)) => {}
                _ => return body,
            }
        }
        body
    });
    let answer = tokio::time::timeout(wait, answer).await.ok()?.ok()?;
    let took = started.elapsed();
    let status = match answer.headers().get("grpc-status") {
        Some(status) => status.to_str().unwrap().to_owned(),
        None => {
            let mut answer = answer.into_body();
            while answer.data().await.is_some() {}
            let trailers = answer.trailers().await.ok()??;
            trailers.get("grpc-status")?.to_str().ok()?.to_owned()
        }
    };
    pushing.abort();
    Some((status, took))
}

fn auth_toml(extra: &str) -> String {
    format!(
        "[[auth.tokens]]\nid = \"agent\"\nsha256 = \"{}\"\nroles = [\"agent\"]\nactors = [\"*\"]\n\
         [limits]\nstalled_message_timeout_ms = 1500\n{extra}",
        toolgate::auth::token_digest(AGENT_TOKEN)
    )
}

#[tokio::test]
async fn a_body_without_a_token_is_refused_on_its_headers_and_never_buffered() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("trail.db");
    let proc = Proc::start(&db, &auth_toml("")).await;
    let addr: SocketAddr = proc.url.trim_start_matches("http://").parse().unwrap();
    let idle = proc.rss_kib();

    // 32 Decide calls with no token, each saying its message is 15 MB, on four connections,
    // each pushing 14 MB and stalling.
    let mut connections = Vec::new();
    for _ in 0..4 {
        connections.push(silent_h2("127.0.0.2", addr).await.unwrap());
    }
    let mut calls = tokio::task::JoinSet::new();
    for i in 0..32 {
        let send = connections[i % 4].0.clone();
        calls.spawn(stalled_call(
            send,
            "/toolgate.v1.Gate/Decide",
            None,
            15 << 20,
            14 << 20,
            Duration::from_secs(4),
        ));
    }
    let mut answered = Vec::new();
    while let Some(call) = calls.join_next().await {
        answered.push(call.unwrap());
    }
    let during = proc.rss_kib();
    eprintln!(
        "32 stalled 15 MB Decide calls without a token: {} KiB resident, {idle} KiB idle; \
         answers: {:?}",
        during,
        answered
            .iter()
            .map(|a| a.as_ref().map(|(s, t)| (s.clone(), t.as_millis())))
            .collect::<Vec<_>>()
    );
    assert!(
        answered.iter().all(|a| matches!(a, Some((status, took)) if status == "16" && *took < Duration::from_secs(2))),
        "each call is answered UNAUTHENTICATED at once, its body unread: {answered:?}"
    );
    assert!(during < idle + 50 * 1024, "{during} KiB resident under the attack, {idle} KiB idle");
    // The agent is served meanwhile.
    let mut gate = proc.gate().await;
    let mut decide = tonic::Request::new(request("read"));
    decide.metadata_mut().insert("authorization", format!("Bearer {AGENT_TOKEN}").parse().unwrap());
    assert!(gate.decide(decide).await.is_ok());
}

#[tokio::test]
async fn an_authenticated_call_is_bounded_by_what_its_rpc_needs_and_cut_when_it_stalls() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("trail.db");
    let proc = Proc::start(&db, &auth_toml("")).await;
    let addr: SocketAddr = proc.url.trim_start_matches("http://").parse().unwrap();
    let (send, _driver) = silent_h2("127.0.0.2", addr).await.unwrap();

    // A Decide is kilobytes: a 15 MB one is refused by its length prefix, before it is read.
    let oversized = stalled_call(
        send.clone(),
        "/toolgate.v1.Gate/Decide",
        Some(AGENT_TOKEN),
        15 << 20,
        1 << 20,
        Duration::from_secs(4),
    )
    .await;
    assert!(
        matches!(&oversized, Some((status, took)) if status == "8" && *took < Duration::from_secs(2)),
        "RESOURCE_EXHAUSTED at once: {oversized:?}"
    );
    // An Execute may be megabytes, but one that stalls half way is cut at the deadline.
    let stalled = stalled_call(
        send.clone(),
        "/toolgate.v1.Gate/Execute",
        Some(AGENT_TOKEN),
        4 << 20,
        256 << 10,
        Duration::from_secs(6),
    )
    .await;
    assert!(
        matches!(&stalled, Some((status, took)) if status == "4" && *took < Duration::from_secs(5)),
        "DEADLINE_EXCEEDED at the stall deadline: {stalled:?}"
    );
}
