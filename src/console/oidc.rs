//! Signing people in through the identity provider (`[console.oidc]`): OpenID Connect's
//! authorization code flow, with PKCE (S256), `state` and `nonce`.
//!
//! `GET /ui/oidc/start` sends the browser to the provider's authorization endpoint with a fresh
//! state, nonce and code challenge. What the callback needs back (the state, the nonce, the
//! verifier, where to go, until when) rides in a `SameSite=Lax` cookie signed with a key of this
//! process (HMAC-SHA256): no memory is kept per sign-in, so a flood of starts can neither fill
//! the memory nor push out a person's sign-in. (The provider's redirect back is a cross-site
//! navigation, which a `Strict` cookie would not follow.) `GET /ui/oidc/callback` takes the
//! code: the cookie must be this process's and unexpired, its state the one the provider sends
//! back, the provider's `iss` (RFC 9207), when it says one, its own; the code is exchanged at
//! the token endpoint with the verifier (the provider takes a code once); the ID token is
//! checked as `[[auth.issuers]]` checks a JWT, for this client, with this sign-in's nonce; and
//! its claims give the person's roles and actors as that issuer's entry maps them. A person who
//! may neither read nor judge is refused, and recorded, as a token would be. The session is
//! then the console's own (a `Strict` cookie), reached through a page that moves on by itself,
//! so that the cookie is sent from then on.

use std::time::{Duration, Instant};

use axum::extract::{Query, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Redirect, Response};
use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use hmac::{Hmac, KeyInit, Mac};
use maud::html;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

use super::page::{self, Nav};
use super::session::{Credential, random_id};
use super::{Console, sign_in};
use crate::auth::{BadAuth, Discovery, provider_json};
use crate::config::OidcConfig;
use crate::config::{AuthConfig, Role};

/// How long a sign-in may take at the provider.
const PENDING_FOR: Duration = Duration::from_secs(600);
/// How long the provider's endpoints are kept; a failure to find them, for less.
const ENDPOINTS_FOR: Duration = Duration::from_secs(600);
const FAILURE_FOR: Duration = Duration::from_secs(5);
/// How long a call to the provider may take.
const PROVIDER_TIMEOUT: Duration = Duration::from_secs(5);
/// The error codes a provider's redirect may name (RFC 6749 4.1.2.1, OpenID Connect Core
/// 3.1.2.6); any other is shown as an error without its words.
const ERRORS: [&str; 11] = [
    "access_denied",
    "invalid_request",
    "unauthorized_client",
    "unsupported_response_type",
    "invalid_scope",
    "server_error",
    "temporarily_unavailable",
    "login_required",
    "consent_required",
    "interaction_required",
    "account_selection_required",
];

/// The console's client at the identity provider.
#[derive(Debug)]
pub struct Oidc {
    config: OidcConfig,
    secret: Option<String>,
    http: reqwest::Client,
    /// The endpoints as last found, or why they were not.
    endpoints: tokio::sync::Mutex<Option<(Instant, Result<Endpoints, String>)>>,
    /// The key the sign-in cookies are signed with, this process's own.
    key: [u8; 32],
    /// The sign-in cookie's name (`__Host-` and `Secure` over TLS).
    cookie: &'static str,
    secure: bool,
}

#[derive(Debug, Clone)]
struct Endpoints {
    authorization: String,
    token: String,
    /// The provider names itself in its redirects (RFC 9207): one without `iss` is refused.
    names_itself: bool,
}

/// A sign-in under way, as its cookie carries it.
#[derive(Debug, Serialize, Deserialize)]
struct Pending {
    state: String,
    nonce: String,
    verifier: String,
    next: String,
    /// Until when (Unix seconds).
    until: u64,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct Start {
    next: String,
}

#[derive(Debug, Deserialize)]
pub struct Callback {
    code: Option<String>,
    state: Option<String>,
    iss: Option<String>,
    error: Option<String>,
}

impl Oidc {
    /// The client of `config`, whose issuer `auth` must list.
    pub fn new(config: &OidcConfig, auth: &AuthConfig) -> Result<Self, BadAuth> {
        let bad = |why: &str| BadAuth::Oidc(why.to_owned());
        if !auth.issuers.iter().any(|issuer| issuer.issuer == config.issuer) {
            return Err(bad(
                "its issuer must be one of [[auth.issuers]], whose keys and roles it uses",
            ));
        }
        let redirect =
            url::Url::parse(&config.redirect_uri).map_err(|_| bad("redirect_uri is not a URL"))?;
        if !matches!(redirect.scheme(), "http" | "https") || redirect.path() != "/ui/oidc/callback"
        {
            return Err(bad("redirect_uri is the console's http(s)://…/ui/oidc/callback"));
        }
        let http = reqwest::Client::builder()
            .timeout(PROVIDER_TIMEOUT)
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .map_err(|e| bad(&e.to_string()))?;
        let secret = std::env::var(&config.client_secret_env).ok().filter(|s| !s.is_empty());
        let mut key = [0u8; 32];
        getrandom::fill(&mut key).map_err(|e| bad(&format!("no random bytes for a key: {e}")))?;
        Ok(Self {
            config: config.clone(),
            secret,
            http,
            endpoints: tokio::sync::Mutex::default(),
            key,
            cookie: "toolgate-oidc",
            secure: false,
        })
    }

    /// The same, served over TLS when `secure`: its cookie is then `Secure` and `__Host-`
    /// (no other host of the domain can set it).
    pub fn served(self, secure: bool) -> Self {
        let cookie = if secure { "__Host-toolgate-oidc" } else { "toolgate-oidc" };
        Self { cookie, secure, ..self }
    }

    /// The provider's authorization and token endpoints, from its discovery document (kept;
    /// a failure to find them is kept a few seconds, so that a provider that hangs holds up
    /// one sign-in in that time, not every one).
    async fn endpoints(&self) -> Result<Endpoints, String> {
        let mut kept = self.endpoints.lock().await;
        if let Some((at, found)) = kept.as_ref() {
            let lasts = if found.is_ok() { ENDPOINTS_FOR } else { FAILURE_FOR };
            if at.elapsed() < lasts {
                return found.clone();
            }
        }
        let found = self.discover().await;
        *kept = Some((Instant::now(), found.clone()));
        found
    }

    async fn discover(&self) -> Result<Endpoints, String> {
        let discovery = Discovery::of(&self.http, &self.config.issuer).await?;
        Ok(Endpoints {
            authorization: discovery.endpoint("authorization_endpoint")?,
            token: discovery.endpoint("token_endpoint")?,
            names_itself: discovery.says("authorization_response_iss_parameter_supported"),
        })
    }

    #[allow(clippy::expect_used)] // see the INVARIANT inside
    fn mac(&self) -> Hmac<Sha256> {
        // INVARIANT: HMAC takes a key of any length.
        <Hmac<Sha256> as KeyInit>::new_from_slice(&self.key).expect("any key length")
    }

    /// The sign-in cookie carrying `pending` (signed), or, empty, removing it.
    fn cookie_of(&self, pending: Option<&Pending>) -> String {
        let (value, max_age) = match pending.and_then(|p| serde_json::to_vec(p).ok()) {
            Some(json) => {
                let payload = URL_SAFE_NO_PAD.encode(json);
                let mut mac = self.mac();
                mac.update(payload.as_bytes());
                let tag = URL_SAFE_NO_PAD.encode(mac.finalize().into_bytes());
                (format!("{payload}.{tag}"), PENDING_FOR.as_secs())
            }
            None => (String::new(), 0),
        };
        let secure = if self.secure { "; Secure" } else { "" };
        format!(
            "{}={value}; Path=/; HttpOnly; SameSite=Lax; Max-Age={max_age}{secure}",
            self.cookie
        )
    }

    /// The sign-in the browser's cookie carries, when this process signed it and it is not
    /// over.
    fn pending_of(&self, headers: &HeaderMap) -> Option<Pending> {
        let (payload, tag) = super::session::cookie(headers, self.cookie)?.split_once('.')?;
        let mut mac = self.mac();
        mac.update(payload.as_bytes());
        mac.verify_slice(&URL_SAFE_NO_PAD.decode(tag).ok()?).ok()?;
        let pending: Pending =
            serde_json::from_slice(&URL_SAFE_NO_PAD.decode(payload).ok()?).ok()?;
        (pending.until > jsonwebtoken::get_current_timestamp()).then_some(pending)
    }

    /// The ID token the code is exchanged for.
    async fn exchange(
        &self,
        token_endpoint: &str,
        code: &str,
        verifier: &str,
    ) -> Result<String, String> {
        let form = [
            ("grant_type", "authorization_code"),
            ("code", code),
            ("redirect_uri", &self.config.redirect_uri),
            ("code_verifier", verifier),
            ("client_id", &self.config.client_id),
        ];
        let mut request = self.http.post(token_endpoint).form(&form);
        if let Some(secret) = &self.secret {
            // RFC 6749 2.3.1: each form-encoded before Basic's base64.
            let encoded =
                |text: &str| form_urlencoded::byte_serialize(text.as_bytes()).collect::<String>();
            request = request.basic_auth(encoded(&self.config.client_id), Some(encoded(secret)));
        }
        let tokens = provider_json(request).await.map_err(|e| format!("{token_endpoint}: {e}"))?;
        match tokens.get("id_token").and_then(Value::as_str) {
            Some(id_token) => Ok(id_token.to_owned()),
            None => Err("the token endpoint gave no ID token".to_owned()),
        }
    }
}

/// `GET /ui/oidc/start`.
pub async fn start(
    State(console): State<std::sync::Arc<Console>>,
    Query(start): Query<Start>,
) -> Response {
    let Some(oidc) = &console.oidc else { return Redirect::to("/ui/sign-in").into_response() };
    let endpoints = match oidc.endpoints().await {
        Ok(endpoints) => endpoints,
        Err(e) => {
            tracing::warn!(error = e, "the console's identity provider cannot be reached");
            let why = "the identity provider cannot be reached: see the server's log";
            return sign_in::form(
                &console,
                &start.next,
                Some((StatusCode::SERVICE_UNAVAILABLE, why)),
            );
        }
    };
    let (Some(state), Some(nonce), Some(verifier)) = (random_id(), random_id(), random_id()) else {
        let why = "no random bytes for a sign-in: see the server's log";
        return sign_in::form(&console, &start.next, Some((StatusCode::SERVICE_UNAVAILABLE, why)));
    };
    let challenge = URL_SAFE_NO_PAD.encode(Sha256::digest(verifier.as_bytes()));
    let scope = oidc.config.scopes.join(" ");
    let Ok(mut to) = url::Url::parse(&endpoints.authorization) else {
        return sign_in::form(
            &console,
            &start.next,
            Some((StatusCode::BAD_GATEWAY, "no endpoint")),
        );
    };
    to.query_pairs_mut()
        .append_pair("response_type", "code")
        .append_pair("client_id", &oidc.config.client_id)
        .append_pair("redirect_uri", &oidc.config.redirect_uri)
        .append_pair("scope", &scope)
        .append_pair("state", &state)
        .append_pair("nonce", &nonce)
        .append_pair("code_challenge", &challenge)
        .append_pair("code_challenge_method", "S256");
    let next = sign_in::destination(&start.next).to_owned();
    let until = jsonwebtoken::get_current_timestamp() + PENDING_FOR.as_secs();
    let cookie = oidc.cookie_of(Some(&Pending { state, nonce, verifier, next, until }));
    ([(header::SET_COOKIE, cookie)], Redirect::to(to.as_str())).into_response()
}

/// `GET /ui/oidc/callback`.
pub async fn callback(
    State(console): State<std::sync::Arc<Console>>,
    headers: HeaderMap,
    Query(back): Query<Callback>,
) -> Response {
    let Some(oidc) = &console.oidc else { return Redirect::to("/ui/sign-in").into_response() };
    // Only this browser's sign-in is answered: whatever else comes here leaves it alone.
    let pending = oidc.pending_of(&headers).filter(|pending| {
        back.state
            .as_deref()
            .is_some_and(|state| bool::from(state.as_bytes().ct_eq(pending.state.as_bytes())))
    });
    let Some(pending) = pending else {
        let why = "not signed in: this sign-in was not started here, or is over";
        return sign_in::form(&console, "/ui", Some((StatusCode::FORBIDDEN, why)));
    };
    let refused = |status, why: &str| {
        let mut response = sign_in::form(&console, &pending.next, Some((status, why)));
        if let Ok(gone) = HeaderValue::from_str(&oidc.cookie_of(None)) {
            response.headers_mut().append(header::SET_COOKIE, gone);
        }
        response
    };
    let id_token = match id_token_of(oidc, &back, &pending).await {
        Ok(id_token) => id_token,
        Err((status, why)) => return refused(status, &why),
    };
    let provider = (oidc.config.issuer.as_str(), oidc.config.client_id.as_str());
    let person = match console.guard.sign_in_person(provider, &id_token, &pending.nonce).await {
        Ok(person) => person,
        Err(status) => {
            let why = format!("not signed in: {}", super::said(&status));
            return refused(StatusCode::FORBIDDEN, &why);
        }
    };
    // A new sign-in ends the session this browser had, as a token's does.
    if let Some(before) = console.sessions.find(&headers) {
        console.sessions.end(&before.id);
    }
    let caller = person.caller();
    let roles = (caller.has(Role::Auditor), caller.has(Role::Approver));
    let approver_as = caller.sole_actor().map(str::to_owned);
    let id = caller.id.clone();
    let started =
        console.sessions.start(id.clone(), Credential::Person(person), roles, approver_as);
    let session = match started {
        Ok((_, session)) => session,
        Err(e) => return refused(StatusCode::SERVICE_UNAVAILABLE, &e.to_string()),
    };
    let next = match roles.0 {
        false => "/ui/approvals".to_owned(),
        true => pending.next,
    };
    signed_in(&console, oidc, &id, &next, session)
}

/// The ID token the provider's answer `back` is exchanged for; why not, as the page says it.
async fn id_token_of(
    oidc: &Oidc,
    back: &Callback,
    pending: &Pending,
) -> Result<String, (StatusCode, String)> {
    if let Some(error) = &back.error {
        let said = ERRORS.iter().find(|known| *known == error).copied().unwrap_or("an error");
        let why = format!("not signed in: the identity provider said `{said}`");
        return Err((StatusCode::FORBIDDEN, why));
    }
    let Some(code) = &back.code else {
        let why = "not signed in: the identity provider gave no code";
        return Err((StatusCode::BAD_REQUEST, why.to_owned()));
    };
    let endpoints = oidc.endpoints().await;
    // RFC 9207: the provider's own name, when it gives one, and always when it says it does.
    let names_itself = endpoints.as_ref().is_ok_and(|e| e.names_itself);
    let iss = back.iss.as_deref();
    if iss.is_some_and(|iss| iss != oidc.config.issuer) || (names_itself && iss.is_none()) {
        let why = "not signed in: the answer is not the provider's own (iss)";
        return Err((StatusCode::FORBIDDEN, why.to_owned()));
    }
    let id_token = match endpoints {
        Ok(endpoints) => oidc.exchange(&endpoints.token, code, &pending.verifier).await,
        Err(e) => Err(e),
    };
    id_token.map_err(|e| {
        tracing::warn!(error = e, "the console's sign-in code was not exchanged");
        let why = "not signed in: the code was not exchanged at the identity provider; see the \
                   server's log";
        (StatusCode::BAD_GATEWAY, why.to_owned())
    })
}

/// The page of a sign-in that went through: it sets the session's cookie, ends the pending
/// sign-in's, and goes on to `next` by itself.
fn signed_in(console: &Console, oidc: &Oidc, id: &str, next: &str, session: String) -> Response {
    // The provider's redirect was another site's navigation: the session's `Strict` cookie is
    // sent from the next one, which this page makes by itself.
    let body = html! {
        div.card.signin {
            h1 { "Signed in" }
            p { "As " code { (id) } ". " a href=(next) { "Continue" } }
        }
    };
    let mut response = page::ok(page::frame(&console.frame("Signed in", Nav::None, None), body));
    let headers = response.headers_mut();
    for cookie in [session, oidc.cookie_of(None)] {
        if let Ok(value) = HeaderValue::from_str(&cookie) {
            headers.append(header::SET_COOKIE, value);
        }
    }
    if let Ok(refresh) = HeaderValue::from_str(&format!("0; url={next}")) {
        headers.insert(header::HeaderName::from_static("refresh"), refresh);
    }
    response
}
