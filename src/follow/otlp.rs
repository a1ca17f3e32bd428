//! The OTLP sink: the trail's committed events go to an OpenTelemetry collector as log
//! records (`siem::otlp`), in `seq` order, in batches, from a durable cursor (the last seq the
//! collector acknowledged, kept in a file beside the trail and written only after the
//! acknowledgement): delivery at least once, across restarts of either side. The lag is on
//! `/metrics` (`toolgate_otlp_lag_events`).

use std::path::{Path, PathBuf};
use std::time::Duration;

use opentelemetry_proto::tonic::collector::logs::v1::ExportLogsServiceRequest;
use opentelemetry_proto::tonic::collector::logs::v1::logs_service_client::LogsServiceClient;
use prost::Message;
use tonic::transport::{Channel, ClientTlsConfig, Endpoint};

use super::{Follower, Sink, Taken, Trouble};
use crate::config::{Config, OtlpProtocol};
use crate::metrics::{Metrics, SinkNames};
use crate::siem::host_name;
use crate::siem::otlp::{Origin, request as request_of};
use crate::store::Reader;
use crate::trail::Event;

/// The largest request sent: under the 4 MiB a gRPC server takes by default.
const MAX_REQUEST_BYTES: usize = 3 * 1024 * 1024;

/// Its metrics: `toolgate_otlp_exported_events_total`, `toolgate_otlp_lag_events`, ….
const NAMES: SinkNames = SinkNames {
    delivered: "exported_events",
    delivered_help: "Events the OpenTelemetry collector acknowledged",
    taken: "acknowledged",
    destination: "the OpenTelemetry collector",
    position: "exported_seq",
};

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

/// The sink of a configured exporter.
#[derive(Debug)]
pub struct Otlp {
    transport: Transport,
    endpoint: String,
    timeout: Duration,
    cursor: PathBuf,
    /// The last seq the collector acknowledged, once known: the cursor file is read at start
    /// only, so that trouble later never sends the trail again from the top.
    acknowledged: Option<i64>,
    origin: Origin,
}

/// The exporter `[export.otlp]` asks for, if it asks for one.
pub fn follower(
    config: &Config,
    metrics: &Metrics,
) -> Result<Option<Follower<Otlp>>, OtlpConfigError> {
    let Some(otlp) = &config.export.otlp else { return Ok(None) };
    // An `[export.otlp]` section without an endpoint (the documented example, every key
    // commented out) leaves the exporter off, as docs/configuration.md says.
    if otlp.endpoint.trim().is_empty() {
        return Ok(None);
    }
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
    tracing::info!(%endpoint, "exporting the trail as OTLP logs");
    let origin = Origin { instance, node };
    let sink = Otlp { transport, endpoint, timeout, cursor, acknowledged: None, origin };
    let batch = otlp.batch_events.clamp(1, 10_000);
    let every = Duration::from_millis(otlp.every_ms.max(1));
    let follower = Follower::new(sink, batch, every).coalescing(super::COALESCE);
    Ok(Some(follower.measured(metrics, NAMES)))
}

impl Sink for Otlp {
    const NAME: &'static str = "otlp";
    const HOLDS: Option<&'static str> = Some("OTLP");
    const DOING: &'static str = "OTLP export";
    const AGAIN: &'static str = "exporting to the collector again";

    fn destination(&self) -> &str {
        &self.endpoint
    }

    /// The last seq acknowledged; at start, the one the cursor file names.
    async fn resume(&mut self, reader: &Reader) -> Result<i64, Trouble> {
        if let Some(acknowledged) = self.acknowledged {
            return Ok(acknowledged);
        }
        let start = self.start(reader).await;
        self.acknowledged = Some(start);
        Ok(start)
    }

    /// Sends the events as one request (a prefix of them, if all would be too large), then
    /// keeps the cursor.
    async fn take(&mut self, _reader: &Reader, mut events: Vec<Event>) -> Result<Taken, Trouble> {
        let mut request = request_of(&events, &self.origin);
        while request.encoded_len() > MAX_REQUEST_BYTES && events.len() > 1 {
            events.truncate(events.len() / 2);
            request = request_of(&events, &self.origin);
        }
        let (seq, hash) = match events.last() {
            Some(last) => (last.seq, last.hash.clone()),
            None => return Err(Trouble::Failed("nothing to send".into())),
        };
        if let Err((too_large, why)) = self.send(request).await {
            let endpoint = &self.endpoint;
            return Err(if too_large {
                Trouble::TooLarge(format!(
                    "the collector at {endpoint} found the batch too large: {why}"
                ))
            } else {
                Trouble::Failed(format!(
                    "the collector at {endpoint} did not take the batch: {why}"
                ))
            });
        }
        let path = self.cursor.clone();
        tokio::task::spawn_blocking(move || write_cursor(&path, seq, &hash))
            .await
            .map_err(|e| std::io::Error::other(e.to_string()))
            .and_then(|written| written)
            .map_err(|e| {
                let file = self.cursor.display();
                Trouble::Failed(format!("cannot keep the cursor in {file}: {e}"))
            })?;
        self.acknowledged = Some(seq);
        Ok(Taken { through: seq, counted: events.len() as u64, waits: false })
    }
}

impl Otlp {
    /// Where the cursor file says to go on from: after the seq it names, if the trail's event
    /// there is the one it names; from the start otherwise (a trail replaced, restored from a
    /// backup, or a cursor that does not read), since sending twice is safe and skipping is not.
    async fn start(&self, reader: &Reader) -> i64 {
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
        let metrics = Metrics::default();
        assert!(follower(&config, &metrics).is_err());
        config.export.otlp.as_mut().unwrap().endpoint = String::new();
        assert!(follower(&config, &metrics).unwrap().is_none(), "no endpoint: off");
        config.export.otlp.as_mut().unwrap().endpoint = "http://collector:4317".into();
        let follower = follower(&config, &metrics).unwrap().unwrap();
        assert_eq!(follower.sink.cursor, PathBuf::from("toolgate.db.otlp-cursor"));
    }
}
