//! Logging through `tracing`: human-readable by default, JSON lines when asked, filtered by
//! `RUST_LOG` (default `info`). Logs go to stderr, so stdout stays for command output.

use tracing_subscriber::EnvFilter;

/// Installs the global subscriber; a second call is ignored.
pub fn init(json: bool) {
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info"));
    let builder = tracing_subscriber::fmt().with_env_filter(filter).with_writer(std::io::stderr);
    let _ = if json { builder.json().try_init() } else { builder.try_init() };
}
