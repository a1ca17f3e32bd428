//! TLS and mutual TLS on the gRPC port: handshakes that succeed and fail as they should, client
//! certificates mapped to roles and identities, the command line over TLS, and certificates
//! rotated on disk without a restart. The certificates are made at run time.

mod names;
mod reload;
mod side_port;

use std::path::{Path, PathBuf};
use std::time::Duration;

use rcgen::{
    BasicConstraints, CertificateParams, CertificateRevocationListParams, CertifiedIssuer, DnType,
    IsCa, KeyIdMethod, KeyPair, RevokedCertParams, SerialNumber, date_time_ymd,
};
use sha2::{Digest, Sha256};
use tokio::net::TcpListener;
use tonic::Code;
use tonic::transport::{Certificate, Channel, ClientTlsConfig, Endpoint, Identity};
use toolgate::auth::token_digest;
use toolgate::config::Config;
use toolgate::config::TlsConfig;
use toolgate::config::{AuthConfig, CertificateSpec, TokenSpec};
use toolgate::proto::audit_client::AuditClient;
use toolgate::proto::gate_client::GateClient;
use toolgate::proto::{Actor, DecideRequest, QueryRequest};

use crate::helpers::{eventually, request, rows};

/// A certificate authority, its certificate in `dir/<name>.pem`.
struct Ca {
    issuer: CertifiedIssuer<'static, KeyPair>,
    pem: PathBuf,
}

impl Ca {
    fn new(dir: &Path, name: &str) -> Self {
        let mut params = CertificateParams::new(Vec::<String>::new()).unwrap();
        params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        params.distinguished_name.push(DnType::CommonName, name);
        let issuer = CertifiedIssuer::self_signed(params, KeyPair::generate().unwrap()).unwrap();
        let pem = dir.join(format!("{name}.pem"));
        std::fs::write(&pem, issuer.pem()).unwrap();
        Self { issuer, pem }
    }

    /// A certificate with common name `cn` and subject alternative names `sans` (DNS names,
    /// IP addresses, `uri:`-prefixed URIs or `email:`-prefixed addresses), and its key:
    /// `dir/<cn>.pem`, `dir/<cn>.key`.
    fn issue(&self, dir: &Path, cn: &str, sans: &[&str]) -> (PathBuf, PathBuf) {
        self.issue_as(dir, cn, cn, sans, |_| {})
    }

    /// As [`Self::issue`], into `dir/<stem>.pem` and `dir/<stem>.key`, its parameters changed
    /// by `tweak` first.
    fn issue_as(
        &self,
        dir: &Path,
        stem: &str,
        cn: &str,
        sans: &[&str],
        tweak: impl FnOnce(&mut CertificateParams),
    ) -> (PathBuf, PathBuf) {
        let typed = |prefix: &'static str| sans.iter().filter_map(move |s| s.strip_prefix(prefix));
        let names = sans.iter().filter(|s| !s.starts_with("uri:") && !s.starts_with("email:"));
        let mut params =
            CertificateParams::new(names.map(|s| (*s).to_owned()).collect::<Vec<_>>()).unwrap();
        for uri in typed("uri:") {
            params.subject_alt_names.push(rcgen::SanType::URI(uri.to_owned().try_into().unwrap()));
        }
        for email in typed("email:") {
            let email = email.to_owned().try_into().unwrap();
            params.subject_alt_names.push(rcgen::SanType::Rfc822Name(email));
        }
        params.distinguished_name.push(DnType::CommonName, cn);
        params.serial_number = Some(serial(stem));
        tweak(&mut params);
        let key = KeyPair::generate().unwrap();
        let cert = params.signed_by(&key, &self.issuer).unwrap();
        let (cert_file, key_file) =
            (dir.join(format!("{stem}.pem")), dir.join(format!("{stem}.key")));
        std::fs::write(&cert_file, cert.pem()).unwrap();
        std::fs::write(&key_file, key.serialize_pem()).unwrap();
        (cert_file, key_file)
    }

    /// A revocation list of the certificates issued to `revoked`, valid until the start of
    /// `next_update_year`: `dir/<file>`.
    fn revocation_list(
        &self,
        dir: &Path,
        file: &str,
        revoked: &[&str],
        next_update_year: i32,
    ) -> PathBuf {
        let revoked_certs = revoked
            .iter()
            .map(|cn| RevokedCertParams {
                serial_number: serial(cn),
                revocation_time: date_time_ymd(2020, 6, 1),
                reason_code: None,
                invalidity_date: None,
            })
            .collect();
        let crl = CertificateRevocationListParams {
            this_update: date_time_ymd(2020, 1, 1),
            next_update: date_time_ymd(next_update_year, 1, 1),
            crl_number: SerialNumber::from(1),
            issuing_distribution_point: None,
            revoked_certs,
            key_identifier_method: KeyIdMethod::Sha256,
        }
        .signed_by(&self.issuer)
        .unwrap();
        let path = dir.join(file);
        std::fs::write(&path, crl.pem().unwrap()).unwrap();
        path
    }
}

/// The serial number of the certificates issued to `cn`, so that a test can revoke them.
fn serial(cn: &str) -> SerialNumber {
    SerialNumber::from_slice(&Sha256::digest(cn.as_bytes())[..16])
}

/// The files of one test: a CA for the server, a CA for clients, a stranger CA nobody trusts.
struct Pki {
    dir: tempfile::TempDir,
    server_ca: Ca,
    client_ca: Ca,
    stranger_ca: Ca,
}

impl Pki {
    fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let server_ca = Ca::new(dir.path(), "server-ca");
        let client_ca = Ca::new(dir.path(), "client-ca");
        let stranger_ca = Ca::new(dir.path(), "stranger-ca");
        Self { dir, server_ca, client_ca, stranger_ca }
    }

    /// `[tls]` for a server whose certificate names `localhost` and 127.0.0.1; mutual when
    /// `clients` is set.
    fn server_tls(&self, clients: bool) -> TlsConfig {
        let (cert, key) =
            self.server_ca.issue(self.dir.path(), "toolgate", &["localhost", "127.0.0.1"]);
        TlsConfig {
            cert_file: Some(cert),
            key_file: Some(key),
            client_ca_file: clients.then(|| self.client_ca.pem.clone()),
            ..TlsConfig::default()
        }
    }

    /// A client certificate from the client CA.
    fn client(&self, cn: &str, sans: &[&str]) -> Identity {
        identity(self.client_ca.issue(self.dir.path(), cn, sans))
    }
}

fn identity((cert, key): (PathBuf, PathBuf)) -> Identity {
    Identity::from_pem(std::fs::read(cert).unwrap(), std::fs::read(key).unwrap())
}

/// A server with `config` on an ephemeral port; its `https://` URL. It stops with the test.
async fn serve(config: Config) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("https://127.0.0.1:{}", listener.local_addr().unwrap().port());
    let listener = toolgate::listener::Listener::Tcp(listener);
    tokio::spawn(toolgate::server::run(config, listener, None, std::future::pending()));
    url
}

/// A client trusting `ca`, presenting `identity` if given.
fn endpoint(url: &str, ca: &Path, identity: Option<Identity>) -> Endpoint {
    let mut tls =
        ClientTlsConfig::new().ca_certificate(Certificate::from_pem(std::fs::read(ca).unwrap()));
    if let Some(identity) = identity {
        tls = tls.identity(identity);
    }
    Endpoint::from_shared(url.to_owned()).unwrap().tls_config(tls).unwrap()
}

/// Decides `req` over a fresh connection: the answer's outcome, or the error — from the
/// handshake (a connection that fails) or from the call (`Status`). The server may still be
/// recording its policy: the call is retried while it answers UNAVAILABLE.
async fn decide(endpoint: Endpoint, req: DecideRequest) -> Result<(), String> {
    for _ in 0..250 {
        let channel = match endpoint.connect().await {
            Ok(channel) => channel,
            Err(e) => return Err(format!("connect: {e:?}")),
        };
        match GateClient::new(channel).decide(req.clone()).await {
            Ok(_) => return Ok(()),
            Err(status) if status.code() == Code::Unavailable && !is_tls(&status) => {
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
            // The code, the message, then the causes (a TLS alert, say).
            Err(status) => {
                let mut text = format!("{:?}: {}", status.code(), status.message());
                let mut source = std::error::Error::source(&status);
                while let Some(cause) = source {
                    text.push_str(&format!(": {cause}"));
                    source = cause.source();
                }
                return Err(text);
            }
        }
    }
    Err("the server never answered".into())
}

/// Whether a failed call failed in the TLS layer (a refused certificate surfaces on the first
/// call under TLS 1.3, after the client thinks the handshake is done).
fn is_tls(status: &tonic::Status) -> bool {
    let text = format!("{status:?}").to_lowercase();
    text.contains("certificate") || text.contains("tls") || text.contains("alert")
}

fn as_actor(id: &str) -> DecideRequest {
    DecideRequest {
        actor: Some(Actor { id: id.into(), kind: "agent".into(), delegation_chain: vec![] }),
        ..request("read")
    }
}

fn config(pki: &Pki, tls: TlsConfig) -> Config {
    Config { db: pki.dir.path().join("trail.db"), tls, ..Config::default() }
}

fn certificates() -> AuthConfig {
    let spec = |subject: &str, roles: &str, actors: &[&str]| CertificateSpec {
        subject: subject.into(),
        kind: Default::default(),
        roles: serde_json::from_str(roles).unwrap(),
        actors: actors.iter().map(|a| (*a).to_owned()).collect(),
    };
    AuthConfig {
        tokens: vec![TokenSpec {
            id: "ci".into(),
            sha256: token_digest("ci-secret-0b7e"),
            roles: vec![toolgate::config::Role::Agent],
            actors: vec!["ci/*".into()],
            harness_approvals: false,
        }],
        certificates: vec![spec("agent-7", r#"["agent"]"#, &["team-a/*"])],
        // Matched as an X.509 SVID's one URI name, not the common name.
        spiffe: vec![toolgate::config::SpiffeSpec {
            id: "spiffe://cluster/ns/audit/sa/auditor".into(),
            roles: vec![toolgate::config::Role::Auditor],
            actors: vec![],
        }],
        ..AuthConfig::default()
    }
}

#[tokio::test]
async fn tls_serves_clients_that_trust_its_ca_and_no_one_in_plaintext() {
    let pki = Pki::new();
    let url = serve(config(&pki, pki.server_tls(false))).await;

    let trusting = decide(endpoint(&url, &pki.server_ca.pem, None), request("read")).await;
    let distrusting = decide(endpoint(&url, &pki.stranger_ca.pem, None), request("read")).await;
    let plaintext_url = url.replace("https://", "http://");
    let plaintext = decide(Endpoint::from_shared(plaintext_url).unwrap(), request("read")).await;

    assert_eq!(trusting, Ok(()));
    let distrusting = distrusting.unwrap_err();
    assert!(distrusting.contains("UnknownIssuer"), "{distrusting}");
    assert!(plaintext.is_err(), "a plaintext client is answered: {plaintext:?}");
}

#[tokio::test]
async fn mutual_tls_admits_only_certificates_from_the_client_ca() {
    let pki = Pki::new();
    let url = serve(config(&pki, pki.server_tls(true))).await;
    let ca = &pki.server_ca.pem;
    let stranger = identity(pki.stranger_ca.issue(pki.dir.path(), "mallory", &[]));

    let with_cert =
        decide(endpoint(&url, ca, Some(pki.client("agent-7", &[]))), request("read")).await;
    let without = decide(endpoint(&url, ca, None), request("read")).await;
    let foreign = decide(endpoint(&url, ca, Some(stranger)), request("read")).await;

    assert_eq!(with_cert, Ok(()));
    let without = without.unwrap_err();
    assert!(without.contains("CertificateRequired"), "{without}");
    let foreign = foreign.unwrap_err();
    assert!(foreign.contains("UnknownCA"), "{foreign}");
}

#[tokio::test]
async fn the_command_line_speaks_tls_with_a_client_certificate() {
    let pki = Pki::new();
    let mut config = config(&pki, pki.server_tls(true));
    config.auth = certificates();
    let url = serve(config).await;
    // The server is up once a Decide is answered.
    let agent = pki.client("agent-7", &[]);
    assert_eq!(
        decide(endpoint(&url, &pki.server_ca.pem, Some(agent)), as_actor("team-a/x")).await,
        Ok(())
    );
    let (cert, key) = pki.client_ca.issue(
        pki.dir.path(),
        "auditor",
        &["uri:spiffe://cluster/ns/audit/sa/auditor"],
    );
    let run = |env: Vec<(&'static str, PathBuf)>| {
        let url = url.clone();
        tokio::task::spawn_blocking(move || {
            let mut command = assert_cmd::Command::cargo_bin("toolgate").unwrap();
            command.args(["query", "--server", &url]).env_remove("TOOLGATE_TOKEN");
            for var in ["TOOLGATE_CA_CERT", "TOOLGATE_CLIENT_CERT", "TOOLGATE_CLIENT_KEY"] {
                command.env_remove(var);
            }
            command.envs(env).output().unwrap()
        })
    };

    let auditor = run(vec![
        ("TOOLGATE_CA_CERT", pki.server_ca.pem.clone()),
        ("TOOLGATE_CLIENT_CERT", cert),
        ("TOOLGATE_CLIENT_KEY", key),
    ])
    .await
    .unwrap();
    let no_ca = run(vec![]).await.unwrap();

    let stdout = String::from_utf8_lossy(&auditor.stdout);
    assert!(auditor.status.success(), "{}", String::from_utf8_lossy(&auditor.stderr));
    assert!(stdout.contains("decision"), "the auditor sees the decision: {stdout}");
    assert!(!no_ca.status.success());
    assert!(String::from_utf8_lossy(&no_ca.stderr).contains("TOOLGATE_CA_CERT"));
}

#[tokio::test]
async fn required_client_certificates_guard_a_remote_address() {
    let dir = tempfile::tempdir().unwrap();
    let serve_with = |tls: &str| {
        let config = dir.path().join("toolgate.toml");
        std::fs::write(&config, tls).unwrap();
        let args = ["serve", "--listen", "0.0.0.0:0", "--db", "/nonexistent/x.db", "--config"];
        let mut args: Vec<String> = args.iter().map(|a| (*a).to_owned()).collect();
        args.push(config.to_str().unwrap().to_owned());
        let output =
            assert_cmd::Command::cargo_bin("toolgate").unwrap().args(&args).output().unwrap();
        String::from_utf8(output.stderr).unwrap()
    };

    let server_only = serve_with(
        "[tls]\ncert_file = \"/nonexistent/c.pem\"\nkey_file = \"/nonexistent/k.pem\"\n",
    );
    let mutual = serve_with(
        "[tls]\ncert_file = \"/nonexistent/c.pem\"\nkey_file = \"/nonexistent/k.pem\"\nclient_ca_file = \"/nonexistent/ca.pem\"\n",
    );

    assert!(server_only.contains("refusing to listen on `0.0.0.0:0`"), "{server_only}");
    // Past the exposure check, it stops at the missing files instead.
    assert!(!mutual.contains("refusing to listen"), "{mutual}");
    assert!(mutual.contains("[tls] cannot read `/nonexistent/c.pem`"), "{mutual}");
}

#[tokio::test]
async fn a_certificate_subject_listed_twice_stops_the_start() {
    let pki = Pki::new();
    let mut config = config(&pki, pki.server_tls(true));
    config.auth = certificates();
    let again = config.auth.certificates[0].clone();
    config.auth.certificates.push(again);
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let listener = toolgate::listener::Listener::Tcp(listener);

    let stopped = toolgate::server::run(config, listener, None, std::future::pending()).await;

    let error = stopped.unwrap_err().to_string();
    assert_eq!(error, "[[auth.certificates]] `agent-7` is listed twice");
}

#[tokio::test]
async fn a_connection_that_never_finishes_its_handshake_is_closed() {
    use tokio::io::AsyncReadExt;

    let pki = Pki::new();
    let mut tls = pki.server_tls(true);
    tls.handshake_timeout_ms = 200;
    let url = serve(config(&pki, tls)).await;
    let addr = url.strip_prefix("https://").unwrap();
    let mut idle = tokio::net::TcpStream::connect(addr).await.unwrap();

    // No ClientHello is ever sent: the server gives up and closes the socket.
    let read = tokio::time::timeout(Duration::from_secs(10), idle.read(&mut [0; 16])).await;
    let served = decide(
        endpoint(&url, &pki.server_ca.pem, Some(pki.client("agent-7", &[]))),
        request("read"),
    )
    .await;

    assert!(matches!(read, Ok(Ok(0)) | Ok(Err(_))), "the idle socket is closed: {read:?}");
    assert_eq!(served, Ok(()), "and the server still serves");
}
