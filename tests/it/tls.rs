//! TLS and mutual TLS on the gRPC port: handshakes that succeed and fail as they should, client
//! certificates mapped to roles and identities, the command line over TLS, and certificates
//! rotated on disk without a restart. The certificates are made at run time.

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

use crate::helpers::{request, rows};

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
async fn client_certificates_map_to_roles_and_identities() {
    let pki = Pki::new();
    let mut config = config(&pki, pki.server_tls(true));
    config.auth = certificates();
    let db = config.db.clone();
    let url = serve(config).await;
    let ca = &pki.server_ca.pem;
    let agent = pki.client("agent-7", &["agent-7.team-a.svc"]);
    let auditor = pki.client("auditor", &["uri:spiffe://cluster/ns/audit/sa/auditor"]);
    let stranger = pki.client("stranger", &[]);

    let own = decide(endpoint(&url, ca, Some(agent.clone())), as_actor("team-a/coder")).await;
    let impersonated = decide(endpoint(&url, ca, Some(agent.clone())), as_actor("team-b/x")).await;
    let unmapped = decide(endpoint(&url, ca, Some(stranger)), as_actor("team-a/coder")).await;
    let audit = |identity: Identity| async {
        let channel: Channel = endpoint(&url, ca, Some(identity)).connect().await.unwrap();
        AuditClient::new(channel)
            .query(QueryRequest::default())
            .await
            .map(|_| ())
            .map_err(|s| s.code())
    };
    let agent_reads = audit(agent).await;
    let auditor_reads = audit(auditor.clone()).await;
    let auditor_decides = decide(endpoint(&url, ca, Some(auditor)), as_actor("team-a/coder")).await;

    assert_eq!(own, Ok(()));
    assert!(
        impersonated.as_ref().is_err_and(|e| e.starts_with("PermissionDenied")),
        "{impersonated:?}"
    );
    assert!(unmapped.as_ref().is_err_and(|e| e.contains("[[auth.certificates]]")), "{unmapped:?}");
    assert_eq!(agent_reads, Err(Code::PermissionDenied));
    assert_eq!(auditor_reads, Ok(()));
    assert!(auditor_decides.as_ref().is_err_and(|e| e.starts_with("PermissionDenied")));
    let refused: Vec<_> = rows(&db)
        .into_iter()
        .filter(|r| r.kind == "access_denied")
        .map(|r| r.actor_id.unwrap_or_default())
        .collect();
    for caller in ["cert:agent-7", "cert:stranger", "spiffe://cluster/ns/audit/sa/auditor"] {
        assert!(refused.iter().any(|id| id == caller), "{caller} not in {refused:?}");
    }
}

/// Each name is matched only as what it is: a SPIFFE ID only as an SVID's one URI name, a
/// common name only as the subject's. Every certificate below is signed by the trusted CA and
/// tries to pass for the auditor; none reads the trail.
#[tokio::test]
async fn a_name_passes_for_another_kind_of_name_never() {
    const AUDITOR_ID: &str = "spiffe://cluster/ns/audit/sa/auditor";
    let pki = Pki::new();
    let mut config = config(&pki, pki.server_tls(true));
    config.auth = toml::from_str(&format!(
        "[[certificates]]\nsubject = \"auditor-cn\"\nroles = [\"auditor\"]\n\
         [[spiffe]]\nid = \"{AUDITOR_ID}\"\nroles = [\"auditor\"]\n"
    ))
    .unwrap();
    let url = serve(config).await;
    let ca = &pki.server_ca.pem;
    let dir = pki.dir.path();
    let issue = |stem: &str, cn: &str, sans: &[&str]| {
        identity(pki.client_ca.issue_as(dir, stem, cn, sans, |_| {}))
    };
    let signs_certificates = identity(pki.client_ca.issue_as(
        dir,
        "signer",
        "signer",
        &[&format!("uri:{AUDITOR_ID}")],
        |params| {
            params.key_usages =
                vec![rcgen::KeyUsagePurpose::DigitalSignature, rcgen::KeyUsagePurpose::KeyCertSign];
        },
    ));
    let reads = |identity: Identity| async {
        let channel: Channel = endpoint(&url, ca, Some(identity)).connect().await.unwrap();
        AuditClient::new(channel)
            .query(QueryRequest::default())
            .await
            .map(|_| ())
            .map_err(|s| s.code())
    };

    let attempts = [
        (
            "two URI names",
            issue("two-uris", "two-uris", &[&format!("uri:{AUDITOR_ID}"), "uri:https://x.example"]),
        ),
        ("a leaf that signs certificates", signs_certificates),
        ("a common name that is the SPIFFE ID", issue("cn-is-id", AUDITOR_ID, &[])),
        ("a DNS name equal to the common name", issue("dns", "mallory-d", &["auditor-cn"])),
        (
            "an e-mail name equal to the common name",
            issue("email", "mallory-e", &["email:auditor-cn"]),
        ),
    ];
    for (what, identity) in attempts {
        assert_eq!(reads(identity).await, Err(Code::PermissionDenied), "{what}");
    }
    // The names as they are meant: the common name, and a proper SVID.
    assert_eq!(reads(issue("auditor-cn", "auditor-cn", &[])).await, Ok(()));
    assert_eq!(reads(issue("svid", "svid", &[&format!("uri:{AUDITOR_ID}")])).await, Ok(()));
    // And a SPIFFE ID written as a certificate's subject is refused at start.
    let refused = toolgate::auth::Auth::new(
        &toml::from_str(&format!("[[certificates]]\nsubject = \"{AUDITOR_ID}\"\nroles = []\n"))
            .unwrap(),
    );
    assert!(refused.is_err_and(|e| e.to_string().contains("[[auth.spiffe]]")));
}

#[tokio::test]
async fn with_optional_client_certificates_a_token_stands_in() {
    let pki = Pki::new();
    let mut tls = pki.server_tls(true);
    tls.client_auth_optional = true;
    let mut config = config(&pki, tls);
    config.auth = certificates();
    let url = serve(config).await;
    let ca = &pki.server_ca.pem;
    let with_token = |secret: &'static str| {
        let mut req = tonic::Request::new(as_actor("ci/build"));
        req.metadata_mut().insert("authorization", format!("Bearer {secret}").parse().unwrap());
        req
    };

    let anonymous = decide(endpoint(&url, ca, None), as_actor("ci/build")).await;
    let channel = endpoint(&url, ca, None).connect().await.unwrap();
    let tokened = GateClient::new(channel.clone()).decide(with_token("ci-secret-0b7e")).await;
    let wrong = GateClient::new(channel).decide(with_token("not-the-secret")).await;

    assert!(
        anonymous.as_ref().is_err_and(|e| e.contains("no bearer token and no client certificate")),
        "{anonymous:?}"
    );
    assert!(tokened.is_ok(), "{tokened:?}");
    assert_eq!(wrong.unwrap_err().code(), Code::Unauthenticated);
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

/// Overwrites the server's certificate and key with a new pair for the same names, issued by
/// `ca`.
fn rotate(pki: &Pki, tls: &TlsConfig, ca: &Ca, cn: &str) {
    let (cert, key) = ca.issue(pki.dir.path(), cn, &["localhost", "127.0.0.1"]);
    std::fs::copy(key, tls.key_file.as_ref().unwrap()).unwrap();
    std::fs::copy(cert, tls.cert_file.as_ref().unwrap()).unwrap();
}

/// Decides over new connections from `endpoint` until the call is `admitted` (or refused, when
/// not) — once a reload is due; the last answer, after ten seconds at most.
async fn until_reloaded(endpoint: impl Fn() -> Endpoint, admitted: bool) -> Result<(), String> {
    let mut last = decide(endpoint(), request("read")).await;
    for _ in 0..100 {
        if last.is_ok() == admitted {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
        last = decide(endpoint(), request("read")).await;
    }
    last
}

#[tokio::test]
async fn a_rotated_certificate_is_served_without_a_restart() {
    let pki = Pki::new();
    let mut tls = pki.server_tls(false);
    tls.reload_interval_ms = 100;
    let url = serve(config(&pki, tls.clone())).await;
    assert_eq!(decide(endpoint(&url, &pki.server_ca.pem, None), request("read")).await, Ok(()));
    let open = endpoint(&url, &pki.server_ca.pem, None).connect().await.unwrap();
    let rotated_ca = Ca::new(pki.dir.path(), "rotated-ca");

    rotate(&pki, &tls, &rotated_ca, "toolgate-2");
    let rotated = until_reloaded(|| endpoint(&url, &rotated_ca.pem, None), true).await;
    let old_trust = decide(endpoint(&url, &pki.server_ca.pem, None), request("read")).await;
    let open_still = GateClient::new(open).decide(request("read")).await;
    // A half-written or broken file keeps the certificate in force; the next good one is
    // taken.
    std::fs::write(tls.cert_file.as_ref().unwrap(), "junk").unwrap();
    tokio::time::sleep(Duration::from_millis(300)).await;
    let despite_junk = decide(endpoint(&url, &rotated_ca.pem, None), request("read")).await;
    let third_ca = Ca::new(pki.dir.path(), "third-ca");
    rotate(&pki, &tls, &third_ca, "toolgate-3");
    let third = until_reloaded(|| endpoint(&url, &third_ca.pem, None), true).await;

    assert_eq!(rotated, Ok(()), "new connections get the rotated certificate");
    assert!(old_trust.as_ref().is_err_and(|e| e.contains("UnknownIssuer")), "{old_trust:?}");
    assert!(open_still.is_ok(), "an open connection keeps its session: {open_still:?}");
    assert_eq!(despite_junk, Ok(()), "a broken file keeps the certificate in force");
    assert_eq!(third, Ok(()), "reloads go on after a broken file");
}

#[tokio::test]
async fn sighup_reloads_the_certificate() {
    let pki = Pki::new();
    let tls = pki.server_tls(false);
    let config = pki.dir.path().join("toolgate.toml");
    let (cert, key) = (tls.cert_file.clone().unwrap(), tls.key_file.clone().unwrap());
    // No periodic reload: only the signal can bring the new certificate in.
    let toml = format!(
        "db = {:?}\n[tls]\ncert_file = {cert:?}\nkey_file = {key:?}\nreload_interval_ms = 0\n",
        pki.dir.path().join("trail.db"),
    );
    std::fs::write(&config, toml).unwrap();
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let mut server = std::process::Command::new(assert_cmd::cargo::cargo_bin!("toolgate"))
        .args(["serve", "--listen", &format!("127.0.0.1:{port}"), "--config"])
        .arg(&config)
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let url = format!("https://127.0.0.1:{port}");
    let pid = server.id().to_string();
    let started = until_reloaded(|| endpoint(&url, &pki.server_ca.pem, None), true).await;
    let rotated_ca = Ca::new(pki.dir.path(), "rotated-ca");

    rotate(&pki, &tls, &rotated_ca, "toolgate-2");
    let before_signal = decide(endpoint(&url, &rotated_ca.pem, None), request("read")).await;
    std::process::Command::new("kill").args(["-HUP", &pid]).status().unwrap();
    let after_signal = until_reloaded(|| endpoint(&url, &rotated_ca.pem, None), true).await;
    std::process::Command::new("kill").args(["-TERM", &pid]).status().unwrap();
    // Waited for off the runtime, which must stay free to close the client connections that
    // the server's graceful shutdown waits for.
    let status = tokio::task::spawn_blocking(move || server.wait().unwrap()).await.unwrap();

    assert_eq!(started, Ok(()));
    assert!(before_signal.is_err(), "reloaded before SIGHUP: {before_signal:?}");
    assert_eq!(after_signal, Ok(()));
    assert!(status.success(), "{status:?}");
}

#[tokio::test]
async fn a_rotated_client_ca_decides_who_may_connect() {
    let pki = Pki::new();
    let mut tls = pki.server_tls(true);
    tls.reload_interval_ms = 100;
    let url = serve(config(&pki, tls.clone())).await;
    let ca = &pki.server_ca.pem;
    let old_client = pki.client("agent-7", &[]);
    let new_client = identity(pki.stranger_ca.issue(pki.dir.path(), "agent-8", &[]));
    assert_eq!(decide(endpoint(&url, ca, Some(old_client.clone())), request("read")).await, Ok(()));

    std::fs::copy(&pki.stranger_ca.pem, tls.client_ca_file.as_ref().unwrap()).unwrap();
    let admitted = until_reloaded(|| endpoint(&url, ca, Some(new_client.clone())), true).await;
    let old_refused = decide(endpoint(&url, ca, Some(old_client)), request("read")).await;

    assert_eq!(admitted, Ok(()), "the new CA's certificates are admitted");
    assert!(old_refused.as_ref().is_err_and(|e| e.contains("UnknownCA")), "{old_refused:?}");
}

/// Mutual TLS reloaded every 100 ms, with a list from the client CA revoking `agent-9` in
/// `crl.pem`.
fn revoking_tls(pki: &Pki) -> TlsConfig {
    let crl = pki.client_ca.revocation_list(pki.dir.path(), "crl.pem", &["agent-9"], 2099);
    TlsConfig { client_crl_file: Some(crl), reload_interval_ms: 100, ..pki.server_tls(true) }
}

#[tokio::test]
async fn revoked_client_certificates_are_refused_and_revocations_reload() {
    let pki = Pki::new();
    let dir = pki.dir.path();
    let tls = revoking_tls(&pki);
    // The stranger CA issues client certificates too, but has no list in the file yet.
    let mut cas = std::fs::read(&pki.client_ca.pem).unwrap();
    cas.extend(std::fs::read(&pki.stranger_ca.pem).unwrap());
    std::fs::write(tls.client_ca_file.as_ref().unwrap(), cas).unwrap();
    let url = serve(config(&pki, tls.clone())).await;
    let ca = &pki.server_ca.pem;
    let (kept, revoked) = (pki.client("agent-7", &[]), pki.client("agent-9", &[]));
    let unlisted = identity(pki.stranger_ca.issue(dir, "agent-11", &[]));

    let kept_before = decide(endpoint(&url, ca, Some(kept.clone())), request("read")).await;
    let refused = decide(endpoint(&url, ca, Some(revoked)), request("read")).await;
    let unknown = decide(endpoint(&url, ca, Some(unlisted.clone())), request("read")).await;
    // New lists, in force at the next reload: agent-7 revoked too, and one for the stranger CA.
    let mut lists =
        std::fs::read(pki.client_ca.revocation_list(dir, "a.pem", &["agent-9", "agent-7"], 2099))
            .unwrap();
    lists.extend(std::fs::read(pki.stranger_ca.revocation_list(dir, "b.pem", &[], 2099)).unwrap());
    std::fs::write(tls.client_crl_file.as_ref().unwrap(), lists).unwrap();
    let kept_after = until_reloaded(|| endpoint(&url, ca, Some(kept.clone())), false).await;
    let listed = decide(endpoint(&url, ca, Some(unlisted)), request("read")).await;

    assert_eq!(kept_before, Ok(()));
    assert!(refused.as_ref().is_err_and(|e| e.contains("CertificateRevoked")), "{refused:?}");
    assert!(kept_after.as_ref().is_err_and(|e| e.contains("CertificateRevoked")), "{kept_after:?}");
    // Refused while its issuer had no list (rustls answers `unknown_ca`), admitted with one.
    assert!(unknown.as_ref().is_err_and(|e| e.contains("UnknownCA")), "{unknown:?}");
    assert_eq!(listed, Ok(()));
}

#[tokio::test]
async fn an_out_of_date_revocation_list_refuses_every_client_certificate() {
    let pki = Pki::new();
    let dir = pki.dir.path();
    let url = serve(config(&pki, revoking_tls(&pki))).await;
    let kept = || endpoint(&url, &pki.server_ca.pem, Some(pki.client("agent-7", &[])));

    let while_current = decide(kept(), request("read")).await;
    // The same list, but its next update was due in 2021: revocations since are unknown.
    pki.client_ca.revocation_list(dir, "crl.pem", &["agent-9"], 2021);
    let once_stale = until_reloaded(kept, false).await;

    assert_eq!(while_current, Ok(()));
    // rustls answers an expired list with the unknown_ca alert.
    assert!(once_stale.as_ref().is_err_and(|e| e.contains("UnknownCA")), "{once_stale:?}");
}

/// `GET path` over TLS to the side port at `addr`, trusting `ca` and presenting no client
/// certificate: the whole answer, or why there is none.
async fn https_get(addr: std::net::SocketAddr, ca: &Path, path: &str) -> Result<String, String> {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    use tokio_rustls::rustls::pki_types::pem::PemObject;
    use tokio_rustls::rustls::pki_types::{CertificateDer, ServerName};
    use tokio_rustls::rustls::{ClientConfig, RootCertStore, crypto::ring};

    let mut roots = RootCertStore::empty();
    roots.add(CertificateDer::from_pem_file(ca).unwrap()).unwrap();
    let config = ClientConfig::builder_with_provider(std::sync::Arc::new(ring::default_provider()))
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_root_certificates(roots)
        .with_no_client_auth();
    let connector = tokio_rustls::TlsConnector::from(std::sync::Arc::new(config));
    let tcp = tokio::net::TcpStream::connect(addr).await.map_err(|e| e.to_string())?;
    let name = ServerName::try_from("localhost").unwrap();
    let mut tls = connector.connect(name, tcp).await.map_err(|e| format!("{e:?}"))?;
    let request = format!("GET {path} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n");
    tls.write_all(request.as_bytes()).await.map_err(|e| e.to_string())?;
    let mut answer = String::new();
    tls.read_to_string(&mut answer).await.map_err(|e| e.to_string())?;
    Ok(answer)
}

#[tokio::test]
async fn the_side_port_serves_tls_without_asking_for_a_client_certificate() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    let pki = Pki::new();
    // Mutual TLS on the gRPC port; the side port only proves the server.
    let mut tls = pki.server_tls(true);
    tls.side_port = true;
    let grpc = toolgate::listener::Listener::Tcp(TcpListener::bind("127.0.0.1:0").await.unwrap());
    let http = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = http.local_addr().unwrap();
    let mut config = config(&pki, tls);
    config.console.enabled = true;
    tokio::spawn(toolgate::server::run(config, grpc, Some(http), std::future::pending()));

    let healthz = https_get(addr, &pki.server_ca.pem, "/healthz").await;
    // Over TLS the console's session cookie is Secure, and bound to this host alone.
    let console = https_get(addr, &pki.server_ca.pem, "/ui/trail").await.unwrap();
    let cookie = console.lines().find(|l| l.starts_with("set-cookie:")).unwrap();
    assert!(cookie.starts_with("set-cookie: __Host-toolgate-console="), "{cookie}");
    assert!(cookie.contains("; Secure") && cookie.contains("; HttpOnly"), "{cookie}");
    let distrusting = https_get(addr, &pki.stranger_ca.pem, "/healthz").await;
    let mut plaintext = tokio::net::TcpStream::connect(addr).await.unwrap();
    plaintext.write_all(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n").await.unwrap();
    let mut answered = Vec::new();
    let _ = plaintext.read_to_end(&mut answered).await;
    // Both refusals are counted once their handshakes end.
    let mut metrics = String::new();
    for _ in 0..50 {
        metrics = https_get(addr, &pki.server_ca.pem, "/metrics").await.unwrap();
        if metrics.contains("toolgate_tls_handshake_failures_total 2") {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }

    let healthz = healthz.unwrap();
    assert!(healthz.starts_with("HTTP/1.1 200") && healthz.ends_with("ok\n"), "{healthz}");
    assert!(distrusting.as_ref().is_err_and(|e| e.contains("UnknownIssuer")), "{distrusting:?}");
    assert!(!String::from_utf8_lossy(&answered).contains("200"), "answered in plaintext");
    assert!(metrics.contains("toolgate_tls_handshake_failures_total 2"), "{metrics}");
    assert!(metrics.contains("toolgate_tls_certificate_expiry_timestamp_seconds "), "{metrics}");
}

/// X.509 SVIDs as a SPIRE agent hands them out: a client certificate whose one URI name is a
/// SPIFFE ID, from the trust domain's CA (here the test's client CA).
#[tokio::test]
async fn spiffe_ids_map_by_trust_domain_and_path_and_name_the_caller_on_the_trail() {
    let pki = Pki::new();
    let mut config = config(&pki, pki.server_tls(true));
    config.auth = toml::from_str(
        r#"
        [[spiffe]]
        id = "spiffe://example.org/agents/*"
        roles = ["agent"]

        [[spiffe]]
        id = "spiffe://example.org/agents/billing/*"
        roles = ["agent"]
        actors = ["billing/*"]
        "#,
    )
    .unwrap();
    let db = config.db.clone();
    let url = serve(config).await;
    let ca = &pki.server_ca.pem;
    let svid = |name: &str, uris: &[&str]| {
        let sans: Vec<String> = uris.iter().map(|u| format!("uri:{u}")).collect();
        pki.client(name, &sans.iter().map(String::as_str).collect::<Vec<_>>())
    };
    let search = svid("search", &["spiffe://example.org/agents/search"]);
    let billing = svid("billing", &["spiffe://example.org/agents/billing/eu"]);
    let foreign = svid("foreign", &["spiffe://other.org/agents/search"]);
    let smith = svid("smith", &["spiffe://example.org/agentsmith"]);
    let two = svid("two", &["spiffe://example.org/agents/x", "spiffe://example.org/agents/y"]);
    let id = |s: &str| s.to_owned();
    let search_id = id("spiffe://example.org/agents/search");

    let own = decide(endpoint(&url, ca, Some(search.clone())), as_actor(&search_id)).await;
    let other = decide(endpoint(&url, ca, Some(search)), as_actor("billing/eu")).await;
    let billing_own =
        decide(endpoint(&url, ca, Some(billing.clone())), as_actor("billing/eu")).await;
    let billing_as_id = decide(
        endpoint(&url, ca, Some(billing)),
        as_actor("spiffe://example.org/agents/billing/eu"),
    )
    .await;
    let foreign = decide(endpoint(&url, ca, Some(foreign)), as_actor(&search_id)).await;
    let smith =
        decide(endpoint(&url, ca, Some(smith)), as_actor("spiffe://example.org/agentsmith")).await;
    let two =
        decide(endpoint(&url, ca, Some(two)), as_actor("spiffe://example.org/agents/x")).await;

    assert_eq!(own, Ok(()));
    assert!(other.as_ref().is_err_and(|e| e.starts_with("PermissionDenied")), "{other:?}");
    assert_eq!(billing_own, Ok(()), "the longest entry, with its actors");
    assert!(billing_as_id.is_err(), "{billing_as_id:?}");
    for (refused, why) in [
        (&foreign, "not in [[auth.spiffe]]"),
        (&smith, "not in [[auth.spiffe]]"),
        (&two, "exactly one URI name"),
    ] {
        assert!(
            refused.as_ref().is_err_and(|e| e.starts_with("PermissionDenied") && e.contains(why)),
            "{refused:?}"
        );
    }
    let rows = rows(&db);
    let decided: Vec<_> = rows
        .iter()
        .filter(|r| r.kind == "decision")
        .map(|r| (r.actor_id.clone().unwrap_or_default(), r.request.clone().unwrap_or_default()))
        .collect();
    assert!(
        decided.contains(&(
            search_id.clone(),
            r#"{"identity":"spiffe://example.org/agents/search"}"#.to_owned()
        )),
        "{decided:?}"
    );
    assert!(
        decided.contains(&(
            "billing/eu".to_owned(),
            r#"{"identity":"spiffe://example.org/agents/billing/eu"}"#.to_owned()
        )),
        "{decided:?}"
    );
}
