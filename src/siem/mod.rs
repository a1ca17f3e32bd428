//! The trail where security teams already look (docs/siem.md): each committed event as an
//! OpenTelemetry log record (`otlp`, shipped to a collector by the follower's OTLP sink,
//! `follow::otlp`), and as an OCSF event or a plain JSON line for `toolgate export` (`ocsf`).

mod host;
pub mod ocsf;
pub mod otlp;

pub use host::host_name;
