//! The gateway over Streamable HTTP (`toolgate mcp --listen ADDR --upstream URL`): a reverse
//! proxy in front of a remote MCP server's endpoint. Every request, its headers, its session
//! (`Mcp-Session-Id`) and the server's SSE streams pass through unchanged, except a
//! `tools/call`, which goes through the gate, and the event (or JSON body) that carries its
//! response, which comes back through it.
//!
//! A call runs in a task of its own, so that a client that goes away does not cut it short of
//! its record: closing the response (the 2026-07-28 revision's cancellation) cancels it
//! upstream and is recorded as a cancellation.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::http::{HeaderMap, HeaderName, HeaderValue, Method, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::any;
use futures_util::StreamExt;
use serde_json::Value;
use tokio::sync::{mpsc, oneshot};

use super::call::{Admission, Call, Caller, Gate, Relayed, Upstream};
use super::frame::MAX_LINE_BYTES;
use super::message::{self, BadMessage, Message, key};
use crate::auth::{Auth, Rpc};

/// MCP's error for a header that does not mirror the body (2026-07-28).
const HEADER_MISMATCH: i64 = -32020;

/// Headers that belong to one hop, never relayed.
const HOP: [&str; 6] =
    ["host", "connection", "content-length", "transfer-encoding", "keep-alive", "upgrade"];

/// The proxy's state.
#[derive(Debug)]
pub struct Proxy {
    gate: Gate,
    upstream: reqwest::Url,
    client: reqwest::Client,
    /// The bearer tokens clients must present, when auth is on.
    auth: Option<Auth>,
    /// The session of calls that come without an `Mcp-Session-Id`.
    session: String,
    /// Open calls by (session, request id): where a client's cancellation goes.
    open: Mutex<HashMap<(String, String), mpsc::Sender<Upstream>>>,
}

impl Proxy {
    pub fn new(gate: Gate, upstream: reqwest::Url, auth: Option<Auth>, session: String) -> Self {
        Self {
            gate,
            upstream,
            client: reqwest::Client::new(),
            auth,
            session,
            open: Mutex::new(HashMap::new()),
        }
    }

    fn open(&self) -> std::sync::MutexGuard<'_, HashMap<(String, String), mpsc::Sender<Upstream>>> {
        self.open.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

/// Serves the MCP endpoint, `/mcp`, until `shutdown` resolves.
pub async fn serve(
    listener: tokio::net::TcpListener,
    proxy: Proxy,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let app = axum::Router::new().route("/mcp", any(endpoint)).with_state(Arc::new(proxy));
    axum::serve(listener, app).with_graceful_shutdown(shutdown).await
}

async fn endpoint(
    State(proxy): State<Arc<Proxy>>,
    method: Method,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let caller = match authenticate(&proxy, &headers) {
        Ok(caller) => caller,
        Err(refused) => return refused,
    };
    if method != Method::POST {
        return forward(&proxy, method, &headers, body).await;
    }
    if body.len() > MAX_LINE_BYTES {
        return jsonrpc(
            StatusCode::PAYLOAD_TOO_LARGE,
            &message::error(&Value::Null, message::INVALID_REQUEST, "message too long"),
        );
    }
    let text = String::from_utf8_lossy(&body);
    match Message::parse(&text) {
        Ok((Message::Request { id, method, params }, _)) if method == "tools/call" => {
            call(proxy, caller, &headers, id, params).await
        }
        Ok((Message::Notification { method, params }, _))
            if method == "notifications/cancelled" =>
        {
            let session = session(&proxy, &headers);
            let open = params
                .get("requestId")
                .and_then(|id| proxy.open().get(&(session, key(id))).cloned());
            match open {
                Some(call) => {
                    let _ = call.try_send(Upstream::Cancelled);
                    StatusCode::ACCEPTED.into_response()
                }
                None => forward(&proxy, Method::POST, &headers, body).await,
            }
        }
        Ok((Message::Request { id, method, .. }, _))
            if method == "tools/list" && proxy.gate.hides() =>
        {
            list(&proxy, &caller.0, &headers, &id, body).await
        }
        Ok(_) => forward(&proxy, Method::POST, &headers, body).await,
        Err(BadMessage::Json(e)) => jsonrpc(
            StatusCode::BAD_REQUEST,
            &message::error(&Value::Null, message::PARSE_ERROR, &format!("not JSON: {e}")),
        ),
        Err(bad) => jsonrpc(
            StatusCode::BAD_REQUEST,
            &message::error(&Value::Null, message::INVALID_REQUEST, &bad.to_string()),
        ),
    }
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

/// The trail's session of a request: its MCP session, or the gateway's own.
fn session(proxy: &Proxy, headers: &HeaderMap) -> String {
    headers
        .get("mcp-session-id")
        .and_then(|v| v.to_str().ok())
        .map_or_else(|| proxy.session.clone(), |id| format!("mcp-{id}"))
}

/// A `tools/call`: decided, then answered or relayed, in a task of its own.
async fn call(
    proxy: Arc<Proxy>,
    (actor, authorization): (String, Option<String>),
    headers: &HeaderMap,
    id: Value,
    params: Value,
) -> Response {
    let name = params.get("name").and_then(Value::as_str).unwrap_or_default();
    if let Some(header) = headers.get("mcp-name")
        && header.as_bytes() != name.as_bytes()
    {
        let error =
            message::error(&id, HEADER_MISMATCH, "the Mcp-Name header does not match params.name");
        return jsonrpc(StatusCode::BAD_REQUEST, &error);
    }
    let gate = match authorization.as_deref().map(|h| proxy.gate.authorized(h)).transpose() {
        Ok(gate) => gate.unwrap_or_else(|| proxy.gate.clone()),
        Err(_) => return StatusCode::UNAUTHORIZED.into_response(),
    };
    let caller = Caller { session: session(&proxy, headers), actor };
    let open_key = (caller.session.clone(), key(&id));
    let (sender, inbox) = mpsc::channel(4);
    proxy.open().insert(open_key.clone(), sender);
    let (reply, replied) = oneshot::channel();
    let upstream_headers = relayed_headers(headers, proxy.auth.is_some());
    let call = Call { caller, id, params, inbox };
    tokio::spawn({
        let proxy = proxy.clone();
        async move {
            run_call(&proxy, gate, call, upstream_headers, reply).await;
            proxy.open().remove(&open_key);
        }
    });
    replied.await.unwrap_or_else(|_| StatusCode::BAD_GATEWAY.into_response())
}

/// One call's task.
async fn run_call(
    proxy: &Proxy,
    gate: Gate,
    mut call: Call,
    headers: HeaderMap,
    reply: oneshot::Sender<Response>,
) {
    let relayed = gate.admit(&mut call).await;
    let id = call.id;
    let relayed = match relayed {
        Admission::Relay(relayed) => relayed,
        Admission::Answer(result) => {
            let _ = reply.send(jsonrpc(StatusCode::OK, &message::result(&id, result)));
            return;
        }
        Admission::Dropped => {
            let _ = reply.send(StatusCode::ACCEPTED.into_response());
            return;
        }
    };
    let body = relayed.request(&id).to_string();
    let started = Instant::now();
    let deadline = tokio::time::Instant::now() + relayed.timeout;
    let sent = proxy.client.post(proxy.upstream.clone()).headers(headers.clone()).body(body).send();
    let response = tokio::select! {
        response = sent => response,
        () = tokio::time::sleep_until(deadline) => {
            cancel_upstream(proxy, &headers, &id, "toolgate: the call's timeout passed").await;
            finish_json(&gate, relayed, &id, started, Upstream::TimedOut, reply).await;
            return;
        }
    };
    let response = match response {
        Ok(response) => response,
        Err(e) => {
            let why = format!("the MCP server cannot be reached: {}", without_url(&e));
            finish_json(&gate, relayed, &id, started, Upstream::Failed(why), reply).await;
            return;
        }
    };
    let status = response.status();
    let event_stream = response
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("text/event-stream"));
    if !status.is_success() {
        // The server refused the request itself (a lost session, say): the client sees its
        // answer as it was, and the trail an error.
        let why = format!("the MCP server answered HTTP {status}");
        let passed = relay_response(response);
        let _ = gate.finish(relayed, &id, started, Upstream::Failed(why)).await;
        let _ = reply.send(passed);
        return;
    }
    if event_stream {
        stream_call(proxy, gate, relayed, id, started, deadline, headers, response, reply).await;
        return;
    }
    let body = tokio::select! {
        body = response.bytes() => body,
        () = tokio::time::sleep_until(deadline) => {
            cancel_upstream(proxy, &headers, &id, "toolgate: the call's timeout passed").await;
            finish_json(&gate, relayed, &id, started, Upstream::TimedOut, reply).await;
            return;
        }
    };
    let upstream = match body.map(|b| serde_json::from_slice::<Value>(&b)) {
        Ok(Ok(value)) if value.get("id") == Some(&id) => Upstream::Response(value),
        Ok(_) => {
            Upstream::Failed("the MCP server's answer is not the call's JSON-RPC response".into())
        }
        Err(e) => {
            Upstream::Failed(format!("the MCP server's answer broke off: {}", without_url(&e)))
        }
    };
    finish_json(&gate, relayed, &id, started, upstream, reply).await;
}

/// Reports the call and answers the client with one JSON body.
async fn finish_json(
    gate: &Gate,
    relayed: Relayed,
    id: &Value,
    started: Instant,
    upstream: Upstream,
    reply: oneshot::Sender<Response>,
) {
    let answer = gate.finish(relayed, id, started, upstream).await;
    let response = match answer {
        Some(message) => jsonrpc(StatusCode::OK, &message),
        None => StatusCode::ACCEPTED.into_response(),
    };
    let _ = reply.send(response);
}

/// A call whose server answers with an SSE stream: the events are relayed as they come, the
/// one carrying the call's response through the gate; the deadline and the client's leaving
/// cancel it.
#[allow(clippy::too_many_arguments)]
async fn stream_call(
    proxy: &Proxy,
    gate: Gate,
    relayed: Relayed,
    id: Value,
    started: Instant,
    deadline: tokio::time::Instant,
    headers: HeaderMap,
    response: reqwest::Response,
    reply: oneshot::Sender<Response>,
) {
    let (events, body) = mpsc::channel::<Result<Bytes, std::io::Error>>(16);
    let mut head = Response::builder().status(response.status());
    for (name, value) in response.headers() {
        if !HOP.contains(&name.as_str()) {
            head = head.header(name, value);
        }
    }
    let stream = Body::from_stream(tokio_stream::wrappers::ReceiverStream::new(body));
    let _ =
        reply.send(head.body(stream).unwrap_or_else(|_| StatusCode::BAD_GATEWAY.into_response()));
    let mut chunks = response.bytes_stream();
    let mut buffer = Vec::new();
    let upstream = loop {
        let chunk = tokio::select! {
            chunk = chunks.next() => chunk,
            () = tokio::time::sleep_until(deadline) => break Upstream::TimedOut,
            () = events.closed() => break Upstream::Cancelled,
        };
        let chunk = match chunk {
            Some(Ok(chunk)) => chunk,
            Some(Err(e)) => {
                break Upstream::Failed(format!(
                    "the MCP server's stream broke off: {}",
                    without_url(&e)
                ));
            }
            None => {
                break Upstream::Failed(
                    "the MCP server's stream ended without the call's response".into(),
                );
            }
        };
        buffer.extend_from_slice(&chunk);
        let mut found = None;
        while let Some((event, rest)) = split_event(&buffer) {
            let event = event.to_vec();
            buffer = rest.to_vec();
            match response_in(&event, &id) {
                Some(value) if found.is_none() => found = Some((event, value)),
                _ => {
                    let _ = events.send(Ok(Bytes::from(event))).await;
                }
            }
        }
        if let Some((event, value)) = found {
            let answer = gate.finish(relayed, &id, started, Upstream::Response(value)).await;
            if let Some(answer) = answer {
                let _ = events.send(Ok(Bytes::from(with_data(&event, &answer.to_string())))).await;
            }
            return;
        }
        if buffer.len() > MAX_LINE_BYTES {
            break Upstream::Failed("the MCP server sent an event over 16 MiB".into());
        }
    };
    if matches!(upstream, Upstream::TimedOut | Upstream::Cancelled) {
        let reason = match upstream {
            Upstream::TimedOut => "toolgate: the call's timeout passed",
            _ => "cancelled by the client",
        };
        cancel_upstream(proxy, &headers, &id, reason).await;
    }
    if let Some(answer) = gate.finish(relayed, &id, started, upstream).await {
        let _ = events.send(Ok(Bytes::from(format!("event: message\ndata: {answer}\n\n")))).await;
    }
}

/// The first whole SSE event in `buffer` (with its blank line), and what follows it.
fn split_event(buffer: &[u8]) -> Option<(&[u8], &[u8])> {
    let end = buffer
        .windows(2)
        .position(|w| w == b"\n\n")
        .map(|at| at + 2)
        .or_else(|| buffer.windows(4).position(|w| w == b"\r\n\r\n").map(|at| at + 4))?;
    Some(buffer.split_at(end))
}

/// The event's data, if it is the JSON-RPC response to `id`.
fn response_in(event: &[u8], id: &Value) -> Option<Value> {
    let text = std::str::from_utf8(event).ok()?;
    let data: Vec<&str> = text
        .lines()
        .filter_map(|line| line.strip_prefix("data:"))
        .map(|d| d.strip_prefix(' ').unwrap_or(d))
        .collect();
    let value: Value = serde_json::from_str(&data.join("\n")).ok()?;
    match Message::parse(&value.to_string()) {
        Ok((Message::Response { id: got }, _)) if &got == id => Some(value),
        _ => None,
    }
}

/// `event` with its data replaced by `data` (its other fields, its `id:` above all, kept).
fn with_data(event: &[u8], data: &str) -> String {
    let text = String::from_utf8_lossy(event);
    let mut out = String::new();
    for line in text.lines().filter(|l| !l.is_empty() && !l.starts_with("data:")) {
        out.push_str(line);
        out.push('\n');
    }
    out.push_str("data: ");
    out.push_str(data);
    out.push_str("\n\n");
    out
}

/// Tells the server to stop the call (the legacy revisions' `notifications/cancelled`, on the
/// call's session); a server of the 2026-07-28 revision has already seen its stream closed.
async fn cancel_upstream(proxy: &Proxy, headers: &HeaderMap, id: &Value, reason: &str) {
    let body = message::cancelled(id, reason).to_string();
    let mut headers = headers.clone();
    headers.remove("mcp-method");
    headers.remove("mcp-name");
    let sent = proxy.client.post(proxy.upstream.clone()).headers(headers).body(body).send();
    if let Ok(Err(e)) = tokio::time::timeout(std::time::Duration::from_secs(5), sent).await {
        tracing::warn!(error = %without_url(&e), "the cancellation could not be sent upstream");
    }
}

/// A `tools/list` while hiding is on (`[mcp] hide_never_allowed`): the server's answer, read
/// up to the response (a JSON body, or the SSE events up to the one that carries it), with the
/// tools no call could make allowed left out.
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
        let (status, mut head) = (response.status(), Response::builder().status(response.status()));
        for (name, value) in response.headers() {
            if !HOP.contains(&name.as_str()) {
                head = head.header(name, value);
            }
        }
        let event_stream = response
            .headers()
            .get(header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.starts_with("text/event-stream"));
        if !status.is_success() || !event_stream {
            let bytes = response.bytes().await?;
            let hidden = match serde_json::from_slice::<Value>(&bytes) {
                Ok(mut value) if status.is_success() => {
                    proxy.gate.hide(actor, &mut value).await;
                    Bytes::from(value.to_string())
                }
                _ => bytes,
            };
            return Ok::<_, reqwest::Error>(head.body(Body::from(hidden)));
        }
        let (mut chunks, mut buffer, mut out) = (response.bytes_stream(), Vec::new(), Vec::new());
        while let Some(chunk) = chunks.next().await {
            buffer.extend_from_slice(&chunk?);
            while let Some((event, rest)) = split_event(&buffer) {
                let (event, rest) = (event.to_vec(), rest.to_vec());
                buffer = rest;
                match response_in(&event, id) {
                    Some(mut value) => {
                        proxy.gate.hide(actor, &mut value).await;
                        out.extend_from_slice(with_data(&event, &value.to_string()).as_bytes());
                        return Ok(head.body(Body::from(out)));
                    }
                    None => out.extend_from_slice(&event),
                }
            }
        }
        Ok(head.body(Body::from(out)))
    };
    match tokio::time::timeout(std::time::Duration::from_secs(60), read).await {
        Ok(Ok(Ok(response))) => response,
        _ => (StatusCode::BAD_GATEWAY, "the MCP server's tool list could not be read\n")
            .into_response(),
    }
}

/// Any other request, relayed as it came, its answer streamed back as it comes.
async fn forward(proxy: &Proxy, method: Method, headers: &HeaderMap, body: Bytes) -> Response {
    let request = proxy
        .client
        .request(method, proxy.upstream.clone())
        .headers(relayed_headers(headers, proxy.auth.is_some()))
        .body(body);
    match request.send().await {
        Ok(response) => relay_response(response),
        Err(e) => {
            tracing::warn!(error = %without_url(&e), "the MCP server cannot be reached");
            (StatusCode::BAD_GATEWAY, "the MCP server cannot be reached\n").into_response()
        }
    }
}

fn relay_response(response: reqwest::Response) -> Response {
    let mut head = Response::builder().status(response.status());
    for (name, value) in response.headers() {
        if !HOP.contains(&name.as_str()) {
            head = head.header(name, value);
        }
    }
    head.body(Body::from_stream(response.bytes_stream()))
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
    fn an_sse_event_carrying_the_response_is_found_and_rewritten_with_its_id_kept() {
        let buffer = b"id: 7\nevent: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{}}\n\nid: 8\ndata: x";
        let (event, rest) = split_event(buffer).unwrap();
        assert_eq!(rest, b"id: 8\ndata: x");
        assert_eq!(
            response_in(event, &json!(3)),
            Some(json!({"jsonrpc": "2.0", "id": 3, "result": {}}))
        );
        assert_eq!(response_in(event, &json!("3")), None);
        assert_eq!(with_data(event, "{}"), "id: 7\nevent: message\ndata: {}\n\n");
        assert!(split_event(rest).is_none());
    }

    #[test]
    fn hop_headers_and_a_checked_token_stay_behind() {
        let mut headers = HeaderMap::new();
        headers.insert("mcp-session-id", HeaderValue::from_static("s"));
        headers.insert(header::AUTHORIZATION, HeaderValue::from_static("Bearer t"));
        headers.insert(header::HOST, HeaderValue::from_static("h"));
        let relayed = relayed_headers(&headers, true);
        assert_eq!(relayed.len(), 1);
        assert_eq!(relayed_headers(&headers, false).len(), 2);
    }
}
