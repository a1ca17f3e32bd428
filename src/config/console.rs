//! The `[console]` section (docs/console.md): the auditors' and approvers' web console on the
//! HTTP side port, under `/ui`.
//!
//! ```toml
//! http_listen = "127.0.0.1:9090"
//!
//! [console]
//! enabled = true
//! session_minutes = 480
//! ```

use serde::Deserialize;

/// The console.
#[derive(Debug, Clone, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ConsoleConfig {
    /// Serve the console on the HTTP side port (which must be on: `http_listen`).
    pub enabled: bool,
    /// How long a sign-in lasts, in minutes, however active its holder is.
    pub session_minutes: u64,
}

impl Default for ConsoleConfig {
    fn default() -> Self {
        Self { enabled: false, session_minutes: 8 * 60 }
    }
}
