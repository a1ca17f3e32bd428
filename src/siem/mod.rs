//! The trail where security teams already look (docs/siem.md): each committed event as an
//! OpenTelemetry log record, shipped to a collector from a durable cursor (`otlp`,
//! `exporter`), and as an OCSF event or a plain JSON line for `toolgate export` (`ocsf`).

mod exporter;
pub mod ocsf;
mod otlp;

pub use exporter::{OtlpConfigError, exporter, host_name};
