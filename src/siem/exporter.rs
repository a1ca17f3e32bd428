//! The OTLP exporter: the trail's committed events go to an OpenTelemetry collector as log
//! records, in `seq` order, in batches, from a durable cursor (the last seq the collector
//! acknowledged, kept in a file beside the trail and written only after the acknowledgement):
//! delivery at least once, across restarts of either side. It reads through the read-only
//! connections and never touches the writer, so a collector that is down, refusing or slow
//! delays no decision and loses no event (the trail is the buffer); the lag is on `/metrics`.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use opentelemetry_proto::tonic::collector::logs::v1::ExportLogsServiceRequest;
use opentelemetry_proto::tonic::collector::logs::v1::logs_service_client::LogsServiceClient;
use prost::Message;
use tokio::sync::watch;
use tonic::transport::{Channel, ClientTlsConfig, Endpoint};

use super::otlp::{Origin, request};
use crate::backoff::Backoff;
use crate::config::{Config, OtlpProtocol};
use crate::metrics::Metrics;
use crate::store::{Filter, Reader};

/// The largest request sent: under the 4 MiB a gRPC server takes by default.
const MAX_REQUEST_BYTES: usize = 3 * 1024 * 1024;

/// Why `[export.otlp]` is refused at start.
#[derive(Debug, thiserror::Error)]
pub enum OtlpConfigError {
    #[error("[export.otlp] endpoint `{0}` is not an http:// or https:// URL")]
    Endpoint(String),
}

/// How requests reach the collector.
#[derive(Debug, Clone)]
enum Transport {
    Grpc(LogsServiceClient<Channel>),
    Http { client: reqwest::Client, url: String },
}

/// A configured exporter, ready to run.
#[derive(Debug)]
pub struct Exporter {
    transport: Transport,
    endpoint: String,
    batch: u32,
    every: Duration,
    timeout: Duration,
    cursor: PathBuf,
    origin: Origin,
}

/// The exporter `[export.otlp]` asks for, if it asks for one.
pub fn exporter(config: &Config) -> Result<Option<Exporter>, OtlpConfigError> {
    let Some(otlp) = &config.export.otlp else { return Ok(None) };
    let endpoint = otlp.endpoint.trim_end_matches('/').to_owned();
    let web = endpoint.starts_with("http://") || endpoint.starts_with("https://");
    if !web {
        return Err(OtlpConfigError::Endpoint(otlp.endpoint.clone()));
    }
    let timeout = Duration::from_millis(otlp.timeout_ms.max(1));
    let transport = match otlp.protocol {
        OtlpProtocol::Grpc => {
            let bad = |_| OtlpConfigError::Endpoint(otlp.endpoint.clone());
            let mut channel = Endpoint::from_shared(endpoint.clone()).map_err(bad)?;
            if endpoint.starts_with("https://") {
                let tls = ClientTlsConfig::new().with_native_roots();
                channel = channel.tls_config(tls).map_err(bad)?;
            }
            let channel = channel.connect_timeout(timeout).connect_lazy();
            Transport::Grpc(LogsServiceClient::new(channel))
        }
        OtlpProtocol::HttpProtobuf => Transport::Http {
            client: reqwest::Client::new(),
            url: if endpoint.ends_with("/v1/logs") {
                endpoint.clone()
            } else {
                format!("{endpoint}/v1/logs")
            },
        },
    };
    let cursor = otlp.cursor_file.clone().unwrap_or_else(|| {
        let mut name = config.db.clone().into_os_string();
        name.push(".otlp-cursor");
        PathBuf::from(name)
    });
    let node = config.fleet.node_id.clone();
    let instance = otlp.instance_id.clone().or_else(|| node.clone()).unwrap_or_else(host_name);
    Ok(Some(Exporter {
        transport,
        endpoint,
        batch: otlp.batch_events.clamp(1, 10_000),
        every: Duration::from_millis(otlp.every_ms.max(1)),
        timeout,
        cursor,
        origin: Origin { instance, node },
    }))
}

/// Why a round of exporting stopped short.
#[derive(Debug, thiserror::Error)]
enum Trouble {
    #[error("the collector at {0} did not take the batch: {1}")]
    Collector(String, String),
    #[error("the collector at {0} found the batch too large: {1}")]
    TooLarge(String, String),
    #[error("cannot read the trail: {0}")]
    Trail(#[from] crate::store::StoreError),
    #[error("cannot keep the cursor in {0}: {1}")]
    Cursor(PathBuf, std::io::Error),
}

impl Exporter {
    /// The collector's address, for the log.
    pub fn endpoint(&self) -> &str {
        &self.endpoint
    }

    /// Exports until `stopping` turns true.
    pub async fn run(
        self,
        reader: Reader,
        metrics: Arc<Metrics>,
        mut stopping: watch::Receiver<bool>,
    ) {
        let mut cursor = self.resume(&reader).await;
        let mut batch = self.batch;
        let mut pause = Duration::ZERO;
        let mut backoff = Backoff::new(self.every);
        loop {
            let stop = tokio::select! {
                _ = stopping.wait_for(|stop| *stop) => true,
                () = tokio::time::sleep(pause) => false,
            };
            if stop {
                return;
            }
            match self.round(&reader, &metrics, &mut cursor, batch).await {
                Ok(more) => {
                    batch = (batch * 2).min(self.batch);
                    let recovered;
                    (pause, recovered) = backoff.succeeded(more);
                    if recovered {
                        tracing::info!(endpoint = %self.endpoint, "exporting to the collector again");
                    }
                }
                Err(why) => {
                    // A batch the collector finds too large is sent again in halves, down to
                    // one event; anything else is tried again later, as it is.
                    if matches!(why, Trouble::TooLarge(..)) {
                        batch = (batch / 2).max(1);
                    }
                    let message = why.to_string();
                    let new;
                    (pause, new) = backoff.failed(message.clone());
                    if new {
                        tracing::warn!(seq = cursor, "OTLP export is behind: {message}");
                    }
                }
            }
        }
    }

    /// Where the cursor file says to go on from: after the seq it names, if the trail's event
    /// there is the one it names; from the start otherwise (a trail replaced, restored from a
    /// backup, or a cursor that does not read), since sending twice is safe and skipping is not.
    async fn resume(&self, reader: &Reader) -> i64 {
        let file = self.cursor.display();
        let (seq, hash) = match read_cursor(&self.cursor) {
            Ok(cursor) => cursor,
            Err(e) => {
                tracing::error!(%file, error = %e, "the OTLP cursor does not read: exporting from the start");
                return 0;
            }
        };
        if seq == 0 {
            return 0;
        }
        match reader.event(seq).await {
            Ok(Some(event)) if hash.as_deref().is_none_or(|h| h == event.hash) => seq,
            Ok(_) => {
                tracing::error!(%file, seq, "the OTLP cursor names an event this trail does not hold: exporting from the start");
                0
            }
            Err(e) => {
                tracing::error!(%file, error = %e, "cannot check the OTLP cursor: exporting from the start");
                0
            }
        }
    }

    /// Exports one batch of at most `batch` events after `cursor`; whether more are waiting.
    async fn round(
        &self,
        reader: &Reader,
        metrics: &Metrics,
        cursor: &mut i64,
        batch: u32,
    ) -> Result<bool, Trouble> {
        let mut events = reader.query(&Filter::default(), *cursor, batch).await?;
        if events.is_empty() {
            metrics.otlp_lag(0, 0.0);
            return Ok(false);
        }
        let mut request = request(&events, &self.origin);
        while request.encoded_len() > MAX_REQUEST_BYTES && events.len() > 1 {
            events.truncate(events.len() / 2);
            request = super::otlp::request(&events, &self.origin);
        }
        // INVARIANT: `events` is not empty (checked above, and halving keeps one).
        let last = events[events.len() - 1].clone();
        if let Err((too_large, why)) = self.send(request).await {
            metrics.otlp_batch(None);
            let behind = reader.head().await?.map_or(0, |h| h.seq) - *cursor;
            metrics.otlp_lag(behind.unsigned_abs(), events[0].age_seconds());
            let endpoint = self.endpoint.clone();
            return Err(if too_large {
                Trouble::TooLarge(endpoint, why)
            } else {
                Trouble::Collector(endpoint, why)
            });
        }
        let (path, seq, hash) = (self.cursor.clone(), last.seq, last.hash.clone());
        tokio::task::spawn_blocking(move || write_cursor(&path, seq, &hash))
            .await
            .map_err(|e| std::io::Error::other(e.to_string()))
            .and_then(|written| written)
            .map_err(|e| Trouble::Cursor(self.cursor.clone(), e))?;
        *cursor = last.seq;
        metrics.otlp_batch(Some(events.len() as u64));
        let behind = (reader.head().await?.map_or(0, |h| h.seq) - last.seq).max(0).unsigned_abs();
        let age = match behind {
            0 => 0.0,
            _ => reader.event(last.seq + 1).await?.map_or(0.0, |e| e.age_seconds()),
        };
        metrics.otlp_lag(behind, age);
        Ok(behind > 0)
    }

    /// Sends one request; whether it was too large, and why, when it was not acknowledged.
    /// A partial success is an acknowledgement: the collector took what it could and will not
    /// take the rest again.
    async fn send(&self, request: ExportLogsServiceRequest) -> Result<(), (bool, String)> {
        let partial = match &self.transport {
            Transport::Grpc(client) => {
                let mut call = tonic::Request::new(request);
                call.set_timeout(self.timeout);
                let answer = client.clone().export(call).await.map_err(|s| {
                    let message: String = s.message().chars().take(200).collect();
                    (
                        s.code() == tonic::Code::ResourceExhausted,
                        format!("{:?}: {message}", s.code()),
                    )
                })?;
                answer.into_inner().partial_success
            }
            Transport::Http { client, url } => {
                let answer = client
                    .post(url)
                    .header(reqwest::header::CONTENT_TYPE, "application/x-protobuf")
                    .timeout(self.timeout)
                    .body(request.encode_to_vec())
                    .send()
                    .await
                    .map_err(|e| (false, e.to_string()))?;
                let status = answer.status();
                if !status.is_success() {
                    let too_large = status == reqwest::StatusCode::PAYLOAD_TOO_LARGE;
                    return Err((too_large, format!("HTTP {status}")));
                }
                let body = answer.bytes().await.map_err(|e| (false, e.to_string()))?;
                opentelemetry_proto::tonic::collector::logs::v1::ExportLogsServiceResponse::decode(
                    body,
                )
                .ok()
                .and_then(|r| r.partial_success)
            }
        };
        if let Some(partial) = partial.filter(|p| p.rejected_log_records > 0) {
            tracing::warn!(
                rejected = partial.rejected_log_records,
                message = partial.error_message,
                "the collector rejected some log records"
            );
        }
        Ok(())
    }
}

/// The last acknowledged seq kept in `path`, and that event's hash; 0 when there is no file.
fn read_cursor(path: &Path) -> std::io::Result<(i64, Option<String>)> {
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok((0, None)),
        Err(e) => return Err(e),
    };
    let mut words = text.split_whitespace();
    let bad = || std::io::Error::new(std::io::ErrorKind::InvalidData, "not `<seq> <hash>`");
    let seq = words.next().and_then(|seq| seq.parse().ok()).ok_or_else(bad)?;
    Ok((seq, words.next().map(str::to_owned)))
}

/// Keeps `seq` and its event's `hash` in `path`: written beside it, synced, then renamed over
/// it, so that a crash leaves the old cursor or the new one, never half of one.
fn write_cursor(path: &Path, seq: i64, hash: &str) -> std::io::Result<()> {
    let mut temporary = path.as_os_str().to_owned();
    temporary.push(".tmp");
    let temporary = PathBuf::from(temporary);
    {
        let mut file = std::fs::File::create(&temporary)?;
        std::io::Write::write_all(&mut file, format!("{seq} {hash}\n").as_bytes())?;
        file.sync_all()?;
    }
    std::fs::rename(&temporary, path)?;
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::File::open(dir)?.sync_all()?;
    }
    Ok(())
}

/// This machine's name, for `service.instance.id` and OCSF's `src_endpoint.name`.
pub fn host_name() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|name| name.trim().to_owned())
        .ok()
        .filter(|name| !name.is_empty())
        .unwrap_or_else(|| "toolgate".to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cursor_is_kept_whole_and_reads_back() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("trail.db.otlp-cursor");
        assert_eq!(read_cursor(&path).unwrap(), (0, None), "no file yet");
        write_cursor(&path, 41, "aa").unwrap();
        write_cursor(&path, 42, "bb").unwrap();
        assert_eq!(read_cursor(&path).unwrap(), (42, Some("bb".to_owned())));
        std::fs::write(&path, "garbage").unwrap();
        assert!(read_cursor(&path).is_err());
    }

    #[tokio::test]
    async fn an_endpoint_must_be_a_web_url() {
        let mut config = Config::default();
        config.export.otlp = Some(crate::config::OtlpConfig {
            endpoint: "collector:4317".into(),
            ..Default::default()
        });
        assert!(exporter(&config).is_err());
        config.export.otlp.as_mut().unwrap().endpoint = "http://collector:4317".into();
        let exporter = exporter(&config).unwrap().unwrap();
        assert_eq!(exporter.cursor, PathBuf::from("toolgate.db.otlp-cursor"));
    }
}
