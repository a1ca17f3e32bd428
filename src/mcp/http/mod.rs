//! The gateway over Streamable HTTP (`toolgate mcp --listen ADDR --upstream URL`): a reverse
//! proxy in front of a remote MCP server's endpoint. Requests, their headers, the sessions
//! (`Mcp-Session-Id`) and the server's SSE streams pass through, except a `tools/call`, which
//! goes through the gate (`call`), and the event (or JSON body) that carries its response,
//! which comes back through it. A message is relayed as the gateway read it.
//!
//! - `call`: one `tools/call`, in a task of its own.
//! - `sse`: server-sent events split as they stream in.

mod call;
mod sse;

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::http::{HeaderMap, HeaderName, HeaderValue, Method, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::any;
use futures_util::StreamExt;
use serde_json::Value;
use tokio::sync::mpsc;

use super::call::{Gate, Upstream};
use super::frame::MAX_LINE_BYTES;
use super::message::{self, BadMessage, Message, key};
use crate::auth::{Auth, Rpc};

/// MCP's error for a header that does not mirror the body (2026-07-28).
const HEADER_MISMATCH: i64 = -32020;

/// Headers that belong to one hop, never relayed.
const HOP: [&str; 6] =
    ["host", "connection", "content-length", "transfer-encoding", "keep-alive", "upgrade"];

/// How long calls and streams get to end once the gateway is told to stop.
const GRACE: Duration = Duration::from_secs(5);

/// The most sessions remembered as the server's own.
const MAX_SESSIONS: usize = 100_000;

/// The proxy's state.
#[derive(Debug)]
pub struct Proxy {
    gate: Gate,
    upstream: reqwest::Url,
    client: reqwest::Client,
    /// The bearer tokens clients must present, when auth is on.
    auth: Option<Auth>,
    /// The session of calls that come without a session the server gave.
    session: String,
    /// The session ids the server gave (`Mcp-Session-Id` on its answers): only these name a
    /// session on the trail, so that a client cannot start its counts afresh by naming one.
    sessions: Mutex<HashSet<String>>,
    /// Open calls by (session, request id): where a client's cancellation goes.
    open: Mutex<HashMap<(String, String), mpsc::Sender<Upstream>>>,
    /// Held by each call's task, so that a stop waits for them.
    tasks: Arc<()>,
}

impl Proxy {
    pub fn new(gate: Gate, upstream: reqwest::Url, auth: Option<Auth>, session: String) -> Self {
        Self {
            gate,
            upstream,
            client: reqwest::Client::new(),
            auth,
            session,
            sessions: Mutex::new(HashSet::new()),
            open: Mutex::new(HashMap::new()),
            tasks: Arc::new(()),
        }
    }

    fn open(&self) -> MutexGuard<'_, HashMap<(String, String), mpsc::Sender<Upstream>>> {
        self.open.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The trail's session of a request: the server's session it names, or the gateway's.
    fn session(&self, headers: &HeaderMap) -> String {
        let named = headers.get("mcp-session-id").and_then(|v| v.to_str().ok());
        let sessions = self.sessions.lock().unwrap_or_else(PoisonError::into_inner);
        match named {
            Some(id) if sessions.contains(id) => format!("mcp-{id}"),
            _ => self.session.clone(),
        }
    }

    /// Notes the session an answer of the server names.
    fn note_session(&self, headers: &reqwest::header::HeaderMap) {
        let Some(id) = headers.get("mcp-session-id").and_then(|v| v.to_str().ok()) else {
            return;
        };
        let mut sessions = self.sessions.lock().unwrap_or_else(PoisonError::into_inner);
        if sessions.len() >= MAX_SESSIONS {
            sessions.clear();
        }
        sessions.insert(id.to_owned());
    }
}

/// Serves the MCP endpoint, `/mcp`, until `shutdown` resolves; then the calls and streams
/// still open get a few seconds.
pub async fn serve(
    listener: tokio::net::TcpListener,
    proxy: Proxy,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let proxy = Arc::new(proxy);
    let app = axum::Router::new().route("/mcp", any(endpoint)).with_state(proxy.clone());
    let (stop, stopping) = tokio::sync::watch::channel(false);
    let graceful = async move {
        let mut stopping = stopping;
        let _ = stopping.wait_for(|stop| *stop).await;
    };
    let served = axum::serve(listener, app).with_graceful_shutdown(graceful);
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

async fn endpoint(
    State(proxy): State<Arc<Proxy>>,
    method: Method,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    if let Err(refused) = check_origin(&headers) {
        return refused;
    }
    let caller = match authenticate(&proxy, &headers) {
        Ok(caller) => caller,
        Err(refused) => return refused,
    };
    match method {
        // The server's stream, and the end of a session: no body.
        Method::GET | Method::DELETE => {
            return forward(&proxy, method, &headers, Bytes::new()).await;
        }
        Method::POST => {}
        _ => return StatusCode::METHOD_NOT_ALLOWED.into_response(),
    }
    let json = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.split(';').next().is_some_and(|t| t.trim() == "application/json"));
    if !json {
        return (StatusCode::UNSUPPORTED_MEDIA_TYPE, "a message is application/json\n")
            .into_response();
    }
    if body.len() > MAX_LINE_BYTES {
        let error = message::error(&Value::Null, message::INVALID_REQUEST, "message too long");
        return jsonrpc(StatusCode::PAYLOAD_TOO_LARGE, &error);
    }
    let parsed = std::str::from_utf8(&body).map_err(|_| BadMessage::Shape).and_then(Message::parse);
    let (message, value) = match parsed {
        Ok(parsed) => parsed,
        Err(bad) => {
            let code = bad.code();
            return jsonrpc(
                StatusCode::BAD_REQUEST,
                &message::error(&Value::Null, code, &bad.to_string()),
            );
        }
    };
    if let Some(refused) = mismatched_headers(&headers, &message) {
        return refused;
    }
    let relayed = Bytes::from(value.to_string());
    match message {
        Message::Request { id, method, params } if method == "tools/call" => {
            call::call(proxy, caller, &headers, id, params).await
        }
        Message::Notification { method, params } if method == "notifications/cancelled" => {
            let session = proxy.session(&headers);
            let open = params
                .get("requestId")
                .and_then(|id| proxy.open().get(&(session, key(id))).cloned());
            match open {
                Some(call) => {
                    let _ = call.try_send(Upstream::Cancelled);
                    StatusCode::ACCEPTED.into_response()
                }
                None => forward(&proxy, Method::POST, &headers, relayed).await,
            }
        }
        Message::Request { id, method, .. } if method == "tools/list" => {
            list(&proxy, &caller.0, &headers, &id, relayed).await
        }
        _ => forward(&proxy, Method::POST, &headers, relayed).await,
    }
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

/// Who calls: the configured actor, or, with auth on, the client its bearer token names (a
/// token without the agent role, or none, is refused with 401 before anything is relayed).
#[allow(clippy::result_large_err)]
fn authenticate(proxy: &Proxy, headers: &HeaderMap) -> Result<(String, Option<String>), Response> {
    let Some(auth) = &proxy.auth else { return Ok((proxy.gate.actor().to_owned(), None)) };
    let header = headers.get(header::AUTHORIZATION).and_then(|v| v.to_str().ok());
    let mut request = tonic::Request::new(());
    if let Some(value) = header.and_then(|h| h.parse().ok()) {
        request.metadata_mut().insert("authorization", value);
    }
    match auth.authorize(&request, Rpc::Decide) {
        Ok(Some(caller)) => {
            let actor = caller.sole_actor().unwrap_or(proxy.gate.actor()).to_owned();
            Ok((actor, header.map(ToOwned::to_owned)))
        }
        Ok(None) => Ok((proxy.gate.actor().to_owned(), None)),
        Err(refusal) => {
            let mut response = (StatusCode::UNAUTHORIZED, refusal.why).into_response();
            response
                .headers_mut()
                .insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
            Err(response)
        }
    }
}

/// A `tools/list`: the server's answer, read up to the response (a JSON body, or the SSE events
/// up to the one that carries it), through the gate (`Gate::listed`).
async fn list(
    proxy: &Proxy,
    actor: &str,
    headers: &HeaderMap,
    id: &Value,
    body: Bytes,
) -> Response {
    let request = proxy
        .client
        .post(proxy.upstream.clone())
        .headers(relayed_headers(headers, proxy.auth.is_some()))
        .body(body);
    let read = async {
        let response = request.send().await?;
        proxy.note_session(response.headers());
        let (status, head) = (response.status(), head(&response));
        if !status.is_success() || !is_event_stream(&response) {
            let bytes = response.bytes().await?;
            let hidden = match serde_json::from_slice::<Value>(&bytes) {
                Ok(mut value) if status.is_success() => {
                    proxy.gate.listed(actor, &mut value).await;
                    Bytes::from(value.to_string())
                }
                _ => bytes,
            };
            return Ok::<_, reqwest::Error>(Some(head.body(Body::from(hidden))));
        }
        let (mut chunks, mut events, mut out) =
            (response.bytes_stream(), sse::Events::default(), Vec::new());
        while let Some(chunk) = chunks.next().await {
            events.push(&chunk?);
            while let Some(event) = events.next_event() {
                match response_in(&event, id) {
                    Some(mut value) => {
                        proxy.gate.listed(actor, &mut value).await;
                        out.extend_from_slice(&sse::with_data(&event, &value.to_string()));
                        return Ok(Some(head.body(Body::from(out))));
                    }
                    None => out.extend_from_slice(&event),
                }
            }
            if out.len() + events.held() > MAX_LINE_BYTES {
                return Ok(None);
            }
        }
        Ok(Some(head.body(Body::from(out))))
    };
    match tokio::time::timeout(Duration::from_secs(60), read).await {
        Ok(Ok(Some(Ok(response)))) => response,
        _ => (StatusCode::BAD_GATEWAY, "the MCP server's tool list could not be read\n")
            .into_response(),
    }
}

/// The event's data, if it is the JSON-RPC response to `id`.
fn response_in(event: &[u8], id: &Value) -> Option<Value> {
    let (message, value) = Message::parse(&sse::data(event)?).ok()?;
    match message {
        Message::Response { id: got } if key(&got) == key(id) => Some(value),
        _ => None,
    }
}

/// Any other request, relayed, its answer streamed back as it comes.
async fn forward(proxy: &Proxy, method: Method, headers: &HeaderMap, body: Bytes) -> Response {
    let request = proxy
        .client
        .request(method, proxy.upstream.clone())
        .headers(relayed_headers(headers, proxy.auth.is_some()))
        .body(body);
    match request.send().await {
        Ok(response) => {
            proxy.note_session(response.headers());
            relay_response(response)
        }
        Err(e) => {
            tracing::warn!(error = %without_url(&e), "the MCP server cannot be reached");
            (StatusCode::BAD_GATEWAY, "the MCP server cannot be reached\n").into_response()
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

fn relay_response(response: reqwest::Response) -> Response {
    head(&response)
        .body(Body::from_stream(response.bytes_stream()))
        .unwrap_or_else(|_| StatusCode::BAD_GATEWAY.into_response())
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
    use serde_json::json;

    use super::*;

    #[test]
    fn the_event_carrying_the_response_is_found_by_its_id() {
        let event =
            b"id: 7\nevent: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{}}\n\n";
        assert_eq!(
            response_in(event, &json!(3)),
            Some(json!({"jsonrpc": "2.0", "id": 3, "result": {}}))
        );
        assert_eq!(response_in(event, &json!("3")), None);
    }

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
