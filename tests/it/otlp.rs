//! The OTLP log export (`[export.otlp]`) against a real OTLP/gRPC receiver built from the
//! official protobuf definitions (`opentelemetry-proto`'s `LogsService`): every event arrives,
//! in order, with the attributes that let the receiver check the chain; a receiver that is
//! down, failing or hanging delays no decision and loses nothing, and the cursor resumes
//! across a restart of the sidecar.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use opentelemetry_proto::tonic::collector::logs::v1::logs_service_server::{
    LogsService, LogsServiceServer,
};
use opentelemetry_proto::tonic::collector::logs::v1::{
    ExportLogsServiceRequest, ExportLogsServiceResponse,
};
use opentelemetry_proto::tonic::common::v1::any_value::Value as Any;
use opentelemetry_proto::tonic::logs::v1::LogRecord;
use tokio::net::TcpListener;
use tonic::{Request, Response, Status};
use toolgate::config::{Config, OtlpConfig};
use toolgate::trail::{COLUMNS, Event, Value, event_hash};

use crate::helpers::{TestApp, eventually, request, start};

/// How the receiver answers.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Mode {
    Take,
    Fail,
    Hang,
}

/// A collector that keeps what it takes.
#[derive(Debug, Clone)]
struct Receiver {
    mode: Arc<Mutex<Mode>>,
    records: Arc<Mutex<Vec<LogRecord>>>,
    requests: Arc<Mutex<u32>>,
}

#[tonic::async_trait]
impl LogsService for Receiver {
    async fn export(
        &self,
        request: Request<ExportLogsServiceRequest>,
    ) -> Result<Response<ExportLogsServiceResponse>, Status> {
        *self.requests.lock().unwrap() += 1;
        let mode = *self.mode.lock().unwrap();
        match mode {
            Mode::Fail => return Err(Status::unavailable("the collector is overloaded")),
            Mode::Hang => tokio::time::sleep(Duration::from_secs(3600)).await,
            Mode::Take => {}
        }
        let request = request.into_inner();
        for resource in request.resource_logs {
            let attributes = resource.resource.unwrap().attributes;
            assert!(attributes.iter().any(|kv| kv.key == "service.name"));
            for scope in resource.scope_logs {
                assert_eq!(scope.scope.unwrap().name, "toolgate.trail");
                self.records.lock().unwrap().extend(scope.log_records);
            }
        }
        Ok(Response::new(ExportLogsServiceResponse::default()))
    }
}

impl Receiver {
    fn new(mode: Mode) -> Self {
        Self { mode: Arc::new(Mutex::new(mode)), records: Arc::default(), requests: Arc::default() }
    }

    /// Serves on `listener` until the handle is aborted.
    fn serve(&self, listener: TcpListener) -> tokio::task::JoinHandle<()> {
        let service = LogsServiceServer::new(self.clone());
        tokio::spawn(async move {
            let incoming = tokio_stream::wrappers::TcpListenerStream::new(listener);
            let _ = tonic::transport::Server::builder()
                .add_service(service)
                .serve_with_incoming(incoming)
                .await;
        })
    }

    fn seqs(&self) -> Vec<i64> {
        self.records.lock().unwrap().iter().map(|r| int(r, "toolgate.seq")).collect()
    }

    /// Waits until the receiver holds every seq up to `last`.
    async fn until(&self, last: i64) -> Vec<i64> {
        let reached = async || {
            let seqs = self.seqs();
            if seqs.last().is_some_and(|&seq| seq >= last) { Ok(seqs) } else { Err(seqs) }
        };
        let ms = Duration::from_millis;
        eventually(ms(10_000), ms(50), reached).await.unwrap_or_else(|seqs| seqs)
    }
}

fn attribute(record: &LogRecord, key: &str) -> Option<Any> {
    record.attributes.iter().find(|kv| kv.key == key)?.value.clone()?.value
}

fn int(record: &LogRecord, key: &str) -> i64 {
    match attribute(record, key) {
        Some(Any::IntValue(n)) => n,
        other => panic!("{key}: {other:?}"),
    }
}

fn text(record: &LogRecord, key: &str) -> Option<String> {
    match attribute(record, key)? {
        Any::StringValue(s) => Some(s),
        other => panic!("{key}: {other:?}"),
    }
}

/// The event a record carries, rebuilt from its `toolgate.*` attributes alone.
fn rebuilt(record: &LogRecord) -> Event {
    let owned: Vec<Option<Any>> =
        COLUMNS.iter().map(|c| attribute(record, &format!("toolgate.{}", c.name))).collect();
    let cells: Vec<Option<Value<'_>>> = owned
        .iter()
        .map(|cell| match cell {
            Some(Any::IntValue(n)) => Some(Value::Integer(*n)),
            Some(Any::StringValue(s)) => Some(Value::Text(s.as_bytes())),
            None => None,
            other => panic!("{other:?}"),
        })
        .collect();
    Event::from_cells(&cells.try_into().unwrap()).unwrap()
}

async fn port() -> (TcpListener, u16) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    (listener, port)
}

fn config(dir: &tempfile::TempDir, port: u16) -> Config {
    let mut config = Config { db: dir.path().join("trail.db"), ..Config::default() };
    config.export.otlp = Some(OtlpConfig {
        endpoint: format!("http://127.0.0.1:{port}"),
        every_ms: 20,
        timeout_ms: 500,
        batch_events: 7,
        ..OtlpConfig::default()
    });
    config
}

/// Decides `n` reads; each must be answered within a second, whatever the collector does.
async fn decide(app: &mut TestApp, n: usize) -> i64 {
    let mut last = 0;
    for _ in 0..n {
        let started = std::time::Instant::now();
        last = app.decide(request("read")).await.seq as i64;
        assert!(started.elapsed() < Duration::from_secs(1), "{:?}", started.elapsed());
    }
    last
}

#[tokio::test]
async fn every_event_arrives_once_in_order_and_the_chain_checks_from_the_records() {
    let receiver = Receiver::new(Mode::Take);
    let (listener, port) = port().await;
    let serving = receiver.serve(listener);
    let dir = tempfile::tempdir().unwrap();
    let mut app = start(config(&dir, port), dir).await;

    let last = decide(&mut app, 30).await;
    let seqs = receiver.until(last).await;

    assert_eq!(seqs, (1..=last).collect::<Vec<_>>(), "every event, once, in order");
    let records = receiver.records.lock().unwrap().clone();
    let mut prev = hex::encode(toolgate::trail::GENESIS_HASH);
    for record in &records {
        let event = rebuilt(record);
        assert_eq!(event.prev_hash, prev, "seq {}", event.seq);
        let prev_bytes: [u8; 32] = hex::decode(&prev).unwrap().try_into().unwrap();
        assert_eq!(hex::encode(event_hash(&prev_bytes, &event)), event.hash, "seq {}", event.seq);
        prev = event.hash.clone();
    }
    let decision = records.iter().find(|r| r.event_name == "toolgate.decision").unwrap();
    assert_eq!(text(decision, "gen_ai.operation.name").as_deref(), Some("execute_tool"));
    assert_eq!(text(decision, "gen_ai.tool.name").as_deref(), Some("read"));
    assert_eq!(text(decision, "toolgate.outcome").as_deref(), Some("allow"));
    assert!(text(decision, "toolgate.args_hash").is_some());
    assert!(text(decision, "gen_ai.tool.call.arguments").is_none(), "arguments stay out");
    // The decision as a guardrail run, beside today's attributes.
    assert_eq!(text(decision, "gen_ai.guardrail.verdict.type").as_deref(), Some("allow"));
    assert_eq!(text(decision, "gen_ai.guardrail.action.type").as_deref(), Some("allow"));
    let hash = text(decision, "toolgate.args_hash").unwrap();
    let input = text(decision, "gen_ai.guardrail.security.content.input.hash");
    assert_eq!(input, Some(format!("sha256:{hash}")));
    assert_eq!(
        text(decision, "gen_ai.guardrail.target.id"),
        text(decision, "toolgate.decision_id")
    );
    app.stop().await;
    serving.abort();
}

#[tokio::test]
async fn a_collector_down_then_back_gets_everything_and_the_cursor_survives_a_restart() {
    let (listener, port) = port().await;
    drop(listener);
    let dir = tempfile::tempdir().unwrap();
    let config = config(&dir, port);
    let cursor = dir.path().join("trail.db.otlp-cursor");
    let mut app = start(config.clone(), dir).await;

    // Nothing listens: decisions go on, and nothing is acknowledged.
    let before = decide(&mut app, 10).await;
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert!(!cursor.exists());

    let receiver = Receiver::new(Mode::Take);
    let serving = receiver.serve(TcpListener::bind(("127.0.0.1", port)).await.unwrap());
    let last = decide(&mut app, 5).await;
    let seqs = receiver.until(last).await;
    assert!(last > before);
    assert_eq!(seqs, (1..=last).collect::<Vec<_>>());
    // The cursor is written once the collector's answer is in: a moment after it took them.
    let started = std::time::Instant::now();
    let kept = loop {
        let kept = std::fs::read_to_string(&cursor).unwrap_or_default();
        if kept.starts_with(&format!("{last} ")) || started.elapsed() > Duration::from_secs(10) {
            break kept;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    assert!(kept.starts_with(&format!("{last} ")), "the seq and its hash: {kept}");

    // A restart resumes after the cursor: the new events only.
    let (dir, _) = app.stop().await;
    let mut app = start(config, dir).await;
    let after = decide(&mut app, 3).await;
    let seqs = receiver.until(after).await;
    assert_eq!(seqs, (1..=after).collect::<Vec<_>>(), "no gap, no duplicate");
    app.stop().await;
    serving.abort();
}

#[tokio::test]
async fn a_failing_or_hanging_collector_delays_no_decision_and_loses_nothing() {
    for mode in [Mode::Fail, Mode::Hang] {
        let receiver = Receiver::new(mode);
        let (listener, port) = port().await;
        let serving = receiver.serve(listener);
        let dir = tempfile::tempdir().unwrap();
        let mut app = start(config(&dir, port), dir).await;

        decide(&mut app, 20).await;
        tokio::time::sleep(Duration::from_millis(300)).await;
        assert!(*receiver.requests.lock().unwrap() > 0, "{mode:?}: it was tried");
        assert!(receiver.seqs().is_empty(), "{mode:?}");

        *receiver.mode.lock().unwrap() = Mode::Take;
        let last = decide(&mut app, 1).await;
        let seqs = receiver.until(last).await;
        assert_eq!(seqs, (1..=last).collect::<Vec<_>>(), "{mode:?}: nothing lost");
        app.stop().await;
        serving.abort();
    }
}

#[tokio::test]
async fn http_protobuf_posts_the_same_records_to_v1_logs() {
    use prost::Message;
    let records: Arc<Mutex<Vec<LogRecord>>> = Arc::default();
    let kept = records.clone();
    let app = axum::Router::new().route(
        "/v1/logs",
        axum::routing::post(move |headers: axum::http::HeaderMap, body: axum::body::Bytes| {
            let kept = kept.clone();
            async move {
                assert_eq!(headers["content-type"], "application/x-protobuf");
                let request = ExportLogsServiceRequest::decode(body).unwrap();
                for resource in request.resource_logs {
                    for scope in resource.scope_logs {
                        kept.lock().unwrap().extend(scope.log_records);
                    }
                }
                ExportLogsServiceResponse::default().encode_to_vec()
            }
        }),
    );
    let (listener, port) = port().await;
    let serving = tokio::spawn(async move { axum::serve(listener, app).await });
    let dir = tempfile::tempdir().unwrap();
    let mut config = config(&dir, port);
    config.export.otlp.as_mut().unwrap().protocol = toolgate::config::OtlpProtocol::HttpProtobuf;
    let mut sidecar = start(config, dir).await;

    let last = decide(&mut sidecar, 10).await;
    for _ in 0..200 {
        if records.lock().unwrap().len() as i64 >= last {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }

    let seqs: Vec<i64> = records.lock().unwrap().iter().map(|r| int(r, "toolgate.seq")).collect();
    assert_eq!(seqs, (1..=last).collect::<Vec<_>>());
    sidecar.stop().await;
    serving.abort();
}

#[tokio::test]
async fn a_cursor_that_names_an_event_the_trail_does_not_hold_starts_again_from_the_top() {
    let receiver = Receiver::new(Mode::Take);
    let (listener, port) = port().await;
    let serving = receiver.serve(listener);
    let dir = tempfile::tempdir().unwrap();
    // Left from a trail this one replaced.
    std::fs::write(dir.path().join("trail.db.otlp-cursor"), format!("999 {}\n", "ab".repeat(32)))
        .unwrap();
    let mut app = start(config(&dir, port), dir).await;

    let last = decide(&mut app, 3).await;

    assert_eq!(receiver.until(last).await, (1..=last).collect::<Vec<_>>());
    app.stop().await;
    serving.abort();
}
