//! Fleets against a real PostgreSQL (the cluster `scripts/test` starts): sidecars ship their
//! trails to it concurrently, every event arrives once with its hash; a store that goes away
//! delays no decision and is caught up; a rewritten node and a node shipping under another's
//! id are refused by the ingest service, and the alarm says which node, which seq and what.

mod audit;
mod ingest;
mod retention;
mod upgrade;
mod witnessed;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use sqlx::{Executor, PgPool, Row};
use toolgate::config::FleetConfig;

use crate::checkpoints::rechain;
use crate::helpers::{TestApp, request, spawn_app_with, toolgate_async};

/// The throwaway cluster's superuser URL, which `scripts/test` exports. The fleet tests never
/// skip: without it they fail and say how to run them.
pub fn cluster() -> String {
    std::env::var("TOOLGATE_TEST_POSTGRES_URL").expect(
        "TOOLGATE_TEST_POSTGRES_URL is not set: the fleet tests need PostgreSQL; run \
         ./scripts/test, which starts a throwaway cluster (or scripts/postgres start DIR)",
    )
}

/// A fresh fleet store: its own database in the cluster, migrated, with the role model, and
/// an ingest server in front of it (the real binary, logged in as a role of `toolgate_ingest`).
pub struct FleetDb {
    /// `postgres://toolgate@host:port` (no database).
    base: String,
    pub name: String,
    pub pool: PgPool,
    pub ingest: Ingest,
    /// The nodes' token files.
    tokens: tempfile::TempDir,
}

/// What a registered node ships with: the ingest service's URL and its token's file.
#[derive(Debug, Clone)]
pub struct Registered {
    pub ingest: String,
    pub token_file: PathBuf,
}

impl FleetDb {
    pub async fn new(base: &str) -> Self {
        let name = format!("tg_{}", uuid::Uuid::now_v7().simple());
        let admin = PgPool::connect(base).await.unwrap();
        admin.execute(sqlx::AssertSqlSafe(format!("CREATE DATABASE {name}"))).await.unwrap();
        admin.close().await;
        let base = base.rsplit_once('/').unwrap().0.to_owned();
        let url = format!("{base}/{name}");
        let out = toolgate_async(&["fleet", "migrate", "--postgres", &url]).await;
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        let pool = PgPool::connect(&url).await.unwrap();
        let roles = include_str!("../../../scripts/fleet-roles.sql");
        sqlx::raw_sql(sqlx::AssertSqlSafe(roles)).execute(&pool).await.unwrap();
        let role = format!("{name}_ingest");
        let sql = format!("CREATE ROLE {role} LOGIN IN ROLE toolgate_ingest");
        pool.execute(sqlx::AssertSqlSafe(sql)).await.unwrap();
        let host = base.split_once('@').unwrap().1;
        let ingest = Ingest::start(&format!("postgres://{role}@{host}/{name}")).await;
        let tokens = tempfile::tempdir().unwrap();
        Self { base, name, pool, ingest, tokens }
    }

    /// The store's URL as the superuser (the operator).
    pub fn url(&self) -> String {
        format!("{}/{}", self.base, self.name)
    }

    /// Registers `node` (without a verifier key); what it ships with.
    pub async fn node(&self, node: &str) -> Registered {
        self.node_with_key(node, None).await
    }

    /// Registers `node` with its checkpoint verifier key; what it ships with.
    pub async fn node_with_key(&self, node: &str, key: Option<&str>) -> Registered {
        let url = self.url();
        let mut args = vec!["fleet", "register", "--postgres", &url, "--node", node];
        if let Some(key) = key {
            args.extend(["--key", key]);
        }
        let out = toolgate_async(&args).await;
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        let token_file = self.tokens.path().join(format!("{node}.token"));
        std::fs::write(&token_file, &out.stdout).unwrap();
        Registered { ingest: self.ingest.url.clone(), token_file }
    }

    /// The URL the store's own ingest server logs in with.
    pub fn ingest_role_url(&self) -> String {
        self.role_url(&format!("{}_ingest", self.name))
    }

    pub fn role_url(&self, role: &str) -> String {
        let host = self.base.split_once('@').unwrap().1;
        format!("postgres://{role}@{host}/{}", self.name)
    }

    /// `node`'s events in the store: (seq, hash), in seq order.
    pub async fn events(&self, node: &str) -> Vec<(i64, String)> {
        sqlx::query("SELECT seq, hash FROM fleet_events WHERE node_id = $1 ORDER BY seq")
            .bind(node)
            .fetch_all(&self.pool)
            .await
            .unwrap()
            .iter()
            .map(|r| (r.get(0), r.get(1)))
            .collect()
    }

    /// The alarms, once there is one (30 s at most).
    pub async fn first_alarms(&self) -> Vec<(String, Option<i64>, String)> {
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let alarms = self.alarms().await;
            if !alarms.is_empty() {
                return alarms;
            }
            assert!(Instant::now() < deadline, "no alarm");
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// The alarms: (node, seq, what).
    pub async fn alarms(&self) -> Vec<(String, Option<i64>, String)> {
        sqlx::query("SELECT node_id, seq, what FROM fleet_alarms ORDER BY id")
            .fetch_all(&self.pool)
            .await
            .unwrap()
            .iter()
            .map(|r| (r.get(0), r.get(1), r.get(2)))
            .collect()
    }
}

/// An ingest server (`toolgate serve --ingest`, the real binary) on an ephemeral port, killed
/// when dropped.
pub struct Ingest {
    child: std::process::Child,
    pub url: String,
    _dir: tempfile::TempDir,
}

impl Ingest {
    /// Starts one in front of the store at `postgres`, and waits until it serves.
    pub async fn start(postgres: &str) -> Self {
        let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        Self::start_on(postgres, port).await
    }

    /// The same, on `port`.
    pub async fn start_on(postgres: &str, port: u16) -> Self {
        Self::start_configured(postgres, port, "").await
    }

    /// One with the configuration file `toml`, on an ephemeral port.
    pub async fn start_with(postgres: &str, toml: &str) -> Self {
        let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        Self::start_configured(postgres, port, toml).await
    }

    async fn start_configured(postgres: &str, port: u16, toml: &str) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let config = dir.path().join("ingest.toml");
        std::fs::write(&config, toml).unwrap();
        let child = std::process::Command::new(assert_cmd::cargo::cargo_bin!("toolgate"))
            .args(["serve", "--ingest", "--postgres", postgres, "--listen"])
            .arg(format!("127.0.0.1:{port}"))
            .arg("--config")
            .arg(&config)
            .arg("--db")
            .arg(dir.path().join("unused.db"))
            .stdout(std::process::Stdio::null())
            .stderr(std::fs::File::create(dir.path().join("ingest.log")).unwrap())
            .spawn()
            .unwrap();
        let url = format!("http://127.0.0.1:{port}");
        // Owned at once: killed when dropped, however this ends.
        let ingest = Self { child, url, _dir: dir };
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let channel = tonic::transport::Channel::from_shared(ingest.url.clone()).unwrap();
            if let Ok(channel) = channel.connect().await {
                let ask = tonic_health::pb::HealthCheckRequest {
                    service: "toolgate.v1.FleetIngest".into(),
                };
                let mut health = tonic_health::pb::health_client::HealthClient::new(channel);
                if health.check(ask).await.is_ok() {
                    return ingest;
                }
            }
            assert!(Instant::now() < deadline, "the ingest server did not start");
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    /// Kills it at once (SIGKILL), mid-batch or not.
    pub fn kill9(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for Ingest {
    fn drop(&mut self) {
        self.kill9();
    }
}

pub fn shipping(node: &str, to: &Registered) -> FleetConfig {
    FleetConfig {
        node_id: Some(node.to_owned()),
        ingest_url: Some(to.ingest.clone()),
        token_file: Some(to.token_file.clone()),
        batch_events: 1000,
        every_ms: 50,
        ..FleetConfig::default()
    }
}

/// `[fleet]` as a configuration file says it.
pub fn fleet_toml(node: &str, to: &Registered, every_ms: u64) -> String {
    format!(
        "[fleet]\nnode_id = \"{node}\"\ningest_url = \"{}\"\ntoken_file = \"{}\"\nevery_ms = {every_ms}\n",
        to.ingest,
        to.token_file.display()
    )
}

/// The local trail's (seq, hash) pairs.
fn local(db: &Path) -> Vec<(i64, String)> {
    let conn = rusqlite::Connection::open(db).unwrap();
    let mut stmt = conn.prepare("SELECT seq, hash FROM events ORDER BY seq").unwrap();
    stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?))).unwrap().map(Result::unwrap).collect()
}

/// Waits until the store holds exactly the local trail of `node`.
pub async fn caught_up(fleet: &FleetDb, node: &str, db: &Path) {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let (stored, here) = (fleet.events(node).await, local(db));
        if stored == here {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "node {node}: the store holds {} events, the trail {}",
            stored.len(),
            here.len()
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

pub async fn decide_n(app: &TestApp, n: usize) {
    for _ in 0..n {
        app.client.clone().decide(request("read")).await.unwrap();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn three_sidecars_ship_concurrently_and_every_event_arrives_once() {
    let fleet = FleetDb::new(&cluster()).await;
    let mut apps = Vec::new();
    for node in ["a", "b", "c"] {
        let url = fleet.node(node).await;
        apps.push(spawn_app_with(|c| c.fleet = shipping(node, &url)).await);
    }
    let loads = apps.iter().map(|app| {
        let client = app.client.clone();
        tokio::spawn(async move {
            let mut tasks = Vec::new();
            for _ in 0..4 {
                let mut client = client.clone();
                tasks.push(tokio::spawn(async move {
                    for _ in 0..50 {
                        client.decide(request("read")).await.unwrap();
                    }
                }));
            }
            for task in tasks {
                task.await.unwrap();
            }
        })
    });
    for load in loads.collect::<Vec<_>>() {
        load.await.unwrap();
    }
    for (node, app) in ["a", "b", "c"].iter().zip(&apps) {
        caught_up(&fleet, node, &app.db).await;
        assert!(fleet.events(node).await.len() > 200, "{node}");
    }
    assert!(fleet.alarms().await.is_empty());
    let out = toolgate_async(&["verify", "--postgres", &fleet.url()]).await;
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}");
    assert!(stdout.contains("node \"b\": "), "{stdout}");
    let status = toolgate_async(&["fleet", "status", "--postgres", &fleet.url()]).await;
    let status = String::from_utf8_lossy(&status.stdout);
    assert_eq!(status.lines().count(), 3, "{status}");
    let query = toolgate_async(&[
        "query",
        "--postgres",
        &fleet.url(),
        "--node",
        "c",
        "--json",
        "--limit",
        "5",
    ])
    .await;
    let query = String::from_utf8_lossy(&query.stdout);
    assert_eq!(query.lines().count(), 5, "{query}");
    assert!(query.lines().all(|l| l.contains("\"node_id\":\"c\"")), "{query}");
    let stats = toolgate_async(&["stats", "--postgres", &fleet.url(), "--json"]).await;
    let stats: serde_json::Value = serde_json::from_slice(&stats.stdout).unwrap();
    let stored: usize = [fleet.events("a").await, fleet.events("b").await, fleet.events("c").await]
        .iter()
        .map(Vec::len)
        .sum();
    assert_eq!(stats["total"], stored);
    // One node's events export as its own trail would, and verify as one chain.
    let csv = apps[0].dir.path().join("a.csv");
    let manifest = apps[0].dir.path().join("a.json");
    let (csv, manifest) = (csv.to_str().unwrap(), manifest.to_str().unwrap());
    let out = toolgate_async(&[
        "export",
        "--postgres",
        &fleet.url(),
        "--node",
        "a",
        "-o",
        csv,
        "--manifest",
        manifest,
    ])
    .await;
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let out = toolgate_async(&["verify", "--csv", csv, "--manifest", manifest]).await;
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stdout));
    for app in apps {
        app.stop().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rewritten_node_is_refused_and_the_alarm_names_the_node_and_seq() {
    let fleet = FleetDb::new(&cluster()).await;
    let url = fleet.node("a").await;
    let app = spawn_app_with(|c| c.fleet = shipping("a", &url)).await;
    decide_n(&app, 10).await;
    caught_up(&fleet, "a", &app.db).await;
    let shipped = fleet.events("a").await.len() as i64;
    let (dir, db) = app.stop().await;
    // The node's owner rewrites its history: an event edited, the chain recomputed.
    let conn = rusqlite::Connection::open(&db).unwrap();
    conn.execute_batch("DROP TRIGGER events_no_update;").unwrap();
    conn.execute("UPDATE events SET tool = 'nothing_to_see' WHERE seq = 5", []).unwrap();
    rechain(&conn, 5);
    drop(conn);
    let config = toolgate::config::Config {
        db: db.clone(),
        fleet: shipping("a", &url),
        ..Default::default()
    };
    let app = crate::helpers::start(config, dir).await;
    // The node keeps deciding; the store refuses what no longer extends what it holds.
    decide_n(&app, 5).await;
    let alarms = fleet.first_alarms().await;
    let (node, seq, what) = &alarms[0];
    assert_eq!((node.as_str(), *seq), ("a", Some(shipped + 1)), "{what}");
    assert!(what.contains("broken link"), "{what}");
    assert_eq!(fleet.events("a").await.len() as i64, shipped, "nothing of the rewrite merged");
    let out = toolgate_async(&["fleet", "alarms", "--postgres", &fleet.url()]).await;
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stdout).contains("ALARM"));
    app.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_batch_under_another_nodes_id_is_refused_and_recorded() {
    let fleet = FleetDb::new(&cluster()).await;
    let _a = fleet.node("a").await;
    let b = fleet.node("b").await;
    // b's shipper claims to be a.
    let app = spawn_app_with(|c| c.fleet = shipping("a", &b)).await;
    decide_n(&app, 3).await;
    let alarms = fleet.first_alarms().await;
    assert_eq!(alarms[0].0, "a");
    assert!(alarms[0].2.contains("with the token of node \"b\""), "{:?}", alarms[0]);
    let shipper: Option<String> = sqlx::query_scalar("SELECT shipper FROM fleet_alarms LIMIT 1")
        .fetch_one(&fleet.pool)
        .await
        .unwrap();
    assert_eq!(shipper.as_deref(), Some("b"));
    assert!(fleet.events("a").await.is_empty() && fleet.events("b").await.is_empty());
    app.stop().await;
    // The ingest service's own role cannot rewrite what it stored, nor the registry, nor set a
    // node's tree back to store a second history after the first.
    let pool = PgPool::connect(&fleet.role_url(&format!("{}_ingest", fleet.name))).await.unwrap();
    for (sql, why) in [
        ("DELETE FROM fleet_alarms", "permission denied"),
        ("UPDATE fleet_nodes SET token_hash = NULL", "permission denied"),
        ("TRUNCATE fleet_events", "permission denied"),
        ("INSERT INTO fleet_nodes (node_id) VALUES ('x')", "permission denied"),
        ("CREATE TEMP TABLE fleet_nodes (node_id TEXT)", "permission denied"),
        ("UPDATE fleet_trees SET hash = repeat('1', 64) WHERE node_id = 'b'", "only grows"),
        ("DELETE FROM fleet_trees", "permission denied"),
        ("SELECT fleet_partition(now() + interval '2 years')", "not within a month of now"),
    ] {
        let refused = sqlx::query(sql).execute(&pool).await.unwrap_err().to_string();
        assert!(refused.contains(why), "{sql}: {refused}");
    }
    pool.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_store_that_goes_away_delays_no_decision_and_is_caught_up() {
    // Its own cluster: this test stops it.
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/scripts/postgres");
    let cluster_dir = dir.path().join("pg");
    let run = |action: &str| {
        let out =
            std::process::Command::new(script).arg(action).arg(&cluster_dir).output().unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8(out.stdout).unwrap().trim().to_owned()
    };
    let base = tokio::task::block_in_place(|| run("start"));
    let fleet = FleetDb::new(&base).await;
    let node = fleet.node("a").await;
    let http = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let db = dir.path().join("trail.db");
    let toml = format!("http_listen = \"127.0.0.1:{http}\"\n{}", fleet_toml("a", &node, 50));
    let proc = crate::faults::Proc::start(&db, &toml).await;
    let mut gate = proc.gate().await;
    // The baseline: 200 decisions with the store up, timed on this machine as it is now.
    let started = Instant::now();
    for _ in 0..200 {
        gate.decide(request("read")).await.unwrap();
    }
    let up = started.elapsed();
    caught_up(&fleet, "a", &db).await;
    fleet.pool.close().await;
    tokio::task::block_in_place(|| run("stop"));
    let started = Instant::now();
    for _ in 0..200 {
        gate.decide(request("read")).await.unwrap();
    }
    let down = started.elapsed();
    // No decision waits on the store: the same calls take what they took with it up (a
    // margin for a loaded machine, never a clock of its own).
    assert!(
        down < up * 4 + Duration::from_secs(2),
        "200 decisions took {down:?} with the store down, {up:?} with it up"
    );
    // Still ready (decisions work); the lag and the failed batches are on /metrics.
    let (ready, _) = get(http, "/readyz");
    assert_eq!(ready, 200);
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let (_, metrics) = get(http, "/metrics");
        if metrics.contains("toolgate_fleet_batches_total{result=\"failed\"}") {
            break;
        }
        assert!(Instant::now() < deadline, "no failed batch counted:\n{metrics}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    tokio::task::block_in_place(|| run("resume"));
    let fleet = FleetDb { pool: PgPool::connect(&fleet.url()).await.unwrap(), ..fleet };
    caught_up(&fleet, "a", &db).await;
    assert!(fleet.alarms().await.is_empty());
    let (_, metrics) = get(http, "/metrics");
    assert!(metric(&metrics, "toolgate_fleet_shipped_events_total") >= 400.0, "{metrics}");
    assert_eq!(metric(&metrics, "toolgate_fleet_lag_events"), 0.0, "{metrics}");
    drop(proc);
    // The log said it, once per kind of trouble, not once per try.
    let log = std::fs::read_to_string(dir.path().join("server.log")).unwrap();
    let said = log.matches("shipping is behind").count();
    assert!((1..=2).contains(&said), "{said} times:\n{log}");
    tokio::task::block_in_place(|| run("stop"));
}

/// `GET path` on the side port: the status and the body.
pub fn get(port: u16, path: &str) -> (u16, String) {
    use std::io::{Read, Write};
    let mut stream = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
    write!(stream, "GET {path} HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n").unwrap();
    let mut answer = String::new();
    stream.read_to_string(&mut answer).unwrap();
    let status = answer.split_whitespace().nth(1).unwrap().parse().unwrap();
    (status, answer.split_once("\r\n\r\n").map(|(_, b)| b.to_owned()).unwrap_or_default())
}

/// The value of an unlabelled metric.
pub fn metric(text: &str, name: &str) -> f64 {
    text.lines()
        .find_map(|l| l.strip_prefix(name)?.strip_prefix(' ')?.parse().ok())
        .unwrap_or_else(|| panic!("no {name} in\n{text}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sidecar_killed_while_shipping_resumes_with_nothing_lost_or_doubled() {
    let fleet = FleetDb::new(&cluster()).await;
    let node = fleet.node("a").await;
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("trail.db");
    let toml = fleet_toml("a", &node, 20);
    let mut proc = crate::faults::Proc::start(&db, &toml).await;
    let mut load = Vec::new();
    for _ in 0..4 {
        let mut gate = proc.gate().await;
        load.push(tokio::spawn(async move {
            // Until the server is killed under it.
            while gate.decide(request("read")).await.is_ok() {}
        }));
    }
    tokio::time::sleep(Duration::from_millis(800)).await;
    proc.kill9();
    for task in load {
        task.await.unwrap();
    }
    let killed_with = fleet.events("a").await.len();
    let proc = crate::faults::Proc::start(&db, &toml).await;
    let mut gate = proc.gate().await;
    for _ in 0..20 {
        gate.decide(request("read")).await.unwrap();
    }
    caught_up(&fleet, "a", &db).await;
    let stored = fleet.events("a").await;
    println!("killed with {killed_with} events in the store; {} after the restart", stored.len());
    assert!(stored.windows(2).all(|w| w[1].0 == w[0].0 + 1), "contiguous, once each");
    assert!(fleet.alarms().await.is_empty());
    drop(proc);
}

#[tokio::test]
async fn bad_fleet_input_gets_a_clear_error() {
    let out = toolgate_async(&[
        "fleet",
        "register",
        "--postgres",
        "postgres://x@127.0.0.1:1/x",
        "--node",
        "a b",
    ])
    .await;
    assert!(String::from_utf8_lossy(&out.stderr).contains("--node \"a b\": 1 to 128 letters"));
    let out = toolgate_async(&["verify", "--node", "a"]).await;
    assert!(String::from_utf8_lossy(&out.stderr).contains("--postgres"), "{out:?}");
    let out = toolgate_async(&["fleet", "status", "--postgres", "not a url"]).await;
    assert_eq!(out.status.code(), Some(2));
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("t.toml");
    let db = dir.path().join("t.db");
    let serve = |toml: &str| {
        std::fs::write(&config, toml).unwrap();
        let args = ["serve", "--config", config.to_str().unwrap(), "--db", db.to_str().unwrap()];
        let args: Vec<String> = args.iter().map(|a| (*a).to_owned()).collect();
        async move {
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            let out = toolgate_async(&args).await;
            assert!(!out.status.success());
            String::from_utf8_lossy(&out.stderr).into_owned()
        }
    };
    // Direct shipping is gone: the message says where to go, and never echoes the URL.
    let stderr =
        serve("[fleet]\nnode_id = \"a\"\npostgres_url = \"postgres://u:secret@h/db\"\n").await;
    assert!(stderr.contains("through the ingest service"), "{stderr}");
    assert!(!stderr.contains("secret"), "{stderr}");
    let stderr = serve("[fleet]\nnode_id = \"a\"\ningest_url = \"http://127.0.0.1:1\"\n").await;
    assert!(stderr.contains("needs a token"), "{stderr}");
    let token = dir.path().join("token");
    std::fs::write(&token, "hunter2").unwrap();
    let toml = format!(
        "[fleet]\nnode_id = \"a\"\ningest_url = \"http://127.0.0.1:1\"\ntoken_file = \"{}\"\n",
        token.display()
    );
    let stderr = serve(&toml).await;
    assert!(stderr.contains("not one `toolgate fleet register` issued"), "{stderr}");
    assert!(!stderr.contains("hunter2"), "{stderr}");
    // A token in clear to another machine: refused.
    std::fs::write(&token, "tgnode_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA").unwrap();
    let stderr = serve(&toml.replace("127.0.0.1:1", "ingest.example:50070")).await;
    assert!(stderr.contains("in clear; use https://"), "{stderr}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_time_filter_pages_in_order_across_the_months_partitions() {
    let fleet = FleetDb::new(&cluster()).await;
    // As the owner, two nodes' events, half of them in next month's partition.
    sqlx::query(
        "INSERT INTO fleet_events (node_id, seq, event_id, ts, kind, prev_hash, hash, received_at)
         SELECT n, s, n || s, '2026-11-01T00:00:' || lpad(s::text, 2, '0') || 'Z', 'decision',
                'p', 'h', CASE WHEN s <= 15 THEN now() ELSE now() + interval '1 month' END
         FROM unnest(ARRAY['a', 'b']) n, generate_series(1, 30) s",
    )
    .execute(&fleet.pool)
    .await
    .unwrap();
    let partitions: i64 = sqlx::query_scalar("SELECT count(DISTINCT tableoid) FROM fleet_events")
        .fetch_one(&fleet.pool)
        .await
        .unwrap();
    assert_eq!(partitions, 2);
    let url = fleet.url();
    let page = |args: &'static [&'static str]| {
        let url = url.clone();
        async move {
            let mut all = vec!["query", "--postgres", &url, "--json"];
            all.extend_from_slice(args);
            let out = toolgate_async(&all).await;
            assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
            String::from_utf8(out.stdout)
                .unwrap()
                .lines()
                .map(|l| {
                    let v: serde_json::Value = serde_json::from_str(l).unwrap();
                    format!("{}:{}", v["node_id"].as_str().unwrap(), v["seq"])
                })
                .collect::<Vec<_>>()
        }
    };
    let expected = |node: &str, seqs: std::ops::RangeInclusive<i64>| {
        seqs.map(|s| format!("{node}:{s}")).collect::<Vec<_>>()
    };
    let since = page(&["--since", "2026-11-01T00:00:10Z", "--limit", "7"]).await;
    assert_eq!(since, expected("a", 10..=16));
    let until = page(&["--until", "2026-11-01T00:00:20Z", "--limit", "100"]).await;
    assert_eq!(until, [expected("a", 1..=19), expected("b", 1..=19)].concat());
    let both = page(&["--since", "2026-11-01T00:00:29Z", "--until", "2026-11-01T00:00:31Z"]).await;
    assert_eq!(both, ["a:29", "a:30", "b:29", "b:30"]);
}

/// A node that has never reached its ingest service (misconfigured, firewalled) alarms: its
/// lag counts from its first event, not from nothing known.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_node_that_never_reached_its_ingest_service_reports_its_whole_lag() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("trail.db");
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let token = dir.path().join("a.token");
    std::fs::write(&token, format!("tgnode_{}", "A".repeat(43))).unwrap();
    let http = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let toml = format!(
        "http_listen = \"127.0.0.1:{http}\"\n[fleet]\nnode_id = \"a\"\n\
         ingest_url = \"http://127.0.0.1:{closed}\"\ntoken_file = \"{}\"\nevery_ms = 50\n",
        token.display()
    );
    let proc = crate::faults::Proc::start(&db, &toml).await;
    let mut gate = proc.gate().await;
    for _ in 0..8 {
        gate.decide(request("read")).await.unwrap();
    }
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let (_, metrics) = get(http, "/metrics");
        let lag = metric(&metrics, "toolgate_fleet_lag_events");
        if lag >= 9.0 {
            assert!(metric(&metrics, "toolgate_fleet_lag_seconds") > 0.0, "{metrics}");
            break;
        }
        assert!(Instant::now() < deadline, "lag {lag} with 9 events unshipped:\n{metrics}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}
