//! `[tls]`: the server's certificate and, for mutual TLS, the CA of its clients (`tls` loads
//! and serves them).

use std::path::PathBuf;

use serde::Deserialize;

/// `[tls]`: the server's certificate and, for mutual TLS, the CA its clients' certificates
/// must chain to. Off while `cert_file` is unset.
#[derive(Debug, Clone, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct TlsConfig {
    /// PEM certificate chain of the server, leaf first.
    pub cert_file: Option<PathBuf>,
    /// PEM private key of the server (PKCS#8, PKCS#1 or SEC1).
    pub key_file: Option<PathBuf>,
    /// PEM certificates of the CAs that issue client certificates: mutual TLS.
    pub client_ca_file: Option<PathBuf>,
    /// PEM certificate revocation lists, one for every CA in `client_ca_file`: a client
    /// certificate they revoke is refused, and so is every one while its list is out of date.
    pub client_crl_file: Option<PathBuf>,
    /// With mutual TLS, also accept clients without a certificate (they then need a bearer
    /// token once auth is on).
    pub client_auth_optional: bool,
    /// A connection that has not finished its handshake by then is closed, so that idle
    /// sockets cannot pile up.
    pub handshake_timeout_ms: u64,
    /// How often the files are read again for a rotated certificate; 0: only at SIGHUP.
    pub reload_interval_ms: u64,
    /// Serve the HTTP side port over TLS too, with the same certificate. No client
    /// certificate is asked for there: probes and scrapers carry none.
    pub side_port: bool,
}

impl Default for TlsConfig {
    fn default() -> Self {
        Self {
            cert_file: None,
            key_file: None,
            client_ca_file: None,
            client_crl_file: None,
            client_auth_optional: false,
            handshake_timeout_ms: 10_000,
            reload_interval_ms: 60_000,
            side_port: false,
        }
    }
}

impl TlsConfig {
    /// Whether TLS is on.
    pub fn enabled(&self) -> bool {
        self.cert_file.is_some()
    }

    /// Whether every client must present a certificate issued by `client_ca_file`.
    pub fn requires_client_certificates(&self) -> bool {
        self.enabled() && self.client_ca_file.is_some() && !self.client_auth_optional
    }

    /// For the log: `off`, `on`, or `mutual`.
    pub fn mode(&self) -> &'static str {
        match (self.enabled(), &self.client_ca_file) {
            (false, _) => "off",
            (true, None) => "on",
            (true, Some(_)) => "mutual",
        }
    }
}
