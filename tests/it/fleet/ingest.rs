//! The ingest service as the attacker meets it: raw gRPC calls to the real binary, in front of
//! a real PostgreSQL. Nothing unauthenticated is read or recorded; a token ships for its own
//! node only; a replayed batch stores nothing twice; a forged, rewritten or out-of-order
//! history is refused whole and recorded; a revoked token stops at its next batch; two ingest
//! servers never interleave one node, and one killed mid-batch loses nothing.

use std::time::{Duration, Instant};

use tokio::sync::mpsc;
use tokio_stream::wrappers::ReceiverStream;
use tonic::metadata::MetadataValue;
use tonic::transport::Channel;
use tonic::{Code, Request};
use toolgate::proto::fleet_ingest_client::FleetIngestClient;
use toolgate::proto::{self, CosignRequest, PositionRequest, ShipRequest};
use toolgate::trail::{Event, Kind, Record, event_hash};

use crate::fleet::{FleetDb, Ingest, caught_up, cluster, fleet_toml};
use crate::helpers::{request, toolgate_async};

/// `n` events of a made-up trail from seq `from`, chained from `prev` (hex).
pub fn chain(from: i64, n: i64, prev: &str, tool: &str) -> Vec<Event> {
    let mut prev = hex::decode(prev).unwrap().try_into().unwrap();
    (from..from + n)
        .map(|seq| {
            let mut record = Record::new(Kind::Decision);
            record.tool = Some(tool.to_owned());
            let mut event = Event {
                seq,
                event_id: format!("e{seq}"),
                ts: "2026-12-03T12:00:00.000000Z".into(),
                record,
                prev_hash: hex::encode(prev),
                hash: String::new(),
            };
            prev = event_hash(&prev, &event);
            event.hash = hex::encode(prev);
            event
        })
        .collect()
}

pub const GENESIS: &str = "0000000000000000000000000000000000000000000000000000000000000000";

/// The events as the wire carries them (those of [`chain`] have a kind and a tool).
fn wire(events: &[Event]) -> Vec<proto::Event> {
    events
        .iter()
        .map(|e| proto::Event {
            seq: e.seq.unsigned_abs(),
            event_id: e.event_id.clone(),
            ts: e.ts.clone(),
            kind: e.record.kind.as_str().to_owned(),
            tool: e.record.tool.clone(),
            prev_hash: e.prev_hash.clone(),
            hash: e.hash.clone(),
            ..Default::default()
        })
        .collect()
}

/// A request carrying `token` (none when `None`).
fn with<T>(message: T, token: Option<&str>) -> Request<T> {
    let mut request = Request::new(message);
    if let Some(token) = token {
        let value: MetadataValue<_> = format!("Bearer {token}").parse().unwrap();
        request.metadata_mut().insert("authorization", value);
    }
    request
}

async fn client(url: &str) -> FleetIngestClient<Channel> {
    FleetIngestClient::new(Channel::from_shared(url.to_owned()).unwrap().connect().await.unwrap())
}

/// Ships `batches` on one stream: each batch's acknowledged (seq, stored), up to the first
/// refusal, which ends the list.
pub async fn ship(
    ingest: &str,
    token: &str,
    node: &str,
    batches: Vec<Vec<Event>>,
) -> Vec<Result<(i64, u64), tonic::Status>> {
    let mut client = client(ingest).await;
    let (send, queue) = mpsc::channel(1);
    let mut acks = match client.ship(with(ReceiverStream::new(queue), Some(token))).await {
        Ok(acks) => acks.into_inner(),
        Err(status) => return vec![Err(status)],
    };
    let mut answers = Vec::new();
    for batch in batches {
        let events = wire(&batch);
        send.send(ShipRequest {
            node_id: node.to_owned(),
            events,
            cosignatures: vec![],
            witnessed: None,
        })
        .await
        .unwrap();
        match acks.message().await {
            Ok(Some(ack)) => answers.push(Ok((ack.seq, ack.stored))),
            Ok(None) => break,
            Err(status) => {
                answers.push(Err(status));
                break;
            }
        }
    }
    answers
}

async fn token(fleet: &FleetDb, node: &str) -> String {
    let registered = fleet.node(node).await;
    std::fs::read_to_string(registered.token_file).unwrap().trim().to_owned()
}

async fn alarms_with_shippers(
    fleet: &FleetDb,
) -> Vec<(String, Option<String>, Option<i64>, String)> {
    sqlx::query_as("SELECT node_id, shipper, seq, what FROM fleet_alarms ORDER BY id")
        .fetch_all(&fleet.pool)
        .await
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unauthenticated_caller_is_refused_and_costs_the_store_no_row() {
    let fleet = FleetDb::new(&cluster()).await;
    let _a = token(&fleet, "a").await;
    let mut client = client(&fleet.ingest.url).await;
    let unknown = "tgnode_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA";
    for token in [None, Some("hunter2"), Some(unknown)] {
        let position = client.position(with(PositionRequest { node_id: "a".into() }, token));
        assert_eq!(position.await.unwrap_err().code(), Code::Unauthenticated, "{token:?}");
        let answers =
            ship(&fleet.ingest.url, token.unwrap_or(""), "a", vec![chain(1, 3, GENESIS, "t")]);
        let answers = answers.await;
        assert_eq!(answers[0].as_ref().unwrap_err().code(), Code::Unauthenticated);
    }
    assert!(fleet.events("a").await.is_empty());
    assert!(fleet.alarms().await.is_empty(), "an unauthenticated peer writes nothing");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_replayed_batch_is_stored_once() {
    let fleet = FleetDb::new(&cluster()).await;
    let a = token(&fleet, "a").await;
    let events = chain(1, 15, GENESIS, "t");
    let answers = ship(
        &fleet.ingest.url,
        &a,
        "a",
        vec![events[..10].to_vec(), events[..10].to_vec(), events[4..].to_vec(), vec![]],
    )
    .await;
    let answers: Vec<_> = answers.into_iter().map(Result::unwrap).collect();
    assert_eq!(answers, [(10, 10), (10, 0), (15, 5), (15, 0)]);
    let stored = fleet.events("a").await;
    let expected: Vec<_> = events.iter().map(|e| (e.seq, e.hash.clone())).collect();
    assert_eq!(stored, expected);
    assert!(fleet.alarms().await.is_empty());
    let mut client = client(&fleet.ingest.url).await;
    let position = client.position(with(PositionRequest { node_id: "a".into() }, Some(&a)));
    assert_eq!(position.await.unwrap().into_inner().seq, 15);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_forged_rewritten_or_disordered_history_is_refused_whole_and_recorded() {
    let fleet = FleetDb::new(&cluster()).await;
    let a = token(&fleet, "a").await;
    let events = chain(1, 10, GENESIS, "t");
    let ok = ship(&fleet.ingest.url, &a, "a", vec![events.clone()]).await;
    assert_eq!(ok[0].as_ref().unwrap(), &(10, 10));
    let head = events[9].hash.clone();
    // Rewritten: seq 5 onwards, another history, its own hashes right.
    let rewritten = chain(5, 8, &events[3].hash, "other");
    // Forged: a content changed, its hash left.
    let mut forged = chain(11, 3, &head, "t");
    forged[1].record.tool = Some("evil".into());
    // Disordered: a gap after the head.
    let gap = chain(12, 2, &head, "t");
    // Unlinked: the next seq, chained from something else.
    let unlinked = chain(11, 2, GENESIS, "t");
    // The same hash in capitals: what the trail never writes.
    let mut capitals = chain(11, 1, &head, "t");
    capitals[0].hash = capitals[0].hash.to_uppercase();
    // Out of order, however well chained.
    let mut swapped = chain(11, 2, &head, "t");
    swapped.swap(0, 1);
    // A NUL, which no PostgreSQL text holds: refused, not retried for ever.
    let nul = chain(11, 2, &head, "t\0x");
    let cases = [
        (rewritten, 5, "rewritten (the store holds hash"),
        (forged, 12, "hash mismatch"),
        (gap, 12, "not next (the store holds up to seq 10)"),
        (unlinked, 11, "broken link"),
        (capitals, 11, "hash mismatch"),
        (swapped, 11, "not in seq order"),
        (nul, 11, "a NUL character"),
    ];
    for (i, (batch, seq, what)) in cases.into_iter().enumerate() {
        let answers = ship(&fleet.ingest.url, &a, "a", vec![batch]).await;
        let status = answers[0].as_ref().unwrap_err();
        assert_eq!(status.code(), Code::FailedPrecondition, "{status:?}");
        assert!(status.message().contains(what), "{status:?}");
        let alarms = alarms_with_shippers(&fleet).await;
        assert_eq!(alarms.len(), i + 1);
        let (node, shipper, at, said) = &alarms[i];
        assert_eq!((node.as_str(), shipper.as_deref(), *at), ("a", Some("a"), Some(seq)));
        assert!(said.contains(what), "{said}");
    }
    let expected: Vec<_> = events.iter().map(|e| (e.seq, e.hash.clone())).collect();
    assert_eq!(fleet.events("a").await, expected, "nothing of a refused batch is stored");
    // The operator's list: the last two, the rest counted.
    let out =
        toolgate_async(&["fleet", "alarms", "--postgres", &fleet.url(), "--limit", "2"]).await;
    assert_eq!(out.status.code(), Some(1));
    let listed = String::from_utf8(out.stdout).unwrap();
    assert_eq!(listed.lines().filter(|l| l.starts_with("ALARM ")).count(), 2, "{listed}");
    assert!(listed.starts_with("(5 earlier alarms not shown"), "{listed}");
    assert!(listed.contains("a NUL character"), "{listed}");
    // A cosignature of an event that is no checkpoint.
    let mut client = client(&fleet.ingest.url).await;
    let cosignature = proto::Cosignature {
        seq: 3,
        witness: "w+00000000+AAAA".into(),
        size: 2,
        time: 1,
        line: "— w AAAA\n".into(),
    };
    let request = CosignRequest { node_id: "a".into(), cosignatures: vec![cosignature] };
    let refused = client.cosign(with(request, Some(&a))).await.unwrap_err();
    assert_eq!(refused.code(), Code::FailedPrecondition);
    assert!(refused.message().contains("not a stored checkpoint"), "{refused:?}");
    // A batch beyond the service's bound is refused before it is read.
    let huge = chain(11, 10_001, &head, "t");
    let answers = ship(&fleet.ingest.url, &a, "a", vec![huge]).await;
    let status = answers[0].as_ref().unwrap_err();
    assert_eq!(status.code(), Code::InvalidArgument, "{status:?}");
    assert!(status.message().starts_with("events:"), "{status:?}");
    let (_, _, _, recorded) = alarms_with_shippers(&fleet).await.pop().unwrap();
    assert_eq!(recorded, "events: at most 10000 in a batch");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_token_ships_for_its_own_node_only_and_a_revoked_one_not_at_all() {
    let fleet = FleetDb::new(&cluster()).await;
    let a = token(&fleet, "a").await;
    let _b = token(&fleet, "b").await;
    let mut client = client(&fleet.ingest.url).await;
    let position = client.position(with(PositionRequest { node_id: "b".into() }, Some(&a)));
    assert_eq!(position.await.unwrap_err().code(), Code::PermissionDenied);
    let answers = ship(&fleet.ingest.url, &a, "b", vec![chain(1, 3, GENESIS, "t")]).await;
    assert_eq!(answers[0].as_ref().unwrap_err().code(), Code::PermissionDenied);
    let alarms = alarms_with_shippers(&fleet).await;
    assert_eq!(alarms.len(), 2);
    for (node, shipper, _, what) in &alarms[..2] {
        assert_eq!((node.as_str(), shipper.as_deref()), ("b", Some("a")));
        assert!(what.contains("under the id of node \"b\" with the token of node \"a\""), "{what}");
    }
    assert!(fleet.events("b").await.is_empty());
    // A node id that is none: recorded under the token's node, its text escaped.
    let forged = "x\n2026-12-03 INFO all is well".repeat(20);
    let answers = ship(&fleet.ingest.url, &a, &forged, vec![chain(1, 1, GENESIS, "t")]).await;
    assert_eq!(answers[0].as_ref().unwrap_err().code(), Code::PermissionDenied);
    let (node, _, _, what) = alarms_with_shippers(&fleet).await.pop().unwrap();
    assert_eq!(node, "a");
    assert!(!what.contains('\n') && what.chars().count() <= 513, "{what}");

    // Revoked between two batches of one stream: the second is refused.
    let events = chain(1, 6, GENESIS, "t");
    let mut ingest = self::client(&fleet.ingest.url).await;
    let (send, queue) = mpsc::channel(1);
    let mut acks =
        ingest.ship(with(ReceiverStream::new(queue), Some(&a))).await.unwrap().into_inner();
    send.send(ShipRequest {
        node_id: "a".into(),
        events: wire(&events[..3]),
        cosignatures: vec![],
        witnessed: None,
    })
    .await
    .unwrap();
    assert_eq!(acks.message().await.unwrap().unwrap().seq, 3);
    let out = toolgate_async(&["fleet", "revoke", "--postgres", &fleet.url(), "--node", "a"]).await;
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    send.send(ShipRequest {
        node_id: "a".into(),
        events: wire(&events[3..]),
        cosignatures: vec![],
        witnessed: None,
    })
    .await
    .unwrap();
    assert_eq!(acks.message().await.unwrap_err().code(), Code::PermissionDenied);
    assert_eq!(fleet.events("a").await.len(), 3);
    let status = toolgate_async(&["fleet", "status", "--postgres", &fleet.url()]).await;
    assert!(String::from_utf8_lossy(&status.stdout).contains("node \"a\" REVOKED"));
    // A new token lifts it; the old one stays dead.
    let url = fleet.url();
    let args = ["fleet", "register", "--postgres", &url, "--node", "a", "--reissue"];
    let out = toolgate_async(&args).await;
    let fresh = String::from_utf8(out.stdout).unwrap().trim().to_owned();
    let old = ship(&fleet.ingest.url, &a, "a", vec![events[3..].to_vec()]).await;
    assert_eq!(old[0].as_ref().unwrap_err().code(), Code::Unauthenticated);
    // A stream opened with the fresh token, which is replaced in turn, stops at its next batch.
    let (send, queue) = mpsc::channel(1);
    let mut acks =
        ingest.ship(with(ReceiverStream::new(queue), Some(&fresh))).await.unwrap().into_inner();
    send.send(ShipRequest {
        node_id: "a".into(),
        events: wire(&events[3..4]),
        cosignatures: vec![],
        witnessed: None,
    })
    .await
    .unwrap();
    assert_eq!(acks.message().await.unwrap().unwrap().seq, 4);
    let out = toolgate_async(&args).await;
    let newest = String::from_utf8(out.stdout).unwrap().trim().to_owned();
    send.send(ShipRequest {
        node_id: "a".into(),
        events: wire(&events[4..]),
        cosignatures: vec![],
        witnessed: None,
    })
    .await
    .unwrap();
    assert_eq!(acks.message().await.unwrap_err().code(), Code::PermissionDenied);
    let new = ship(&fleet.ingest.url, &newest, "a", vec![events[3..].to_vec()]).await;
    assert_eq!(new[0].as_ref().unwrap(), &(6, 2));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_ingest_servers_never_interleave_a_node_and_one_killed_mid_batch_loses_nothing() {
    let fleet = FleetDb::new(&cluster()).await;
    let role_url = fleet.role_url(&format!("{}_ingest", fleet.name));
    let mut second = Ingest::start(&role_url).await;
    // The same batches of one node through both servers at once: each stored once.
    let c = token(&fleet, "c").await;
    let events = chain(1, 400, GENESIS, "t");
    let batches: Vec<Vec<Event>> = events.chunks(40).map(<[Event]>::to_vec).collect();
    let (one, two) = tokio::join!(
        ship(&fleet.ingest.url, &c, "c", batches.clone()),
        ship(&second.url, &c, "c", batches),
    );
    for answer in one.iter().chain(&two) {
        assert!(answer.is_ok(), "{answer:?}");
    }
    let stored: u64 = one.iter().chain(&two).map(|a| a.as_ref().unwrap().1).sum();
    assert_eq!(stored, 400);
    assert_eq!(fleet.events("c").await.len(), 400);

    // A sidecar ships through the second server, which is killed under it; a replacement on
    // the same address takes over.
    let node = fleet.node("a").await;
    let node = crate::fleet::Registered { ingest: second.url.clone(), ..node };
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("trail.db");
    let toml = fleet_toml("a", &node, 5).replace("every_ms", "batch_events = 50\nevery_ms");
    let proc = crate::faults::Proc::start(&db, &toml).await;
    let mut load = Vec::new();
    for _ in 0..2 {
        let mut gate = proc.gate().await;
        load.push(tokio::spawn(async move {
            let until = Instant::now() + Duration::from_millis(1500);
            while Instant::now() < until {
                gate.decide(request("read")).await.unwrap();
            }
        }));
    }
    tokio::time::sleep(Duration::from_millis(700)).await;
    second.kill9();
    let killed_with = fleet.events("a").await.len();
    for task in load {
        task.await.unwrap();
    }
    let port = second.url.rsplit(':').next().unwrap().parse().unwrap();
    let _replacement = Ingest::start_on(&role_url, port).await;
    caught_up(&fleet, "a", &db).await;
    let stored = fleet.events("a").await;
    println!("killed with {killed_with} events stored; {} after the replacement", stored.len());
    assert!(stored.windows(2).all(|w| w[1].0 == w[0].0 + 1), "contiguous, once each");
    assert!(fleet.alarms().await.is_empty(), "{:?}", fleet.alarms().await);
    drop(proc);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_token_that_keeps_being_refused_stores_a_bounded_number_of_alarms() {
    let fleet = FleetDb::new(&cluster()).await;
    let (a, b) = (token(&fleet, "a").await, token(&fleet, "b").await);
    let mut client = client(&fleet.ingest.url).await;
    for _ in 0..150 {
        let call = client.position(with(PositionRequest { node_id: "b".into() }, Some(&a)));
        assert_eq!(call.await.unwrap_err().code(), Code::PermissionDenied);
    }
    let alarms = alarms_with_shippers(&fleet).await;
    // A minute's budget, then the notice: 101 rows, not 150.
    assert_eq!(alarms.len(), 101, "{:?}", alarms.last());
    assert!(alarms.iter().all(|(_, shipper, _, _)| shipper.as_deref() == Some("a")));
    assert!(
        alarms[..100]
            .iter()
            .all(|(node, _, _, what)| node == "b" && what.contains("under the id of node"))
    );
    let notice = "more than 100 refusals \"a call under the id of node\" of this token in a minute";
    assert!(alarms[100].3.contains(notice), "{}", alarms[100].3);
    // Another token's refusals have their own budget.
    let call = client.position(with(PositionRequest { node_id: "a".into() }, Some(&b)));
    assert_eq!(call.await.unwrap_err().code(), Code::PermissionDenied);
    assert_eq!(alarms_with_shippers(&fleet).await.len(), 102);
}

/// Two ingest servers in front of one store, both given to the sidecar: when the one it uses
/// dies, it moves to the other within seconds; nothing is lost or stored twice.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sidecar_given_two_ingest_servers_fails_over_and_loses_nothing() {
    let mut fleet = FleetDb::new(&cluster()).await;
    let second = Ingest::start(&fleet.ingest_role_url()).await;
    let node = fleet.node("a").await;
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("trail.db");
    let toml = format!(
        "[fleet]\nnode_id = \"a\"\ningest_urls = [\"{}\", \"{}\"]\ntoken_file = \"{}\"\n\
         every_ms = 50\nfail_back_ms = 1000\n",
        fleet.ingest.url,
        second.url,
        node.token_file.display()
    );
    let proc = crate::faults::Proc::start(&db, &toml).await;
    let mut gate = proc.gate().await;
    for _ in 0..50 {
        gate.decide(request("read")).await.unwrap();
    }
    caught_up(&fleet, "a", &db).await;

    // The first dies; decisions go on, and reach the store through the second.
    fleet.ingest.kill9();
    let died = Instant::now();
    for _ in 0..50 {
        gate.decide(request("read")).await.unwrap();
    }
    caught_up(&fleet, "a", &db).await;
    let moved = died.elapsed();
    println!("failed over to the second ingest server in {moved:?}");
    assert!(moved < Duration::from_secs(20), "{moved:?}");

    // The first comes back; past fail_back_ms the sidecar uses it again, and the second can go.
    let port: u16 = fleet.ingest.url.rsplit(':').next().unwrap().parse().unwrap();
    let _first = Ingest::start_on(&fleet.ingest_role_url(), port).await;
    tokio::time::sleep(Duration::from_millis(1500)).await;
    for _ in 0..20 {
        gate.decide(request("read")).await.unwrap();
    }
    caught_up(&fleet, "a", &db).await;
    drop(second);
    for _ in 0..20 {
        gate.decide(request("read")).await.unwrap();
    }
    caught_up(&fleet, "a", &db).await;
    assert!(fleet.alarms().await.is_empty(), "{:?}", fleet.alarms().await);
}

/// A revoked node's every retry is refused at `Position`: each counted as `refused`, as the
/// docs say, none as `failed`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_revoked_nodes_retries_are_counted_as_refused() {
    let fleet = FleetDb::new(&cluster()).await;
    let node = fleet.node("a").await;
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("trail.db");
    let side = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap();
    let toml = format!("http_listen = \"{side}\"\n{}", fleet_toml("a", &node, 20));
    let proc = crate::faults::Proc::start(&db, &toml).await;
    let mut gate = proc.gate().await;
    gate.decide(request("read")).await.unwrap();
    caught_up(&fleet, "a", &db).await;
    let out = toolgate_async(&["fleet", "revoke", "--postgres", &fleet.url(), "--node", "a"]).await;
    assert!(out.status.success());
    for _ in 0..5 {
        gate.decide(request("read")).await.unwrap();
    }
    let counted = |result: &str| {
        let (_, text) = crate::fleet::get(side.port(), "/metrics");
        let name = format!("toolgate_fleet_batches_total{{result=\"{result}\"}}");
        text.lines().find_map(|l| l.strip_prefix(&name)?.trim().parse::<f64>().ok()).unwrap_or(0.0)
    };
    let started = Instant::now();
    while counted("refused") < 3.0 {
        assert!(started.elapsed() < Duration::from_secs(30), "refused {}", counted("refused"));
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(counted("failed"), 0.0, "a refusal is no failure");
}

/// The review's attack on the ingest service: a token of the right shape that is no node's,
/// and a message that says it is 15 MB. Refused on its headers, before the body is read.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_made_up_token_is_refused_on_its_headers_and_its_body_never_read() {
    let fleet = FleetDb::new(&cluster()).await;
    let address: std::net::SocketAddr =
        fleet.ingest.url.trim_start_matches("http://").parse().unwrap();
    let stream = tokio::net::TcpStream::connect(address).await.unwrap();
    let (send, connection) = h2::client::handshake(stream).await.unwrap();
    tokio::spawn(async move {
        let _ = connection.await;
    });
    let made_up = format!("tgnode_{}", "A".repeat(43));
    let mut send = send.ready().await.unwrap();
    let request =
        http::Request::post(format!("{}/toolgate.v1.FleetIngest/Position", fleet.ingest.url))
            .header("content-type", "application/grpc")
            .header("te", "trailers")
            .header("authorization", format!("Bearer {made_up}"))
            .body(())
            .unwrap();
    let started = Instant::now();
    let (answer, mut body) = send.send_request(request, false).unwrap();
    let mut prefix = vec![0u8];
    prefix.extend_from_slice(&(15u32 << 20).to_be_bytes());
    body.send_data(bytes::Bytes::from(prefix), false).unwrap();
    let answer = tokio::time::timeout(Duration::from_secs(5), answer).await.unwrap().unwrap();
    assert_eq!(answer.headers()["grpc-status"], "16", "UNAUTHENTICATED");
    assert!(started.elapsed() < Duration::from_secs(2), "{:?}", started.elapsed());
}
