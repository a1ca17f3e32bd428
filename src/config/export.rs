//! The `[export]` section (docs/siem.md): the trail sent where security teams look, in the
//! background, never on the decision path. Off unless an endpoint is given.
//!
//! ```toml
//! [export.otlp]
//! endpoint = "http://collector:4317"
//! ```

use std::path::PathBuf;

use serde::Deserialize;

/// Exports of the trail.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ExportConfig {
    /// Every committed event as an OpenTelemetry log record, to an OTLP collector.
    pub otlp: Option<OtlpConfig>,
}

/// How log records reach the collector.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
pub enum OtlpProtocol {
    /// OTLP/gRPC (`LogsService/Export`), usually on port 4317.
    #[default]
    #[serde(rename = "grpc")]
    Grpc,
    /// OTLP/HTTP with protobuf bodies, `POST <endpoint>/v1/logs`, usually on port 4318.
    #[serde(rename = "http/protobuf")]
    HttpProtobuf,
}

/// `[export.otlp]`.
#[derive(Debug, Clone, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct OtlpConfig {
    /// The collector: `http://host:4317` (or `https://`) for gRPC, the base URL for HTTP.
    pub endpoint: String,
    pub protocol: OtlpProtocol,
    /// Most events per request.
    pub batch_events: u32,
    /// How often to look for new events once caught up, in milliseconds: the longest an
    /// event waits before it is sent, and how often the cursor file is written at most.
    pub every_ms: u64,
    /// The longest one request may take, in milliseconds.
    pub timeout_ms: u64,
    /// Where the last acknowledged seq is kept across restarts; by default beside the trail,
    /// `<db>.otlp-cursor`.
    pub cursor_file: Option<PathBuf>,
    /// `service.instance.id` of the records; by default `[fleet] node_id`, else the host name.
    pub instance_id: Option<String>,
}

impl Default for OtlpConfig {
    fn default() -> Self {
        Self {
            endpoint: String::new(),
            protocol: OtlpProtocol::Grpc,
            batch_events: 512,
            every_ms: 200,
            timeout_ms: 5000,
            cursor_file: None,
            instance_id: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_section_reads_and_defaults_the_rest() {
        let config: crate::config::Config = toml::from_str(
            r#"
            [export.otlp]
            endpoint = "http://collector:4318"
            protocol = "http/protobuf"
            "#,
        )
        .unwrap();
        let otlp = config.export.otlp.unwrap();
        assert_eq!(otlp.endpoint, "http://collector:4318");
        assert_eq!(otlp.protocol, OtlpProtocol::HttpProtobuf);
        assert_eq!(otlp.batch_events, 512);
        assert!(crate::config::Config::default().export.otlp.is_none());
    }
}
