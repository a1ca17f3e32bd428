//! The OTLP exporter under load: Decide throughput with the exporter off and on, in alternating
//! rounds against fresh servers, and how far the collector falls behind while the load runs.
//! The collector is an in-process OTLP/gRPC `LogsService` that acknowledges at once and keeps
//! only the highest seq it was sent, so what is measured is the sidecar's side.

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};
use std::time::Duration;

use opentelemetry_proto::tonic::collector::logs::v1::logs_service_server::{
    LogsService, LogsServiceServer,
};
use opentelemetry_proto::tonic::collector::logs::v1::{
    ExportLogsServiceRequest, ExportLogsServiceResponse,
};
use opentelemetry_proto::tonic::common::v1::any_value::Value;
use tonic::transport::Channel;

use super::{Call, ServerProcess, connect};
use crate::config::Durability;
use crate::proto::HeadRequest;
use crate::proto::audit_client::AuditClient;
use crate::proto::gate_client::GateClient;

/// A collector that remembers the highest seq it took, and tells each time it takes one.
#[derive(Debug, Clone, Default)]
struct Sink {
    highest: Arc<AtomicI64>,
    took: Arc<tokio::sync::Notify>,
}

#[tonic::async_trait]
impl LogsService for Sink {
    async fn export(
        &self,
        request: tonic::Request<ExportLogsServiceRequest>,
    ) -> Result<tonic::Response<ExportLogsServiceResponse>, tonic::Status> {
        let records = request.into_inner().resource_logs.into_iter().flat_map(|r| r.scope_logs);
        for record in records.flat_map(|s| s.log_records) {
            let seq = record.attributes.iter().find(|kv| kv.key == "toolgate.seq");
            if let Some(Value::IntValue(seq)) = seq.and_then(|kv| kv.value.clone()?.value) {
                self.highest.fetch_max(seq, Ordering::Relaxed);
            }
        }
        self.took.notify_waiters();
        Ok(tonic::Response::new(ExportLogsServiceResponse::default()))
    }
}

/// One round's figures.
#[derive(Debug)]
pub struct Round {
    pub exporting: bool,
    /// Decide calls per second, and over the health baseline.
    pub rate: f64,
    pub vs_baseline: f64,
    /// With the exporter: the most events the collector was behind, sampled every second.
    pub max_lag: i64,
    /// With the exporter: how long after the load stopped the collector had everything.
    pub drained: Duration,
    /// The server's CPU time per event appended while Decide ran (until the export caught up),
    /// in microseconds: what the exporter adds shows here even where the two cores are shared
    /// with the load generator and the collector.
    pub cpu_us_per_event: f64,
    /// With the exporter, once the load is over: how long after a lone Decide was answered
    /// the collector had its event (sorted, one per probe).
    pub after_commit: Vec<Duration>,
}

/// How many lone Decides a round probes the export's latency with, and the pause between.
const PROBES: usize = 40;
const PROBE_SPACING: Duration = Duration::from_millis(37);

/// The trail's last seq.
async fn head(audit: &mut AuditClient<Channel>) -> anyhow::Result<i64> {
    Ok(i64::try_from(audit.head(HeadRequest::default()).await?.into_inner().seq)?)
}

/// `rounds` pairs of rounds (off, then on) of `duration` at `concurrency`.
pub async fn measure_export(
    concurrency: usize,
    connections: usize,
    duration: Duration,
    rounds: usize,
) -> anyhow::Result<Vec<Round>> {
    let sink = Sink::default();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let port = listener.local_addr()?.port();
    let serving = tokio::spawn({
        let service = LogsServiceServer::new(sink.clone());
        async move {
            let incoming = tokio_stream::wrappers::TcpListenerStream::new(listener);
            tonic::transport::Server::builder()
                .add_service(service)
                .serve_with_incoming(incoming)
                .await
        }
    });
    let mut figures = Vec::new();
    for exporting in std::iter::repeat_n([false, true], rounds).flatten() {
        let dir = tempfile::tempdir()?;
        let db = dir.path().join("bench.db");
        let config = dir.path().join("toolgate.toml");
        let section = format!("[export.otlp]\nendpoint = \"http://127.0.0.1:{port}\"\n");
        std::fs::write(&config, if exporting { section } else { String::new() })?;
        sink.highest.store(0, Ordering::Relaxed);
        figures
            .push(round(&db, &config, exporting, &sink, concurrency, connections, duration).await?);
    }
    serving.abort();
    Ok(figures)
}

async fn round(
    db: &Path,
    config: &Path,
    exporting: bool,
    sink: &Sink,
    concurrency: usize,
    connections: usize,
    duration: Duration,
) -> anyhow::Result<Round> {
    let server = ServerProcess::start_with(db, Durability::Full, Some(config)).await?;
    let endpoint = Channel::from_shared(server.url.clone())?;
    let channels = connect(&endpoint, connections).await?;
    let mut audit = AuditClient::new(channels[0].clone());
    let mut sampling = audit.clone();
    let (highest, max_lag) = (sink.highest.clone(), Arc::new(AtomicI64::new(0)));
    let most = max_lag.clone();
    let lag = tokio::spawn(async move {
        loop {
            tokio::time::sleep(Duration::from_secs(1)).await;
            let Ok(head) = sampling.head(HeadRequest::default()).await else { return };
            let head = i64::try_from(head.into_inner().seq).unwrap_or(i64::MAX);
            most.fetch_max(head - highest.load(Ordering::Relaxed), Ordering::Relaxed);
        }
    });
    let baseline =
        super::load::drive(&channels, (concurrency, duration), Call::Health, 0, None).await;
    let (cpu_before, head_before) = (server.cpu_seconds().unwrap_or(0.0), head(&mut audit).await?);
    let decide =
        super::load::drive(&channels, (concurrency, duration), Call::Decide, 0, None).await;
    let stopped = tokio::time::Instant::now();
    let head = head(&mut audit).await?;
    let mut drained = Duration::ZERO;
    if exporting {
        while sink.highest.load(Ordering::Relaxed) < head
            && stopped.elapsed() < Duration::from_secs(60)
        {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        drained = stopped.elapsed();
    }
    lag.abort();
    let mut after_commit = Vec::new();
    if exporting {
        let mut gate = GateClient::new(channels[0].clone());
        for n in 0..PROBES {
            tokio::time::sleep(PROBE_SPACING).await;
            let took = sink.took.notified();
            tokio::pin!(took);
            took.as_mut().enable();
            let answer = gate.decide(super::load::decide_request(0, n as u64)).await?;
            let (seq, answered) = (answer.into_inner().seq, tokio::time::Instant::now());
            let seq = i64::try_from(seq)?;
            while sink.highest.load(Ordering::Relaxed) < seq {
                if tokio::time::timeout(Duration::from_secs(5), took.as_mut()).await.is_err() {
                    anyhow::bail!("the collector did not get seq {seq} within 5 s");
                }
                took.set(sink.took.notified());
                took.as_mut().enable();
            }
            after_commit.push(answered.elapsed());
        }
        after_commit.sort();
    }
    let max_lag = if exporting { max_lag.load(Ordering::Relaxed) } else { 0 };
    // The CPU of the Decide phase, and of the export it caused, caught up.
    let cpu = server.cpu_seconds().unwrap_or(0.0) - cpu_before;
    drop(channels);
    server.stop().await;
    Ok(Round {
        exporting,
        rate: decide.rate(),
        vs_baseline: decide.rate() / baseline.rate().max(f64::MIN_POSITIVE),
        max_lag,
        drained,
        cpu_us_per_event: cpu * 1e6 / (head - head_before).max(1) as f64,
        after_commit,
    })
}
