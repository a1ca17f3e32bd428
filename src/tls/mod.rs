//! TLS (rustls) on the gRPC port and, when asked, on the HTTP side port; reloaded without a
//! restart; and the names a client certificate carries.
//!
//! `[tls] cert_file` and `key_file` turn TLS on; `client_ca_file` makes it mutual on the gRPC
//! port: a client must present a certificate issued by that CA, and not revoked by the lists
//! in `client_crl_file`, or the handshake fails. toolgate's auth then maps the certificate's
//! names (its subject's common name and its DNS, URI and e-mail subject alternative names) to
//! roles and identities through `[[auth.certificates]]`. `side_port = true` serves the side
//! port with the same certificate, asking for none.
//!
//! The [`Acceptor`] reads the files again at every SIGHUP and every `reload_interval_ms`, so a
//! certificate rotated on disk (cert-manager, a SPIFFE helper) is served without a restart:
//! new connections get it, open ones keep the one they shook hands with. Files that do not
//! load are logged and the certificate in force stays.

mod acceptor;
mod names;
mod spiffe;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use sha2::{Digest, Sha256};
use tokio_rustls::rustls::crypto::{CryptoProvider, ring};
use tokio_rustls::rustls::pki_types::pem::PemObject;
use tokio_rustls::rustls::pki_types::{
    CertificateDer, CertificateRevocationListDer, PrivateKeyDer,
};
use tokio_rustls::rustls::server::WebPkiClientVerifier;
use tokio_rustls::rustls::server::danger::ClientCertVerifier;
use tokio_rustls::rustls::{RootCertStore, ServerConfig};

pub use acceptor::{Acceptor, Port};
pub use names::{CertName, peer_addr, peer_names, peer_spiffe_id};
pub use spiffe::{spiffe_id, trust_domain};

use crate::config::TlsConfig;

/// Why TLS cannot be set up.
#[derive(Debug, thiserror::Error)]
pub enum TlsError {
    #[error("[tls] {0}")]
    Config(&'static str),
    #[error(
        "[tls] {given} is `{path}`, but {missing} is not set: TLS needs both cert_file and key_file"
    )]
    Half { given: &'static str, path: PathBuf, missing: &'static str },
    #[error("[tls] cannot read `{path}`: {source}")]
    Read { path: PathBuf, source: std::io::Error },
    #[error("[tls] `{path}` holds no PEM {what}")]
    NotPem { path: PathBuf, what: &'static str },
    #[error("[tls] client certificates cannot be checked with {files}: {reason}")]
    ClientCheck { files: String, reason: String },
    #[error("[tls] the certificate `{cert}` and key `{key}` are refused: {reason}")]
    Refused { cert: PathBuf, key: PathBuf, reason: String },
}

/// A loaded TLS configuration and what it was made from.
#[derive(Debug)]
struct Loaded {
    grpc: Arc<ServerConfig>,
    /// For the HTTP side port, when it serves TLS.
    side: Option<Arc<ServerConfig>>,
    /// SHA-256 over the files' bytes: whether a reload found anything new.
    digest: [u8; 32],
    /// The server certificate's subject and expiry (Unix seconds), for the log and metrics.
    subject: String,
    not_after: i64,
}

/// The files, read and checked (the key against the certificate, the client CAs as trust
/// anchors, their revocation lists); `None` while TLS is off.
fn load(config: &TlsConfig) -> Result<Option<Loaded>, TlsError> {
    let others = config.client_ca_file.is_some() || config.client_crl_file.is_some();
    let (cert, key) = match (&config.cert_file, &config.key_file) {
        (Some(cert), Some(key)) => (cert, key),
        (Some(cert), None) => {
            let path = cert.clone();
            return Err(TlsError::Half { given: "cert_file", path, missing: "key_file" });
        }
        (None, Some(key)) => {
            let path = key.clone();
            return Err(TlsError::Half { given: "key_file", path, missing: "cert_file" });
        }
        (None, None) if !others && !config.side_port => return Ok(None),
        (None, None) => return Err(TlsError::Config("cert_file and key_file are required")),
    };
    if config.client_crl_file.is_some() && config.client_ca_file.is_none() {
        return Err(TlsError::Config("client_crl_file needs client_ca_file"));
    }
    let mut digest = Sha256::new();
    let mut read = |path: &Path| {
        let bytes = std::fs::read(path)
            .map_err(|source| TlsError::Read { path: path.to_owned(), source })?;
        digest.update((bytes.len() as u64).to_be_bytes());
        digest.update(&bytes);
        Ok::<_, TlsError>(bytes)
    };
    let chain = certificates(cert, &read(cert)?)?;
    let private_key = PrivateKeyDer::from_pem_slice(&read(key)?)
        .map_err(|_| TlsError::NotPem { path: key.clone(), what: "private key" })?;
    let provider = Arc::new(ring::default_provider());
    let verifier = match &config.client_ca_file {
        None => None,
        Some(ca) => {
            let roots = certificates(ca, &read(ca)?)?;
            let crls = match &config.client_crl_file {
                Some(path) => revocation_lists(path, &read(path)?)?,
                None => Vec::new(),
            };
            Some(client_verifier(config, roots, crls, provider.clone())?)
        }
    };
    let (subject, not_after) = names::subject_and_expiry(&chain[0]).unwrap_or_default();
    let side = config
        .side_port
        .then(|| {
            server_config(&provider, None, chain.clone(), private_key.clone_key(), b"http/1.1")
        })
        .transpose()
        .map_err(|e| refused(cert, key, &e))?;
    let grpc = server_config(&provider, verifier, chain, private_key, b"h2")
        .map_err(|e| refused(cert, key, &e))?;
    Ok(Some(Loaded { grpc, side, digest: digest.finalize().into(), subject, not_after }))
}

/// The verifier of client certificates issued by `roots` and not revoked by `crls`.
fn client_verifier(
    config: &TlsConfig,
    roots: Vec<CertificateDer<'static>>,
    crls: Vec<CertificateRevocationListDer<'static>>,
    provider: Arc<CryptoProvider>,
) -> Result<Arc<dyn ClientCertVerifier>, TlsError> {
    let refused = |reason: String| {
        let files = [&config.client_ca_file, &config.client_crl_file]
            .into_iter()
            .flatten()
            .map(|path| format!("`{}`", path.display()))
            .collect::<Vec<_>>()
            .join(" and ");
        TlsError::ClientCheck { files, reason }
    };
    let mut store = RootCertStore::empty();
    let (_, unusable) = store.add_parsable_certificates(roots);
    if unusable > 0 {
        return Err(refused(format!("{unusable} certificate(s) are not usable trust anchors")));
    }
    let mut builder = WebPkiClientVerifier::builder_with_provider(Arc::new(store), provider);
    if config.client_auth_optional {
        builder = builder.allow_unauthenticated();
    }
    if !crls.is_empty() {
        // The leaf is what a CA revokes; a certificate whose issuer has no list here, or
        // whose list is past its next update, is refused rather than let through.
        builder = builder
            .with_crls(crls)
            .only_check_end_entity_revocation()
            .enforce_revocation_expiration();
    }
    builder.build().map_err(|e| refused(e.to_string()))
}

/// A server configuration presenting `chain` and `key`, checking client certificates with
/// `verifier` (none asked for without one), offering the protocol `alpn`.
fn server_config(
    provider: &Arc<CryptoProvider>,
    verifier: Option<Arc<dyn ClientCertVerifier>>,
    chain: Vec<CertificateDer<'static>>,
    key: PrivateKeyDer<'static>,
    alpn: &[u8],
) -> Result<Arc<ServerConfig>, tokio_rustls::rustls::Error> {
    let builder = ServerConfig::builder_with_provider(provider.clone())
        .with_safe_default_protocol_versions()?;
    let builder = match verifier {
        Some(verifier) => builder.with_client_cert_verifier(verifier),
        None => builder.with_no_client_auth(),
    };
    let mut config = builder.with_single_cert(chain, key)?;
    config.alpn_protocols = vec![alpn.to_vec()];
    Ok(Arc::new(config))
}

/// The certificates in the PEM text `pem` read from `path`: at least one.
fn certificates(path: &Path, pem: &[u8]) -> Result<Vec<CertificateDer<'static>>, TlsError> {
    pem_objects(path, pem, "certificate")
}

/// The revocation lists in the PEM text `pem` read from `path`: at least one.
fn revocation_lists(
    path: &Path,
    pem: &[u8],
) -> Result<Vec<CertificateRevocationListDer<'static>>, TlsError> {
    pem_objects(path, pem, "revocation list")
}

/// The PEM blocks of one kind (`what`) in `pem` read from `path`: at least one.
fn pem_objects<T: PemObject>(
    path: &Path,
    pem: &[u8],
    what: &'static str,
) -> Result<Vec<T>, TlsError> {
    let not_pem = || TlsError::NotPem { path: path.to_owned(), what };
    let objects: Vec<T> =
        T::pem_slice_iter(pem).collect::<Result<_, _>>().map_err(|_| not_pem())?;
    if objects.is_empty() {
        return Err(not_pem());
    }
    Ok(objects)
}

fn refused(cert: &Path, key: &Path, error: &tokio_rustls::rustls::Error) -> TlsError {
    TlsError::Refused { cert: cert.to_owned(), key: key.to_owned(), reason: error.to_string() }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refusal(config: &TlsConfig) -> String {
        load(config).err().map(|e| e.to_string()).unwrap_or_default()
    }

    #[test]
    fn half_a_configuration_is_refused() {
        let key_only = TlsConfig { key_file: Some("k.pem".into()), ..TlsConfig::default() };
        assert_eq!(
            refusal(&key_only),
            "[tls] key_file is `k.pem`, but cert_file is not set: TLS needs both cert_file and key_file"
        );
        let ca_only = TlsConfig { client_ca_file: Some("ca.pem".into()), ..TlsConfig::default() };
        assert_eq!(refusal(&ca_only), "[tls] cert_file and key_file are required");
        let cert_only = TlsConfig { cert_file: Some("c.pem".into()), ..TlsConfig::default() };
        assert_eq!(
            refusal(&cert_only),
            "[tls] cert_file is `c.pem`, but key_file is not set: TLS needs both cert_file and key_file"
        );
        let crl_alone = TlsConfig {
            key_file: Some("k.pem".into()),
            client_crl_file: Some("crl.pem".into()),
            ..cert_only
        };
        assert_eq!(refusal(&crl_alone), "[tls] client_crl_file needs client_ca_file");
        let side_only = TlsConfig { side_port: true, ..TlsConfig::default() };
        assert_eq!(refusal(&side_only), "[tls] cert_file and key_file are required");
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

        let crl = refusal(&TlsConfig {
            client_ca_file: Some(cert_file.clone()),
            client_crl_file: Some(file("crl.pem", &cert.pem())),
            ..config(&cert_file, &file("key.pem", &key.serialize_pem()))
        });

        assert!(junk.contains("junk.pem` holds no PEM certificate"), "{junk}");
        assert!(crl.contains("crl.pem` holds no PEM revocation list"), "{crl}");
        assert!(mismatch.contains("other.key` are refused") && mismatch.contains("KeyMismatch"));
        assert_eq!(good, "");
    }
}
