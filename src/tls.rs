//! TLS on the gRPC port (rustls, through tonic), and the names a client certificate carries.
//!
//! `[tls] cert_file` and `key_file` turn TLS on; `client_ca_file` makes it mutual: a client
//! must present a certificate issued by that CA, or the handshake fails. [`crate::auth`] then
//! maps the certificate's names (its subject's common name and its DNS, URI and e-mail subject
//! alternative names) to roles and identities through `[[auth.certificates]]`.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Deserialize;
use tonic::transport::server::{TcpConnectInfo, TlsConnectInfo, UdsConnectInfo};
use tonic::transport::{Certificate, Identity, Server, ServerTlsConfig};
use x509_parser::prelude::{FromDer, GeneralName, X509Certificate};

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
    /// With mutual TLS, also accept clients without a certificate (they then need a bearer
    /// token once auth is on).
    pub client_auth_optional: bool,
    /// A connection that has not finished its handshake by then is closed, so that idle
    /// sockets cannot pile up.
    pub handshake_timeout_ms: u64,
}

impl Default for TlsConfig {
    fn default() -> Self {
        Self {
            cert_file: None,
            key_file: None,
            client_ca_file: None,
            client_auth_optional: false,
            handshake_timeout_ms: 10_000,
        }
    }
}

/// Why TLS cannot be set up.
#[derive(Debug, thiserror::Error)]
pub enum TlsError {
    #[error("[tls] {0}")]
    Config(&'static str),
    #[error("[tls] cannot read `{path}`: {source}")]
    Read { path: PathBuf, source: std::io::Error },
    #[error("[tls] `{path}` holds no PEM {what}")]
    NotPem { path: PathBuf, what: &'static str },
    #[error("[tls] the certificate `{cert}` and key `{key}` are refused: {reason}")]
    Refused { cert: PathBuf, key: PathBuf, reason: String },
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

    /// `server`, serving TLS as configured (unchanged while TLS is off). The files are read
    /// and the key checked against the certificate here, so that a bad file stops the start.
    pub fn apply(&self, server: Server) -> Result<Server, TlsError> {
        let (cert, key) = match (&self.cert_file, &self.key_file) {
            (None, None) if self.client_ca_file.is_none() => return Ok(server),
            (Some(cert), Some(key)) => (cert, key),
            (None, _) => return Err(TlsError::Config("cert_file is required")),
            (Some(_), None) => return Err(TlsError::Config("cert_file needs key_file")),
        };
        let identity = Identity::from_pem(
            read(cert, "-----BEGIN CERTIFICATE-----", "certificate")?,
            read(key, "PRIVATE KEY-----", "private key")?,
        );
        let mut tls = ServerTlsConfig::new()
            .identity(identity)
            .timeout(Duration::from_millis(self.handshake_timeout_ms));
        if let Some(ca) = &self.client_ca_file {
            let ca = read(ca, "-----BEGIN CERTIFICATE-----", "certificate")?;
            tls = tls
                .client_ca_root(Certificate::from_pem(ca))
                .client_auth_optional(self.client_auth_optional);
        }
        server.tls_config(tls).map_err(|e| {
            // tonic's error says "transport error"; what rustls said is its last cause.
            let cause = std::iter::successors(Some(&e as &dyn std::error::Error), |e| e.source());
            TlsError::Refused {
                cert: cert.clone(),
                key: key.clone(),
                reason: cause.last().map(ToString::to_string).unwrap_or_default(),
            }
        })
    }
}

/// The PEM file at `path`, which must hold a block whose armour contains `marker`.
fn read(path: &Path, marker: &str, what: &'static str) -> Result<Vec<u8>, TlsError> {
    let pem =
        std::fs::read(path).map_err(|source| TlsError::Read { path: path.to_owned(), source })?;
    if !pem.windows(marker.len()).any(|w| w == marker.as_bytes()) {
        return Err(TlsError::NotPem { path: path.to_owned(), what });
    }
    Ok(pem)
}

/// The names of the verified client certificate a call came with (over TCP or a unix
/// socket): the subject's common names, then its DNS, URI and e-mail alternative names.
/// Empty without one.
pub fn peer_names(extensions: &http::Extensions) -> Vec<String> {
    let certs = match extensions.get::<TlsConnectInfo<TcpConnectInfo>>() {
        Some(info) => info.peer_certs(),
        None => extensions.get::<TlsConnectInfo<UdsConnectInfo>>().and_then(|i| i.peer_certs()),
    };
    // rustls puts the end-entity certificate first.
    certs.and_then(|certs| certs.first().map(|leaf| names(leaf))).unwrap_or_default()
}

/// The names in a DER certificate; empty if it does not parse (rustls verified it, so it
/// does).
fn names(der: &[u8]) -> Vec<String> {
    let Ok((_, cert)) = X509Certificate::from_der(der) else { return Vec::new() };
    let mut names: Vec<String> = cert
        .subject()
        .iter_common_name()
        .filter_map(|cn| cn.as_str().ok().map(str::to_owned))
        .collect();
    if let Ok(Some(san)) = cert.subject_alternative_name() {
        for name in &san.value.general_names {
            if let GeneralName::DNSName(s) | GeneralName::URI(s) | GeneralName::RFC822Name(s) = name
            {
                names.push((*s).to_owned());
            }
        }
    }
    names
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_the_common_name_then_the_alternative_names() {
        let mut params = rcgen::CertificateParams::new(vec!["agent.team-a.svc".to_owned()])
            .expect("valid names");
        params.distinguished_name.push(rcgen::DnType::CommonName, "agent-7");
        params.subject_alt_names.push(rcgen::SanType::URI(
            "spiffe://cluster/ns/team-a/sa/agent".try_into().expect("an IA5 string"),
        ));
        let key = rcgen::KeyPair::generate().expect("a key");
        let cert = params.self_signed(&key).expect("a certificate");
        assert_eq!(
            names(cert.der()),
            ["agent-7", "agent.team-a.svc", "spiffe://cluster/ns/team-a/sa/agent"]
        );
        assert!(names(b"not a certificate").is_empty());
    }

    fn refusal(config: &TlsConfig) -> String {
        config.apply(Server::builder()).err().map(|e| e.to_string()).unwrap_or_default()
    }

    #[test]
    fn half_a_configuration_is_refused() {
        let key_only = TlsConfig { key_file: Some("k.pem".into()), ..TlsConfig::default() };
        assert_eq!(refusal(&key_only), "[tls] cert_file is required");
        let ca_only = TlsConfig { client_ca_file: Some("ca.pem".into()), ..TlsConfig::default() };
        assert_eq!(refusal(&ca_only), "[tls] cert_file is required");
        let cert_only = TlsConfig { cert_file: Some("c.pem".into()), ..TlsConfig::default() };
        assert_eq!(refusal(&cert_only), "[tls] cert_file needs key_file");
        assert_eq!(refusal(&TlsConfig::default()), "");
    }

    #[test]
    fn bad_files_are_named() {
        let dir = tempfile::tempdir().expect("a directory");
        let file = |name: &str, text: &str| {
            let path = dir.path().join(name);
            std::fs::write(&path, text).expect("written");
            path
        };
        let key = rcgen::KeyPair::generate().expect("a key");
        let other = rcgen::KeyPair::generate().expect("a key");
        let params = rcgen::CertificateParams::new(vec!["localhost".to_owned()]).expect("names");
        let cert = params.self_signed(&key).expect("a certificate");
        let cert_file = file("cert.pem", &cert.pem());
        let config = |cert: &Path, key: &Path| TlsConfig {
            cert_file: Some(cert.to_owned()),
            key_file: Some(key.to_owned()),
            ..TlsConfig::default()
        };

        let junk =
            refusal(&config(&file("junk.pem", "junk"), &file("k.pem", &key.serialize_pem())));
        let mismatch = refusal(&config(&cert_file, &file("other.key", &other.serialize_pem())));
        let good = refusal(&config(&cert_file, &file("key.pem", &key.serialize_pem())));

        assert!(junk.contains("junk.pem` holds no PEM certificate"), "{junk}");
        assert!(mismatch.contains("other.key` are refused") && mismatch.contains("KeyMismatch"));
        assert_eq!(good, "");
    }
}
