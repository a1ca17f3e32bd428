//! Starting the real server for a test, and reading its trail from outside.

use std::path::{Path, PathBuf};
use std::process::Output;
use std::time::Duration;

use tempfile::TempDir;
use tokio::net::TcpListener;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;
use tonic::transport::Channel;
use tonic_health::pb::HealthCheckRequest;
use tonic_health::pb::health_check_response::ServingStatus;
use tonic_health::pb::health_client::HealthClient;
use toolgate::auth::token_digest;
use toolgate::config::Config;
use toolgate::config::TokenSpec;
use toolgate::proto::gate_client::GateClient;
use toolgate::proto::{Actor, DecideRequest, DecideResponse, RunOptions};
use toolgate::server::ServerError;

/// A running server and a client connected to it.
pub struct TestApp {
    /// `http://127.0.0.1:PORT`, for the command line's `--server`.
    pub url: String,
    pub client: GateClient<Channel>,
    pub channel: Channel,
    pub db: PathBuf,
    pub dir: TempDir,
    stop: oneshot::Sender<()>,
    server: JoinHandle<Result<(), ServerError>>,
}

/// Starts a server with the default configuration on a fresh database.
pub async fn spawn_app() -> TestApp {
    spawn_app_with(|_| {}).await
}

/// Starts a server on a fresh database, with the configuration changed by `configure`.
pub async fn spawn_app_with(configure: impl FnOnce(&mut Config)) -> TestApp {
    let dir = tempfile::tempdir().unwrap();
    let mut config = Config { db: dir.path().join("trail.db"), ..Config::default() };
    configure(&mut config);
    start(config, dir).await
}

/// Starts a server with `config`, keeping `dir` alive as long as the app.
pub async fn start(config: Config, dir: TempDir) -> TestApp {
    serve(config, dir, None).await
}

/// Starts a server on a fresh database with its HTTP side port on, with the configuration
/// changed by `configure`; returns it and the side port's `http://127.0.0.1:PORT`.
pub async fn spawn_app_with_side_port(configure: impl FnOnce(&mut Config)) -> (TestApp, String) {
    let dir = tempfile::tempdir().unwrap();
    let mut config = Config { db: dir.path().join("trail.db"), ..Config::default() };
    configure(&mut config);
    start_with_side_port(config, dir).await
}

/// Starts a server with `config` and its HTTP side port on, keeping `dir` alive as long as the
/// app; returns it and the side port's `http://127.0.0.1:PORT`.
pub async fn start_with_side_port(config: Config, dir: TempDir) -> (TestApp, String) {
    let http = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let side = format!("http://{}", http.local_addr().unwrap());
    (serve(config, dir, Some(http)).await, side)
}

async fn serve(config: Config, dir: TempDir, http: Option<TcpListener>) -> TestApp {
    init_logs();
    let db = config.db.clone();
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let (stop, stopped) = oneshot::channel::<()>();
    let listener = toolgate::listener::Listener::Tcp(listener);
    let server = tokio::spawn(toolgate::server::run(config, listener, http, async {
        let _ = stopped.await;
    }));
    let channel = Channel::from_shared(format!("http://{addr}")).unwrap().connect().await.unwrap();
    wait_until_serving(channel.clone()).await;
    let url = format!("http://{addr}");
    TestApp { url, client: GateClient::new(channel.clone()), channel, db, dir, stop, server }
}

impl TestApp {
    /// Shuts the server down gracefully and returns its directory, so that a test can restart
    /// on the same database.
    pub async fn stop(self) -> (TempDir, PathBuf) {
        drop(self.client);
        drop(self.channel);
        self.stop.send(()).unwrap();
        self.server.await.unwrap().unwrap();
        (self.dir, self.db)
    }

    /// Decides a request, panicking on a gRPC error.
    pub async fn decide(&mut self, request: DecideRequest) -> DecideResponse {
        self.client.decide(request).await.unwrap().into_inner()
    }
}

/// A well-formed request for `tool`, by actor `alice` in session `s1`.
pub fn request(tool: &str) -> DecideRequest {
    DecideRequest {
        session_id: "s1".into(),
        actor: Some(Actor { id: "alice".into(), kind: "agent".into(), ..Default::default() }),
        tool: tool.into(),
        args_json: r#"{"path":"src/main.rs"}"#.into(),
        ..Default::default()
    }
}

/// The same request with the given run options.
pub fn with_options(
    mut request: DecideRequest,
    allow_write: bool,
    allow_bash: bool,
) -> DecideRequest {
    request.options = Some(RunOptions { allow_write, allow_bash, max_output_chars: 0 });
    request
}

/// One trail row as the tests look at it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Row {
    pub seq: i64,
    pub kind: String,
    pub actor_id: Option<String>,
    pub tool: Option<String>,
    pub action: Option<String>,
    pub resource_id: Option<String>,
    pub args_hash: Option<String>,
    pub decision_id: Option<String>,
    pub outcome: Option<String>,
    pub reason: Option<String>,
    pub error: Option<String>,
    pub request: Option<String>,
    pub truncated: Option<i64>,
}

/// Every row of the trail, read with a separate SQLite connection.
pub fn rows(db: &Path) -> Vec<Row> {
    let conn = rusqlite::Connection::open(db).unwrap();
    let mut stmt = conn
        .prepare(
            "SELECT seq, kind, actor_id, tool, action, resource_id, args_hash, decision_id,
                    outcome, reason, error, request, truncated
             FROM events ORDER BY seq",
        )
        .unwrap();
    stmt.query_map([], |r| {
        Ok(Row {
            seq: r.get(0)?,
            kind: r.get(1)?,
            actor_id: r.get(2)?,
            tool: r.get(3)?,
            action: r.get(4)?,
            resource_id: r.get(5)?,
            args_hash: r.get(6)?,
            decision_id: r.get(7)?,
            outcome: r.get(8)?,
            reason: r.get(9)?,
            error: r.get(10)?,
            request: r.get(11)?,
            truncated: r.get(12)?,
        })
    })
    .unwrap()
    .map(Result::unwrap)
    .collect()
}

/// Runs the real `toolgate` binary.
pub fn toolgate(args: &[&str]) -> Output {
    assert_cmd::Command::cargo_bin("toolgate").unwrap().args(args).output().unwrap()
}

/// Runs the real `toolgate` binary off the async runtime (the server under test runs on it).
pub async fn toolgate_async(args: &[&str]) -> Output {
    let args: Vec<String> = args.iter().map(|a| (*a).to_owned()).collect();
    tokio::task::spawn_blocking(move || {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        toolgate(&args)
    })
    .await
    .unwrap()
}

/// `toolgate verify --db DB`: its exit code and stdout.
pub fn verify(db: &Path) -> (i32, String) {
    let out = toolgate(&["verify", "--db", db.to_str().unwrap()]);
    (out.status.code().unwrap(), String::from_utf8(out.stdout).unwrap())
}

/// Polls the health service until the gate serves: the trail is open and the policy recorded.
async fn wait_until_serving(channel: Channel) {
    let mut health = HealthClient::new(channel);
    for _ in 0..500 {
        let ask = HealthCheckRequest { service: "toolgate.v1.Gate".into() };
        if let Ok(answer) = health.check(ask).await
            && answer.into_inner().status() == ServingStatus::Serving
        {
            return;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("the server did not start serving within 5 s");
}

fn init_logs() {
    if std::env::var_os("TEST_LOG").is_some() {
        toolgate::telemetry::init(false);
    }
}

/// A bearer token of `[[auth.tokens]]`: its id, the secret a client presents, its roles (as
/// JSON) and the actor ids its holder may act as.
pub fn token(id: &str, secret: &str, roles: &str, actors: &[&str]) -> TokenSpec {
    TokenSpec {
        id: id.into(),
        sha256: token_digest(secret),
        roles: serde_json::from_str(roles).unwrap(),
        actors: actors.iter().map(|a| (*a).to_owned()).collect(),
        harness_approvals: false,
    }
}

/// Tries `check` every `every` until it is `Ok`, for at most `limit`: its `Ok`, or its last
/// `Err` once the time is up. The one polling loop of the tests.
pub async fn eventually<T, E>(
    limit: Duration,
    every: Duration,
    mut check: impl AsyncFnMut() -> Result<T, E>,
) -> Result<T, E> {
    let started = std::time::Instant::now();
    loop {
        match check().await {
            Ok(done) => return Ok(done),
            Err(last) if started.elapsed() >= limit => return Err(last),
            Err(_) => tokio::time::sleep(every).await,
        }
    }
}
