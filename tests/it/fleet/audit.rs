//! The fleet's audit-only server: `toolgate serve --audit-only --postgres URL`, a real child
//! process logging in to the fleet store as an auditor's role, serving the Audit service over
//! every node's trail with the sidecar's auth: the auditor reads, queries across nodes, pages,
//! verifies one node whole; an agent's token is refused and the refusal recorded on the
//! server's own trail; a sidecar refuses node ids.

use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use sha2::{Digest, Sha256};
use sqlx::Executor;
use tonic::Code;
use tonic::metadata::MetadataValue;
use tonic::transport::Channel;
use tonic_health::pb::HealthCheckRequest;
use tonic_health::pb::health_check_response::ServingStatus;
use tonic_health::pb::health_client::HealthClient;
use toolgate::proto;
use toolgate::proto::audit_client::AuditClient;

use crate::console::Browser;
use crate::fleet::{FleetDb, caught_up, cluster, decide_n, shipping};
use crate::helpers::{TestApp, spawn_app_with, toolgate_async};

const AUDITOR: &str = "auditor-secret";
const AGENT: &str = "agent-secret";

/// The audit-only server; killed when dropped.
struct AuditOnly {
    child: Child,
    url: String,
    /// Its side port, with the console: `http://127.0.0.1:PORT`.
    side: String,
}

impl Drop for AuditOnly {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn sha256(text: &str) -> String {
    hex::encode(Sha256::digest(text.as_bytes()))
}

async fn start(dir: &std::path::Path, postgres: &str) -> AuditOnly {
    let config = dir.join("audit.toml");
    let toml = format!(
        "[[auth.tokens]]\nid = \"auditors\"\nsha256 = \"{}\"\nroles = [\"auditor\"]\n\n\
         [[auth.tokens]]\nid = \"agents\"\nsha256 = \"{}\"\nroles = [\"agent\"]\nactors = [\"*\"]\n\n\
         [console]\nenabled = true\n",
        sha256(AUDITOR),
        sha256(AGENT)
    );
    std::fs::write(&config, toml).unwrap();
    let free = || std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let (port, http) = (free(), free());
    let child = Command::new(assert_cmd::cargo::cargo_bin!("toolgate"))
        .args(["serve", "--audit-only", "--postgres", postgres, "--listen"])
        .arg(format!("127.0.0.1:{port}"))
        .arg("--http-listen")
        .arg(format!("127.0.0.1:{http}"))
        .arg("--config")
        .arg(&config)
        .arg("--db")
        .arg(dir.join("audit-server.db"))
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(dir.join("audit-server.log")).unwrap())
        .spawn()
        .unwrap();
    let url = format!("http://127.0.0.1:{port}");
    let server = AuditOnly { child, url, side: format!("http://127.0.0.1:{http}") };
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        if let Ok(channel) = Channel::from_shared(server.url.clone()).unwrap().connect().await {
            let ask = HealthCheckRequest { service: "toolgate.v1.Audit".into() };
            if let Ok(answer) = HealthClient::new(channel).check(ask).await
                && answer.into_inner().status() == ServingStatus::Serving
            {
                return server;
            }
        }
        assert!(Instant::now() < deadline, "the audit-only server did not start");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

type Client = AuditClient<
    tonic::service::interceptor::InterceptedService<
        Channel,
        Box<dyn FnMut(tonic::Request<()>) -> Result<tonic::Request<()>, tonic::Status> + Send>,
    >,
>;

async fn client(url: &str, token: &'static str) -> Client {
    let channel = Channel::from_shared(url.to_owned()).unwrap().connect().await.unwrap();
    let bearer: MetadataValue<_> = format!("Bearer {token}").parse().unwrap();
    let add: Box<dyn FnMut(tonic::Request<()>) -> _ + Send> = Box::new(move |mut r| {
        r.metadata_mut().insert("authorization", bearer.clone());
        Ok(r)
    });
    AuditClient::with_interceptor(channel, add)
}

fn filter(node: &str) -> proto::Filter {
    proto::Filter { node_id: node.to_owned(), ..Default::default() }
}

/// Nodes `a` and `b`, each with `decisions` decisions shipped, and an audit-only server over
/// the store, logged in as an auditor's role.
async fn two_nodes(decisions: usize) -> (FleetDb, Vec<TestApp>, tempfile::TempDir, AuditOnly) {
    let fleet = FleetDb::new(&cluster()).await;
    let mut apps = Vec::new();
    for node in ["a", "b"] {
        let url = fleet.node(node).await;
        let app = spawn_app_with(|c| c.fleet = shipping(node, &url)).await;
        decide_n(&app, decisions).await;
        caught_up(&fleet, node, &app.db).await;
        apps.push(app);
    }
    let role = format!("{}_auditor", fleet.name);
    let sql = format!("CREATE ROLE {role} LOGIN IN ROLE toolgate_auditor");
    fleet.pool.execute(sqlx::AssertSqlSafe(sql)).await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let server = start(dir.path(), &fleet.role_url(&role)).await;
    (fleet, apps, dir, server)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_audit_only_server_serves_the_fleet_store_to_the_auditors_tools() {
    let (fleet, apps, dir, server) = two_nodes(5).await;
    let mut auditor = client(&server.url, AUDITOR).await;

    // Every node's events, paged across nodes, each with its node.
    let (a_events, b_events) = (fleet.events("a").await, fleet.events("b").await);
    let mut seen = Vec::new();
    let mut token = String::new();
    loop {
        let ask = proto::QueryRequest {
            filter: None,
            page_size: 4,
            page_token: token,
            ..Default::default()
        };
        let page = auditor.query(ask).await.unwrap().into_inner();
        seen.extend(page.events.into_iter().map(|e| (e.node_id, e.seq as i64, e.hash)));
        if page.next_page_token.is_empty() {
            break;
        }
        token = page.next_page_token;
    }
    let expected: Vec<_> = a_events
        .iter()
        .map(|(seq, hash)| ("a".to_owned(), *seq, hash.clone()))
        .chain(b_events.iter().map(|(seq, hash)| ("b".to_owned(), *seq, hash.clone())))
        .collect();
    assert_eq!(seen, expected);
    // Newest first: the same events, backwards, paged across nodes the same way.
    let (mut newest, mut token) = (Vec::new(), String::new());
    loop {
        let ask = proto::QueryRequest {
            page_size: 3,
            page_token: token,
            newest_first: true,
            ..Default::default()
        };
        let page = auditor.query(ask).await.unwrap().into_inner();
        newest.extend(page.events.into_iter().map(|e| (e.node_id, e.seq as i64, e.hash)));
        if page.next_page_token.is_empty() {
            break;
        }
        token = page.next_page_token;
    }
    assert_eq!(newest, expected.iter().rev().cloned().collect::<Vec<_>>());
    // One node's, its head, its counts, its verification.
    let ask =
        proto::QueryRequest { filter: Some(filter("b")), page_size: 100, ..Default::default() };
    let page = auditor.query(ask).await.unwrap().into_inner();
    assert_eq!(page.events.len(), b_events.len());
    let head = proto::HeadRequest { node_id: "a".into() };
    let head = auditor.head(head).await.unwrap().into_inner();
    assert_eq!((head.seq as i64, head.hash), a_events.last().unwrap().clone());
    let stats = proto::StatsRequest { node_id: "a".into(), ..Default::default() };
    let stats = auditor.stats(stats).await.unwrap().into_inner();
    assert_eq!(stats.total as usize, a_events.len());
    let verify = proto::VerifyRequest { node_id: "b".into(), ..Default::default() };
    let verified = auditor.verify(verify).await.unwrap().into_inner();
    assert!(verified.intact, "{:?}", verified.problems);
    assert_eq!(verified.checked as usize, b_events.len());
    // The CLI's remote verify names the node too.
    let out = tokio::task::spawn_blocking({
        let url = server.url.clone();
        move || {
            Command::new(assert_cmd::cargo::cargo_bin!("toolgate"))
                .args(["verify", "--server", &url, "--node", "a"])
                .env("TOOLGATE_TOKEN", AUDITOR)
                .output()
                .unwrap()
        }
    })
    .await
    .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stdout));
    // A CSV export of one node, as the node's own trail would be.
    let mut chunks = auditor
        .export_csv(proto::ExportRequest { filter: Some(filter("a")), bom: false })
        .await
        .unwrap()
        .into_inner();
    let mut rows = None;
    while let Some(chunk) = chunks.message().await.unwrap() {
        rows = chunk.summary.map(|s| s.rows).or(rows);
    }
    assert_eq!(rows, Some(a_events.len() as u64));

    // What needs a node says so; what is not served here says where it is.
    let err = auditor.verify(proto::VerifyRequest::default()).await.unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument);
    assert!(err.message().contains("node_id"), "{}", err.message());
    let err = auditor.head(proto::HeadRequest { node_id: "../etc".into() }).await.unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument);
    let err = auditor.head(proto::HeadRequest { node_id: "nobody".into() }).await;
    assert_eq!(err.unwrap().into_inner().seq, 0, "an unknown node has an empty head");
    let proof = proto::InclusionProofRequest { seq: 1, tree_size: 1 };
    let err = auditor.inclusion_proof(proof).await.unwrap_err();
    assert_eq!(err.code(), Code::FailedPrecondition);
    // The sidecar's roles hold: an agent's token may not read the fleet.
    let mut agent = client(&server.url, AGENT).await;
    let err = agent.query(proto::QueryRequest::default()).await.unwrap_err();
    assert_eq!(err.code(), Code::PermissionDenied);
    drop(server);
    // The server's own trail recorded the refusals.
    let db = dir.path().join("audit-server.db");
    let out = toolgate_async(&["query", "--db", db.to_str().unwrap(), "--json"]).await;
    let trail = String::from_utf8_lossy(&out.stdout);
    assert!(trail.contains("\"kind\":\"access_denied\""), "{trail}");
    assert!(trail.contains("\"kind\":\"invalid_request\""), "{trail}");

    // A sidecar serves its own trail only.
    let mut sidecar = AuditClient::new(apps[0].channel.clone());
    let err = sidecar.head(proto::HeadRequest { node_id: "a".into() }).await.unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument);
    assert!(err.message().contains("fleet server"), "{}", err.message());
    for app in apps {
        app.stop().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_fleet_servers_console_shows_every_nodes_trail_and_health() {
    let (fleet, apps, _dir, server) = two_nodes(3).await;
    let mut browser = Browser::new(&server.side);
    let signed = browser.post("/ui/sign-in", &[("token", AUDITOR)]).await;
    assert_eq!(signed.status, reqwest::StatusCode::SEE_OTHER);

    // The trail of both nodes, newest first, each row with its node.
    let trail = browser.get("/ui/trail").await;
    assert_eq!(trail.status, reqwest::StatusCode::OK, "{}", trail.body);
    assert!(trail.body.contains("<th>Node</th>"));
    let (a, b) = (fleet.events("a").await, fleet.events("b").await);
    let first_row = trail.body.split("<tbody>").nth(1).unwrap();
    assert!(first_row.starts_with("<tr><td>b</td>"), "node b's newest first: {first_row}");
    let nodes_listed =
        trail.body.matches("<td>a</td>").count() + trail.body.matches("<td>b</td>").count();
    assert_eq!(nodes_listed, a.len() + b.len());

    // One node's trail, and the chain of each verified by the server's follower.
    let only_a = browser.get("/ui/trail?node=a").await;
    assert!(!only_a.body.contains("<td>b</td>"));
    let started = Instant::now();
    loop {
        let overview = browser.get("/ui").await;
        let verified = |node: &str, seq: i64| {
            overview.body.contains(&format!("<td>{node}</td><td><p><span class=\"ok-mark\">✓ Intact</span> — verified through seq <strong>{seq}</strong>"))
        };
        // Both nodes' activity counted: three allowed reads each.
        let counted = overview.body.contains("outcome=allow&amp;since=1h\">6</a>");
        if counted && verified("a", a.last().unwrap().0) && verified("b", b.last().unwrap().0) {
            break;
        }
        assert!(started.elapsed() < Duration::from_secs(20), "{}", overview.body);
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    // A fleet server judges no approvals.
    let approvals = browser.get("/ui/approvals").await;
    assert_eq!(approvals.status, reqwest::StatusCode::NOT_FOUND);
    drop(apps);
}
