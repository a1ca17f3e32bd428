//! Logging through `tracing`: human-readable by default, JSON lines when asked, filtered by
//! `RUST_LOG` (default `info`). Logs go to stderr, so stdout stays for command output; they are
//! coloured only when stderr is a terminal and `NO_COLOR` is not set (no-color.org), so that a
//! log file holds no escape codes.

use std::io::IsTerminal;

use tracing_subscriber::EnvFilter;

/// Installs the global subscriber; a second call is ignored.
pub fn init(json: bool) {
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info"));
    let colour = std::io::stderr().is_terminal()
        && std::env::var_os("NO_COLOR").is_none_or(|value| value.is_empty());
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(colour);
    let _ = if json { builder.json().try_init() } else { builder.try_init() };
}
