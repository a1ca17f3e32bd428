//! Bearer JWTs from a real OpenID provider: the certified `oidc-provider` from npm (scripts/test
//! installs it and names its script in `TOOLGATE_TEST_OIDC_PROVIDER`), started on an ephemeral
//! port for each test. Its tokens are taken by their claims; every forged, expired, misdirected
//! or foreign one is refused and recorded, never the token.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use hmac::{KeyInit, Mac};
use serde_json::{Value, json};
use tonic::metadata::MetadataValue;
use tonic::{Code, Request};
use toolgate::config::Config;
use toolgate::proto::audit_client::AuditClient;
use toolgate::proto::{Actor, DecideRequest, QueryRequest};

use crate::helpers::{TestApp, request, rows, spawn_app_with};

/// A running OpenID provider; killed when dropped.
pub struct Provider {
    child: Child,
    /// The issuer its tokens name.
    pub issuer: String,
    /// Where it listens.
    pub base: String,
    lines: mpsc::Receiver<Value>,
}

impl Provider {
    /// A provider on an ephemeral port; with `claimed_issuer`, a forger that claims that
    /// issuer while signing with keys of its own.
    pub fn start(claimed_issuer: Option<&str>) -> Self {
        let script = std::env::var("TOOLGATE_TEST_OIDC_PROVIDER").expect(
            "TOOLGATE_TEST_OIDC_PROVIDER is not set: the identity tests need oidc-provider; run \
             scripts/test, which installs it",
        );
        let mut command = Command::new("node");
        command.arg(script).stdout(Stdio::piped()).stderr(Stdio::null());
        if let Some(issuer) = claimed_issuer {
            command.env("ISSUER", issuer);
        }
        let mut child = command.spawn().unwrap();
        let stdout = child.stdout.take().unwrap();
        let (send, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if let Ok(value) = serde_json::from_str::<Value>(&line) {
                    let _ = send.send(value);
                }
            }
        });
        let first = lines.recv_timeout(Duration::from_secs(30)).expect("the provider started");
        let issuer = first["issuer"].as_str().unwrap().to_owned();
        let base = format!("http://127.0.0.1:{}", first["port"]);
        Self { child, issuer, base, lines }
    }

    /// An access token for `client` (client credentials), for `resource` if given.
    pub async fn token(&self, client: &str, resource: Option<&str>) -> String {
        let mut form = vec![("grant_type", "client_credentials")];
        if let Some(resource) = resource {
            form.push(("resource", resource));
        }
        let answer = reqwest::Client::new()
            .post(format!("{}/token", self.base))
            .basic_auth(client, Some(format!("{client}-secret")))
            .form(&form)
            .send()
            .await
            .unwrap();
        let body: Value = serde_json::from_str(&answer.text().await.unwrap()).unwrap();
        body["access_token"].as_str().unwrap_or_else(|| panic!("no token: {body}")).to_owned()
    }

    /// Rotates its signing key without a restart, keeping the old ones published (SIGUSR2)
    /// or withdrawing them (SIGUSR1); the new key's id.
    pub fn rotate(&self, withdraw: bool) -> String {
        use nix::sys::signal::Signal;
        let pid = nix::unistd::Pid::from_raw(i32::try_from(self.child.id()).unwrap());
        let signal = if withdraw { Signal::SIGUSR1 } else { Signal::SIGUSR2 };
        nix::sys::signal::kill(pid, signal).unwrap();
        let rotated = self.lines.recv_timeout(Duration::from_secs(30)).expect("rotated");
        rotated["rotated"].as_str().unwrap().to_owned()
    }
}

impl Drop for Provider {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn decide_as(actor: &str, token: &str) -> Request<DecideRequest> {
    let mut req = Request::new(DecideRequest {
        actor: Some(Actor { id: actor.into(), kind: "agent".into(), delegation_chain: vec![] }),
        ..request("read")
    });
    let value: MetadataValue<_> = format!("Bearer {token}").parse().unwrap();
    req.metadata_mut().insert("authorization", value);
    req
}

/// A token's parts, decoded.
fn parts(token: &str) -> (Value, Value) {
    let mut parts = token.split('.');
    let mut json =
        || serde_json::from_slice(&URL_SAFE_NO_PAD.decode(parts.next().unwrap()).unwrap()).unwrap();
    (json(), json())
}

fn encode(value: &Value) -> String {
    URL_SAFE_NO_PAD.encode(value.to_string())
}

async fn app_trusting(issuer: &str) -> TestApp {
    let issuer = issuer.to_owned();
    spawn_app_with(move |config: &mut Config| {
        config.auth = toml::from_str(&format!(
            r#"
            [[issuers]]
            issuer = "{issuer}"
            audiences = ["urn:toolgate"]
            actors_claim = "actors"
            leeway_seconds = 1
            refetch_seconds = 1
            "#
        ))
        .unwrap();
    })
    .await
}

/// A claim path is a path: a token whose top level carries a claim literally named
/// `realm_access.roles` gets the roles of the nested claim the configuration names, never the
/// flat one's.
#[tokio::test]
async fn a_flat_claim_named_like_the_roles_path_grants_nothing() {
    let provider = Provider::start(None);
    let issuer = provider.issuer.clone();
    let app = spawn_app_with(move |config: &mut Config| {
        config.auth = toml::from_str(&format!(
            r#"
            [[issuers]]
            issuer = "{issuer}"
            audiences = ["urn:toolgate"]
            roles_claim = "realm_access.roles"
            "#
        ))
        .unwrap();
    })
    .await;
    let token = provider.token("flat-realm", None).await;
    assert_eq!(answer(&app, decide_as("flat-realm", &token)).await, Ok(()), "an agent, nested");
    let mut query = Request::new(QueryRequest::default());
    query.metadata_mut().insert("authorization", format!("Bearer {token}").parse().unwrap());
    let refused = AuditClient::new(app.channel.clone()).query(query).await.unwrap_err();
    assert_eq!(refused.code(), Code::PermissionDenied, "not an auditor: {}", refused.message());
}

/// Whether `req` is answered; else its code and message.
async fn answer(app: &TestApp, req: Request<DecideRequest>) -> Result<(), (Code, String)> {
    let mut client = app.client.clone();
    client.decide(req).await.map(|_| ()).map_err(|s| (s.code(), s.message().to_owned()))
}

#[tokio::test]
async fn a_providers_tokens_are_taken_by_their_claims_and_every_bad_one_is_refused() {
    let provider = Provider::start(None);
    let app = app_trusting(&provider.issuer).await;
    let agent = provider.token("agent-1", None).await;
    let team = provider.token("agents-team-a", None).await;
    let auditor = provider.token("auditor", None).await;
    let no_roles = provider.token("no-roles", None).await;
    let elsewhere = provider.token("agent-1", Some("urn:another-service")).await;
    let short = provider.token("short", None).await;
    let stranger = Provider::start(None);
    let foreign = stranger.token("agent-1", None).await;
    let forger = Provider::start(Some(&provider.issuer));
    let forged = forger.token("agent-1", None).await;

    // The header and claims of a good token, re-signed as an attacker can.
    let (header, claims) = parts(&agent);
    let none = format!("{}.{}.", encode(&json!({"alg": "none", "typ": "at+jwt"})), encode(&claims));
    // HMAC keyed with what the attacker can read: the provider's published key.
    let jwks = reqwest::get(format!("{}/jwks", provider.base)).await.unwrap();
    let jwks: Value = serde_json::from_str(&jwks.text().await.unwrap()).unwrap();
    let public = jwks["keys"][0].to_string();
    let hs_header = json!({"alg": "HS256", "typ": "at+jwt", "kid": header["kid"]});
    let hs_body = format!("{}.{}", encode(&hs_header), encode(&claims));
    let mut mac = hmac::Hmac::<sha2::Sha256>::new_from_slice(public.as_bytes()).unwrap();
    mac.update(hs_body.as_bytes());
    let hmac = format!("{hs_body}.{}", URL_SAFE_NO_PAD.encode(mac.finalize().into_bytes()));
    let mut escalated = claims.clone();
    escalated["sub"] = json!("admin");
    let signature = agent.rsplit('.').next().unwrap();
    let tampered = format!("{}.{}.{signature}", encode(&header), encode(&escalated));

    assert_eq!(answer(&app, decide_as("agent-1", &agent)).await, Ok(()));
    let (code, why) = answer(&app, decide_as("agent-2", &agent)).await.unwrap_err();
    assert_eq!(code, Code::PermissionDenied, "{why}");
    assert_eq!(answer(&app, decide_as("team-a/coder", &team)).await, Ok(()), "the actors claim");
    let (code, _) = answer(&app, decide_as("agents-team-a", &team)).await.unwrap_err();
    assert_eq!(code, Code::PermissionDenied, "with an actors claim the subject is not an actor");
    for (token, role) in [(&auditor, "auditor"), (&no_roles, "none")] {
        let (code, why) = answer(&app, decide_as("agent-1", token)).await.unwrap_err();
        assert_eq!(code, Code::PermissionDenied, "{role}: {why}");
        assert!(why.contains("roles do not include"), "{why}");
    }
    let mut audit = AuditClient::new(app.channel.clone());
    let mut query = Request::new(QueryRequest::default());
    query.metadata_mut().insert("authorization", format!("Bearer {auditor}").parse().unwrap());
    assert!(audit.query(query).await.is_ok(), "the auditor reads");

    tokio::time::sleep(Duration::from_millis(3_100)).await;
    for (token, why) in [
        (&elsewhere, "audience is not this service"),
        (&short, "has expired"),
        (&foreign, "issuer is not in [[auth.issuers]]"),
        (&forged, "signed by a key its issuer does not publish"),
        (&none, "algorithm is not one its issuer's entry accepts"),
        (&hmac, "algorithm is not one its issuer's entry accepts"),
        (&tampered, "signature does not verify"),
        (&"not.a.jwt".to_owned(), "neither configured nor a JWT"),
    ] {
        let refused = answer(&app, decide_as("agent-1", token)).await;
        let (code, message) = refused.unwrap_err();
        assert_eq!(code, Code::Unauthenticated, "{why}: {message}");
        assert!(message.contains(why), "{why}: {message}");
    }

    // A rotation: a token signed by the new key is taken without a restart, once the keys
    // may be fetched again (the forged token's unknown key fetched them a moment ago).
    let kid = provider.rotate(false);
    tokio::time::sleep(Duration::from_millis(1_100)).await;
    let rotated = provider.token("agent-1", None).await;
    assert_eq!(parts(&rotated).0["kid"], json!(kid));
    assert_eq!(answer(&app, decide_as("agent-1", &rotated)).await, Ok(()));
    assert_eq!(answer(&app, decide_as("agent-1", &agent)).await, Ok(()), "the old key stays");

    // A key withdrawn: the tokens it signed are refused from the next fetch on, though they
    // were verified before and have not expired.
    let kid = provider.rotate(true);
    tokio::time::sleep(Duration::from_millis(1_100)).await;
    let fresh = provider.token("agent-1", None).await;
    assert_eq!(parts(&fresh).0["kid"], json!(kid));
    assert_eq!(answer(&app, decide_as("agent-1", &fresh)).await, Ok(()));
    let (code, why) = answer(&app, decide_as("agent-1", &rotated)).await.unwrap_err();
    assert_eq!(code, Code::Unauthenticated);
    assert!(why.contains("signed by a key its issuer does not publish"), "{why}");

    let rows = rows(&app.db);
    let identity = format!("jwt:{}#agent-1", provider.issuer);
    let decided = rows.iter().filter(|r| r.kind == "decision");
    assert!(
        decided.clone().all(|r| r
            .request
            .as_deref()
            .unwrap_or_default()
            .contains("\"identity\":\"jwt:")),
        "every decision names who asked"
    );
    assert!(decided.clone().any(|r| r.request.as_deref().is_some_and(|q| q.contains(&identity))));
    let refusals: Vec<String> = rows
        .iter()
        .filter(|r| r.kind == "access_denied")
        .map(|r| {
            format!(
                "{} {}",
                r.actor_id.as_deref().unwrap_or_default(),
                r.reason.as_deref().unwrap_or_default()
            )
        })
        .collect();
    for why in ["has expired", "audience", "does not publish", "algorithm", "signature"] {
        assert!(refusals.iter().any(|r| r.contains(why)), "{why} not in {refusals:?}");
    }
    // No token, nor any part of one, is ever stored.
    let stored = std::fs::read(&app.db).unwrap();
    for token in [&agent, &forged, &none, &hmac, &tampered, &rotated, &fresh] {
        let signature = token.rsplit('.').next().unwrap();
        let head = &token[..40];
        for part in [head, signature].into_iter().filter(|p| p.len() > 10) {
            assert!(
                !stored.windows(part.len()).any(|w| w == part.as_bytes()),
                "a token's part is on the trail"
            );
        }
    }
}
