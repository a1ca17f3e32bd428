//! Signing people in through the identity provider (`[console.oidc]`): OpenID Connect's
//! authorization code flow, with PKCE (S256), `state` and `nonce`.
//!
//! `GET /ui/oidc/start` sends the browser to the provider's authorization endpoint with a fresh
//! state, nonce and code challenge, remembered here (at most 10,000, for 10 minutes: a visitor
//! who is not signed in can start sign-ins, not fill the memory) and bound to the browser by a
//! `SameSite=Lax` cookie holding the state (the provider's redirect back is a cross-site
//! navigation, which a `Strict` cookie would not follow). `GET /ui/oidc/callback` takes the
//! code once: the state must be the cookie's and a pending one's, the provider's `iss` (RFC
//! 9207), when it says one, its own; the code is exchanged at the token endpoint with the
//! verifier; the ID token is checked as `[[auth.issuers]]` checks a JWT, for this client, with
//! this sign-in's nonce; and its claims give the person's roles and actors as that issuer's
//! entry maps them. A person who may neither read nor judge is refused, and recorded, as a token
//! would be. The session is then the console's own (a `Strict` cookie), reached through a page
//! that moves on by itself, so that the cookie is sent from then on.

use std::collections::HashMap;
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

use axum::extract::{Query, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Redirect, Response};
use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use maud::html;
use serde::Deserialize;
use serde_json::Value;
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

use super::page::{self, Nav};
use super::session::{Credential, random_id};
use super::{Console, sign_in};
use crate::auth::{AuthConfig, BadAuth, Role};
use crate::config::OidcConfig;

/// How long a sign-in may take at the provider.
const PENDING_FOR: Duration = Duration::from_secs(600);
/// Sign-ins pending at most; the oldest goes to make room.
const MAX_PENDING: usize = 10_000;
/// How long the provider's endpoints are kept.
const ENDPOINTS_FOR: Duration = Duration::from_secs(600);
/// How long a call to the provider may take.
const PROVIDER_TIMEOUT: Duration = Duration::from_secs(10);
/// The most a provider's answer may weigh.
const MAX_ANSWER_BYTES: usize = 1 << 20;

/// The console's client at the identity provider.
#[derive(Debug)]
pub struct Oidc {
    config: OidcConfig,
    secret: Option<String>,
    http: reqwest::Client,
    endpoints: tokio::sync::Mutex<Option<(Instant, Endpoints)>>,
    pending: Mutex<HashMap<String, Pending>>,
    /// The state cookie's name (`__Host-` and `Secure` over TLS).
    cookie: &'static str,
    secure: bool,
}

#[derive(Debug, Clone)]
struct Endpoints {
    authorization: String,
    token: String,
}

#[derive(Debug)]
struct Pending {
    nonce: String,
    verifier: String,
    next: String,
    started: Instant,
}

#[derive(Debug, Deserialize)]
pub struct Start {
    #[serde(default)]
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
        Ok(Self {
            config: config.clone(),
            secret,
            http,
            endpoints: tokio::sync::Mutex::default(),
            pending: Mutex::default(),
            cookie: "toolgate-oidc",
            secure: false,
        })
    }

    /// The same, served over TLS when `secure`: its cookie is then `Secure` (and `__Secure-`).
    pub fn served(self, secure: bool) -> Self {
        let cookie = if secure { "__Secure-toolgate-oidc" } else { "toolgate-oidc" };
        Self { cookie, secure, ..self }
    }

    /// The provider's authorization and token endpoints, from its discovery document.
    async fn endpoints(&self) -> Result<Endpoints, String> {
        let mut kept = self.endpoints.lock().await;
        if let Some((at, endpoints)) = kept.as_ref()
            && at.elapsed() < ENDPOINTS_FOR
        {
            return Ok(endpoints.clone());
        }
        let url = format!(
            "{}/.well-known/openid-configuration",
            self.config.issuer.trim_end_matches('/')
        );
        let document = answer(self.http.get(&url)).await?;
        if document.get("issuer").and_then(Value::as_str) != Some(self.config.issuer.as_str()) {
            return Err(format!("{url} names another issuer"));
        }
        let endpoint = |name: &str| {
            document
                .get(name)
                .and_then(Value::as_str)
                .filter(|url| crate::auth::fetchable(url))
                .map(ToOwned::to_owned)
                .ok_or(format!("{url} gives no HTTPS `{name}`"))
        };
        let endpoints = Endpoints {
            authorization: endpoint("authorization_endpoint")?,
            token: endpoint("token_endpoint")?,
        };
        *kept = Some((Instant::now(), endpoints.clone()));
        Ok(endpoints)
    }

    fn pending(&self) -> std::sync::MutexGuard<'_, HashMap<String, Pending>> {
        self.pending.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Remembers a sign-in under its state.
    fn remember(&self, state: String, pending: Pending) {
        let mut all = self.pending();
        all.retain(|_, p| p.started.elapsed() < PENDING_FOR);
        if all.len() >= MAX_PENDING
            && let Some(oldest) = all.iter().min_by_key(|(_, p)| p.started).map(|(s, _)| s.clone())
        {
            all.remove(&oldest);
        }
        all.insert(state, pending);
    }

    /// The state cookie: `state` for the sign-in's time, or (empty) removed.
    fn state_cookie(&self, state: &str, max_age: u64) -> String {
        let secure = if self.secure { "; Secure" } else { "" };
        format!(
            "{}={state}; Path=/ui/oidc; HttpOnly; SameSite=Lax; Max-Age={max_age}{secure}",
            self.cookie
        )
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
            request = request.basic_auth(&self.config.client_id, Some(secret));
        }
        let tokens = answer(request).await?;
        match tokens.get("id_token").and_then(Value::as_str) {
            Some(id_token) => Ok(id_token.to_owned()),
            None => Err("the token endpoint gave no ID token".to_owned()),
        }
    }
}

/// A provider's JSON answer, read up to [`MAX_ANSWER_BYTES`].
async fn answer(request: reqwest::RequestBuilder) -> Result<Value, String> {
    let mut response = request.send().await.map_err(|e| e.to_string())?;
    let status = response.status();
    let mut body = Vec::new();
    while let Some(chunk) = response.chunk().await.map_err(|e| e.to_string())? {
        body.extend_from_slice(&chunk);
        if body.len() > MAX_ANSWER_BYTES {
            return Err(format!("an answer over {MAX_ANSWER_BYTES} bytes"));
        }
    }
    if !status.is_success() {
        return Err(format!("the provider answered {status}"));
    }
    serde_json::from_slice(&body).map_err(|e| e.to_string())
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
    let cookie = oidc.state_cookie(&state, PENDING_FOR.as_secs());
    // The cookie's path is the callback's: the browser sends it there only.
    oidc.remember(state, Pending { nonce, verifier, next, started: Instant::now() });
    ([(header::SET_COOKIE, cookie)], Redirect::to(to.as_str())).into_response()
}

/// `GET /ui/oidc/callback`.
pub async fn callback(
    State(console): State<std::sync::Arc<Console>>,
    headers: HeaderMap,
    Query(back): Query<Callback>,
) -> Response {
    let Some(oidc) = &console.oidc else { return Redirect::to("/ui/sign-in").into_response() };
    let refused = |status, why: &str| {
        let mut response = sign_in::form(&console, "/ui", Some((status, why)));
        if let Ok(gone) = HeaderValue::from_str(&oidc.state_cookie("", 0)) {
            response.headers_mut().append(header::SET_COOKIE, gone);
        }
        response
    };
    if let Some(error) = &back.error {
        let why = format!(
            "not signed in: the identity provider said `{}`",
            crate::request::cut(error.clone(), 64)
        );
        return refused(StatusCode::FORBIDDEN, &why);
    }
    let (Some(code), Some(state)) = (&back.code, &back.state) else {
        return refused(StatusCode::BAD_REQUEST, "not signed in: no code or no state");
    };
    // The state must be this browser's (its cookie) and a sign-in's still pending: once.
    let bound = super::session::cookie(&headers, oidc.cookie)
        .is_some_and(|own| bool::from(own.as_bytes().ct_eq(state.as_bytes())));
    let pending = if bound { oidc.pending().remove(state) } else { None };
    let Some(pending) = pending.filter(|p| p.started.elapsed() < PENDING_FOR) else {
        return refused(
            StatusCode::FORBIDDEN,
            "not signed in: this sign-in was not started here, or is over",
        );
    };
    if back.iss.as_deref().is_some_and(|iss| iss != oidc.config.issuer) {
        return refused(
            StatusCode::FORBIDDEN,
            "not signed in: the answer is another provider's (iss)",
        );
    }
    let id_token = match oidc.endpoints().await {
        Ok(endpoints) => oidc.exchange(&endpoints.token, code, &pending.verifier).await,
        Err(e) => Err(e),
    };
    let id_token = match id_token {
        Ok(id_token) => id_token,
        Err(e) => {
            tracing::warn!(error = e, "the console's sign-in code was not exchanged");
            return refused(
                StatusCode::BAD_GATEWAY,
                "not signed in: the code was not exchanged at the identity provider; see the server's log",
            );
        }
    };
    let provider = (oidc.config.issuer.as_str(), oidc.config.client_id.as_str());
    let caller = match console.guard.sign_in_person(provider, &id_token, &pending.nonce).await {
        Ok(caller) => caller,
        Err(status) => {
            let why = format!("not signed in: {}", super::said(&status));
            return refused(StatusCode::FORBIDDEN, &why);
        }
    };
    let roles = (caller.has(Role::Auditor), caller.has(Role::Approver));
    let approver_as = caller.sole_actor().map(str::to_owned);
    let id = caller.id.clone();
    let Some((_, session)) =
        console.sessions.start(id.clone(), Credential::Person(caller), roles, approver_as)
    else {
        return refused(
            StatusCode::SERVICE_UNAVAILABLE,
            "no random bytes for a session: see the server's log",
        );
    };
    let next = match roles.0 {
        false => "/ui/approvals".to_owned(),
        true => pending.next,
    };
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
    for cookie in [session, oidc.state_cookie("", 0)] {
        if let Ok(value) = HeaderValue::from_str(&cookie) {
            headers.append(header::SET_COOKIE, value);
        }
    }
    if let Ok(refresh) = HeaderValue::from_str(&format!("0; url={next}")) {
        headers.insert(header::HeaderName::from_static("refresh"), refresh);
    }
    response
}
