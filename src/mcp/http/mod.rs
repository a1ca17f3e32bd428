//! The gateway over Streamable HTTP (`toolgate mcp --listen ADDR --upstream URL`): a reverse
//! proxy in front of a remote MCP server's endpoint. Requests, their headers and the sessions
//! (`Mcp-Session-Id`) pass through; each request goes up under an id of the gateway's, and
//! every message that comes back, in a JSON body or an SSE event, is inspected as what it is
//! (`inspect`): the one response to the request goes back under the client's id, any other is
//! dropped and recorded. A `tools/call` goes through the gate (`call`), a `tools/list`'s answer
//! through `UpstreamGate::listed`. With auth on, a session the server gave belongs to the token that
//! opened it.
//!
//! - `call`: one `tools/call`, in a task of its own.
//! - `inspect`: the server's messages, each inspected before the client sees it.
//! - `relay`: the server's side of a request: a listing taken in by the gate before the client
//!   sees it, any other message relayed, its answer streamed back.
//! - `sse`: server-sent events split as they stream in.

mod call;
mod inspect;
mod relay;
mod resource;
pub(crate) mod sse;

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, HeaderName, Method, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::any;
use serde_json::Value;
use tokio::sync::mpsc;

use super::frame::MAX_LINE_BYTES;
use super::ids::Ids;
use super::message::{self, BadMessage, Message, key};
use super::refusals::{Peer, Refused};
use super::upstream::{Upstream, UpstreamGate};
use crate::auth::{Auth, Presented, Rpc};
use inspect::Expect;
use relay::{Curated, forward, list};
use resource::Challenge;
pub use resource::Resource;

/// MCP's error for a header that does not mirror the body (2026-07-28).
const HEADER_MISMATCH: i64 = -32020;

/// Headers that belong to one hop, never relayed.
const HOP: [&str; 6] =
    ["host", "connection", "content-length", "transfer-encoding", "keep-alive", "upgrade"];

/// How long calls and streams get to end once the gateway is told to stop.
const GRACE: Duration = Duration::from_secs(5);

/// The most sessions remembered as the server's own; the oldest are forgotten first.
const MAX_SESSIONS: usize = 100_000;
/// The most of them one caller may hold: one tenant cannot evict the others' sessions.
const MAX_SESSIONS_PER_CALLER: usize = 1_000;

/// The proxy's state.
#[derive(Debug)]
pub struct Proxy {
    gate: UpstreamGate,
    upstream: reqwest::Url,
    client: reqwest::Client,
    /// The bearer tokens clients must present, when auth is on.
    auth: Option<Auth>,
    /// The OAuth resource the gateway is.
    resource: Resource,
    /// The session of calls that come without a session the server gave.
    session: String,
    /// The session ids the server gave (`Mcp-Session-Id` on its answers), each with the caller
    /// that opened it (none when auth is off): only these name a session on the trail, so that a
    /// client cannot start its counts afresh by naming one, and only their opener may use them.
    sessions: Mutex<Sessions>,
    /// The clients' requests in flight, under the gateway's ids.
    ids: Arc<Mutex<Ids<()>>>,
    /// Open calls by (session, request id): where a client's cancellation goes.
    open: Mutex<HashMap<(String, String), mpsc::Sender<Upstream>>>,
    /// Held by each call's task, so that a stop waits for them.
    tasks: Arc<()>,
}

/// The server's sessions, by id: who opened each; oldest first; how many each caller holds.
#[derive(Debug, Default)]
struct Sessions {
    owners: HashMap<String, Option<String>>,
    order: VecDeque<String>,
    held: HashMap<Option<String>, usize>,
}

impl Sessions {
    fn forget(&mut self, id: &str) {
        if let Some(owner) = self.owners.remove(id)
            && let Some(n) = self.held.get_mut(&owner)
        {
            *n -= 1;
            if *n == 0 {
                self.held.remove(&owner);
            }
        }
    }
}

/// Who calls: the actor, the `authorization` header to call the sidecar with, and the
/// caller's id (its token's) when auth is on.
#[derive(Debug, Clone)]
pub(super) struct Client {
    actor: String,
    authorization: Option<String>,
    id: Option<String>,
}

impl Proxy {
    pub fn new(
        gate: UpstreamGate,
        upstream: reqwest::Url,
        (auth, resource): (Option<Auth>, Resource),
        session: String,
    ) -> Self {
        Self {
            gate,
            upstream,
            client: reqwest::Client::new(),
            auth,
            resource,
            session,
            sessions: Mutex::default(),
            ids: Arc::default(),
            open: Mutex::new(HashMap::new()),
            tasks: Arc::new(()),
        }
    }

    fn open(&self) -> MutexGuard<'_, HashMap<(String, String), mpsc::Sender<Upstream>>> {
        self.open.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn ids(&self) -> MutexGuard<'_, Ids<()>> {
        self.ids.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The trail's session of a request: the server's session it names, or the gateway's. A
    /// session another caller opened, or (with auth on) one the gateway does not know, is
    /// refused: it is not the caller's to use.
    #[allow(clippy::result_large_err)]
    fn session(&self, headers: &HeaderMap, client: &Client) -> Result<String, Response> {
        let Some(named) = headers.get("mcp-session-id") else { return Ok(self.session.clone()) };
        let named = named.to_str().unwrap_or_default();
        let sessions = self.sessions.lock().unwrap_or_else(PoisonError::into_inner);
        match sessions.owners.get(named) {
            Some(owner) if *owner == client.id => Ok(format!("mcp-{named}")),
            None if self.auth.is_none() => Ok(self.session.clone()),
            // Not found, as MCP answers an unknown session: whether it exists is not said.
            _ => Err((StatusCode::NOT_FOUND, "no such session\n").into_response()),
        }
    }

    /// Notes the session an answer of the server names, as `client`'s when it is new.
    fn note_session(&self, headers: &reqwest::header::HeaderMap, client: &Client) {
        let Some(id) = headers.get("mcp-session-id").and_then(|v| v.to_str().ok()) else {
            return;
        };
        let mut sessions = self.sessions.lock().unwrap_or_else(PoisonError::into_inner);
        if sessions.owners.contains_key(id) {
            return;
        }
        // With auth off every caller is one: the cap per caller is the cap in all.
        let limit = if client.id.is_some() { MAX_SESSIONS_PER_CALLER } else { MAX_SESSIONS };
        if sessions.held.get(&client.id).is_some_and(|&n| n >= limit) {
            tracing::warn!(
                caller = client.id,
                "a caller holds {limit} sessions: a new one is not remembered"
            );
            return;
        }
        while sessions.owners.len() >= MAX_SESSIONS {
            let Some(oldest) = sessions.order.pop_front() else { break };
            sessions.forget(&oldest);
        }
        sessions.owners.insert(id.to_owned(), client.id.clone());
        sessions.order.push_back(id.to_owned());
        *sessions.held.entry(client.id.clone()).or_default() += 1;
    }

    /// The key of a client's request id within `session`: a request outside a session the
    /// server gave shares the gateway's session with every other client, so it gets a key of
    /// its own (and cannot be cancelled by id).
    fn client_key(&self, session: &str, id: &Value) -> String {
        match session == self.session {
            true => uuid::Uuid::now_v7().to_string(),
            false => format!("{session}\n{}", key(id)),
        }
    }
}

/// Serves the MCP endpoint, `/mcp`, until `shutdown` resolves, within the connection caps and
/// the header-read timeout of `limits`; then the calls and streams still open get a few
/// seconds.
pub async fn serve(
    listener: tokio::net::TcpListener,
    proxy: Proxy,
    limits: &crate::config::Limits,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let proxy = Arc::new(proxy);
    let mut app = axum::Router::new().route("/mcp", any(endpoint));
    for path in proxy.resource.metadata_paths() {
        app = app.route(&path, axum::routing::get(metadata));
    }
    let app = app.with_state(proxy.clone());
    let (stop, stopping) = tokio::sync::watch::channel(false);
    let graceful = async move {
        let mut stopping = stopping;
        let _ = stopping.wait_for(|stop| *stop).await;
    };
    let listener = crate::listener::Capped::new(listener, limits);
    let header_timeout = Duration::from_millis(limits.handshake_timeout_ms);
    let served = crate::listener::serve(listener, app, header_timeout, graceful);
    tokio::select! {
        served = served => served?,
        () = async {
            shutdown.await;
            let _ = stop.send(true);
            // A relayed GET stream never ends by itself.
            tokio::time::sleep(GRACE).await;
        } => {}
    }
    let deadline = tokio::time::Instant::now() + GRACE;
    while Arc::strong_count(&proxy.tasks) > 1 && tokio::time::Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    Ok(())
}

/// The gateway's Protected Resource Metadata.
async fn metadata(State(proxy): State<Arc<Proxy>>) -> Response {
    proxy.resource.metadata().into_response()
}

async fn endpoint(
    State(proxy): State<Arc<Proxy>>,
    method: Method,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let (client, session) = match admit(&proxy, &headers).await {
        Ok(admitted) => admitted,
        Err(refused) => return refused,
    };
    match method {
        // The server's stream, and the end of a session: no body; no response is expected.
        Method::GET | Method::DELETE => {
            return forward(proxy, &client, session, method, &headers, Bytes::new(), None).await;
        }
        Method::POST => {}
        _ => return StatusCode::METHOD_NOT_ALLOWED.into_response(),
    }
    let (message, value) = match read(&headers, &body) {
        Ok(read) => read,
        Err(refused) => return refused,
    };
    match message {
        Message::Request { id, .. } if message::is_task_request(&value) => {
            let error = message::error(&id, message::METHOD_NOT_FOUND, message::NO_TASKS);
            jsonrpc(StatusCode::OK, &error)
        }
        Message::Request { id, method, params } if method == "tools/call" => {
            call::call(proxy, client, session, &headers, id, params).await
        }
        Message::Request { id, method, .. } => {
            request(proxy, &client, session, &headers, (id, &method), value).await
        }
        Message::Notification { method, params } if method == "notifications/cancelled" => {
            cancelled(proxy, &client, session, &headers, params.get("requestId"), value).await
        }
        Message::Notification { .. } | Message::Response { .. } => {
            let body = Bytes::from(value.to_string());
            forward(proxy, &client, session, Method::POST, &headers, body, None).await
        }
    }
}

/// A request let in: from no other site's page, by a client that authenticated (when auth
/// is on), on a session it may use. Its client and session, or the refusal.
async fn admit(proxy: &Proxy, headers: &HeaderMap) -> Result<(Client, String), Response> {
    check_origin(headers)?;
    // Without auth only a loopback name may be asked for, from no other origin: a page a
    // browser loaded from elsewhere (DNS rebinding, another local site) is no MCP client.
    if proxy.auth.is_none()
        && (!crate::listener::host::loopback_host(headers)
            || crate::listener::host::foreign_origin(headers))
    {
        let said = "without auth the MCP endpoint answers only a loopback host name, from its own origin\n";
        return Err((StatusCode::FORBIDDEN, said).into_response());
    }
    let client = authenticate(proxy, headers).await?;
    let session = proxy.session(headers, &client)?;
    Ok((client, session))
}

/// A POST's one JSON-RPC message: JSON, within the size, parsed, its headers mirroring it.
#[allow(clippy::result_large_err)]
fn read(headers: &HeaderMap, body: &Bytes) -> Result<(Message, Value), Response> {
    let json = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.split(';').next().is_some_and(|t| t.trim() == "application/json"));
    if !json {
        let said = "a message is application/json\n";
        return Err((StatusCode::UNSUPPORTED_MEDIA_TYPE, said).into_response());
    }
    if body.len() > MAX_LINE_BYTES {
        let error = message::error(&Value::Null, message::INVALID_REQUEST, "message too long");
        return Err(jsonrpc(StatusCode::PAYLOAD_TOO_LARGE, &error));
    }
    let parsed = std::str::from_utf8(body).map_err(|_| BadMessage::Shape).and_then(Message::parse);
    let (message, value) = parsed.map_err(|bad| {
        let error = message::error(&Value::Null, bad.code(), &bad.to_string());
        jsonrpc(StatusCode::BAD_REQUEST, &error)
    })?;
    if let Some(refused) = mismatched_headers(headers, &message) {
        return Err(refused);
    }
    Ok((message, value))
}

/// A request other than `tools/call`, under an id of the gateway's: a listing or an
/// `initialize` through the gate, anything else relayed.
async fn request(
    proxy: Arc<Proxy>,
    client: &Client,
    session: String,
    headers: &HeaderMap,
    (id, method): (Value, &str),
    mut value: Value,
) -> Response {
    let client_key = proxy.client_key(&session, &id);
    let ours = match proxy.ids().issue(client_key, &id, ()) {
        Ok(ours) => ours,
        Err(e) => {
            let error = message::error(&id, message::INVALID_REQUEST, &e.to_string());
            return jsonrpc(StatusCode::BAD_REQUEST, &error);
        }
    };
    value["id"] = ours.clone();
    let expect = Expect::new(ours, id, proxy.ids.clone());
    let body = Bytes::from(value.to_string());
    let curated = match method {
        "tools/list" => Curated::Tools,
        "initialize" | "server/discover" => Curated::Instructions,
        _ => {
            return forward(proxy, client, session, Method::POST, headers, body, Some(expect))
                .await;
        }
    };
    list(&proxy, client, session, headers, expect, body, curated).await
}

/// A client's cancellation of `id`: a call in flight hears it; a request relayed under an id
/// of the gateway's is cancelled upstream under that id; anything else has nothing to cancel.
async fn cancelled(
    proxy: Arc<Proxy>,
    client: &Client,
    session: String,
    headers: &HeaderMap,
    id: Option<&Value>,
    mut value: Value,
) -> Response {
    let Some(id) = id else { return StatusCode::ACCEPTED.into_response() };
    let call = proxy.open().get(&(session.clone(), key(id))).cloned();
    if let Some(call) = call {
        let _ = call.try_send(Upstream::Cancelled);
        return StatusCode::ACCEPTED.into_response();
    }
    let client_key = format!("{session}\n{}", key(id));
    let ours = {
        let mut ids = proxy.ids();
        let ours = ids.ours(&client_key);
        if let Some(ours) = &ours {
            ids.abandon(ours);
        }
        ours
    };
    // Nothing in flight under that id in this session: nothing to cancel.
    let Some(ours) = ours else { return StatusCode::ACCEPTED.into_response() };
    value["params"]["requestId"] = ours;
    let body = Bytes::from(value.to_string());
    forward(proxy, client, session, Method::POST, headers, body, None).await
}

/// Refuses a request from a web page of another origin (DNS rebinding: MCP requires the
/// check): only a loopback origin, or none (a client that is not a browser), gets through.
#[allow(clippy::result_large_err)]
fn check_origin(headers: &HeaderMap) -> Result<(), Response> {
    let Some(origin) = headers.get(header::ORIGIN) else { return Ok(()) };
    let host = origin
        .to_str()
        .ok()
        .and_then(|o| reqwest::Url::parse(o).ok())
        .and_then(|url| url.host_str().map(ToOwned::to_owned));
    match host.as_deref() {
        Some("localhost" | "127.0.0.1" | "[::1]") => Ok(()),
        _ => Err((StatusCode::FORBIDDEN, "this origin may not call the gateway\n").into_response()),
    }
}

/// The 2026-07-28 revision's headers that mirror the body (`Mcp-Method`, `Mcp-Name`) must
/// say what it says: a policy decides on the body, and an intermediary that routes on the
/// headers must not see another call.
fn mismatched_headers(headers: &HeaderMap, message: &Message) -> Option<Response> {
    let (id, method, params) = match message {
        Message::Request { id, method, params } => (id.clone(), method.as_str(), params),
        Message::Notification { method, params } => (Value::Null, method.as_str(), params),
        Message::Response { .. } => return None,
    };
    let name = params.get("name").or_else(|| params.get("uri")).and_then(Value::as_str);
    let differs = |header: &str, body: Option<&str>| {
        headers.get(header).is_some_and(|v| Some(v.as_bytes()) != body.map(str::as_bytes))
    };
    if differs("mcp-method", Some(method)) || differs("mcp-name", name) {
        let error = message::error(&id, HEADER_MISMATCH, "a header does not mirror the body");
        return Some(jsonrpc(StatusCode::BAD_REQUEST, &error));
    }
    None
}

/// Who calls: the configured actor, or, with auth on, the client its bearer token names. A
/// request without a valid token is refused with 401, one whose token lacks the agent role
/// with 403, before anything is relayed, each with the challenge that points to the
/// gateway's resource metadata; either refusal is recorded (folded, as the sidecar folds its
/// own).
#[allow(clippy::result_large_err)]
async fn authenticate(proxy: &Proxy, headers: &HeaderMap) -> Result<Client, Response> {
    let anonymous =
        || Client { actor: proxy.gate.actor().to_owned(), authorization: None, id: None };
    let Some(auth) = &proxy.auth else { return Ok(anonymous()) };
    let header = headers.get(header::AUTHORIZATION).and_then(|v| v.to_str().ok());
    match auth.authorize(Presented::header(header), Rpc::Decide).await {
        Ok(Some(caller)) => Ok(Client {
            actor: caller.sole_actor().unwrap_or(proxy.gate.actor()).to_owned(),
            authorization: header.map(ToOwned::to_owned),
            id: Some(caller.id),
        }),
        Ok(None) => Ok(anonymous()),
        Err(refusal) => {
            let detail = format!("{} ({})", refusal.why, refusal.caller);
            let (status, challenge) = match (refusal.error, header) {
                (crate::error::Error::Unauthenticated(_), None) => {
                    (StatusCode::UNAUTHORIZED, Challenge::Missing)
                }
                (crate::error::Error::Unauthenticated(_), Some(_)) => {
                    (StatusCode::UNAUTHORIZED, Challenge::InvalidToken)
                }
                _ => (StatusCode::FORBIDDEN, Challenge::InsufficientScope),
            };
            proxy.gate.refusals().refuse("", Peer::Client, Refused::Unauthenticated, &detail);
            let mut response = (status, refusal.why).into_response();
            let challenge = proxy.resource.challenge(challenge);
            response.headers_mut().insert(header::WWW_AUTHENTICATE, challenge);
            Err(response)
        }
    }
}

/// The start of an answer for the client: the server's status and headers but the hop's own.
fn head(response: &reqwest::Response) -> axum::http::response::Builder {
    let mut head = Response::builder().status(response.status());
    for (name, value) in response.headers() {
        if !HOP.contains(&name.as_str()) {
            head = head.header(name, value);
        }
    }
    head
}

fn is_event_stream(response: &reqwest::Response) -> bool {
    response
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("text/event-stream"))
}

/// The client's headers for the server: all but the hop's own, and but the bearer token when
/// it was toolgate's to check.
fn relayed_headers(headers: &HeaderMap, authenticated: bool) -> HeaderMap {
    let mut relayed = HeaderMap::new();
    for (name, value) in headers {
        let hop = HOP.contains(&name.as_str());
        if !(hop || (authenticated && name == header::AUTHORIZATION)) {
            relayed.append(HeaderName::from(name), value.clone());
        }
    }
    relayed
}

fn jsonrpc(status: StatusCode, message: &Value) -> Response {
    (status, [(header::CONTENT_TYPE, "application/json")], message.to_string()).into_response()
}

/// A request error without its URL (which may carry credentials).
fn without_url(e: &reqwest::Error) -> String {
    let mut e = e.to_string();
    if let Some(at) = e.find(" for url") {
        e.truncate(at);
    }
    e
}

#[cfg(test)]
mod tests {
    use axum::http::HeaderValue;
    use serde_json::json;

    use super::*;

    #[test]
    fn hop_headers_and_a_checked_token_stay_behind() {
        let mut headers = HeaderMap::new();
        headers.insert("mcp-session-id", HeaderValue::from_static("s"));
        headers.insert(header::AUTHORIZATION, HeaderValue::from_static("Bearer t"));
        headers.insert(header::HOST, HeaderValue::from_static("h"));
        assert_eq!(relayed_headers(&headers, true).len(), 1);
        assert_eq!(relayed_headers(&headers, false).len(), 2);
    }

    #[test]
    fn only_loopback_origins_and_mirroring_headers_get_through() {
        let with = |name: &'static str, value: &'static str| {
            let mut headers = HeaderMap::new();
            headers.insert(name, HeaderValue::from_static(value));
            headers
        };
        assert!(check_origin(&HeaderMap::new()).is_ok());
        assert!(check_origin(&with("origin", "http://localhost:3000")).is_ok());
        assert!(check_origin(&with("origin", "https://evil.example")).is_err());
        let call = Message::Request {
            id: json!(1),
            method: "tools/call".into(),
            params: json!({"name": "echo"}),
        };
        assert!(mismatched_headers(&with("mcp-name", "echo"), &call).is_none());
        assert!(mismatched_headers(&with("mcp-name", "other"), &call).is_some());
        assert!(mismatched_headers(&with("mcp-method", "ping"), &call).is_some());
    }
}
