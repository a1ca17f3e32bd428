//! One `tools/call` over HTTP, in a task of its own, so that a client that goes away does not
//! cut it short of its record. The decision's deadline and the client's cancellation (its
//! `notifications/cancelled`, or, in the 2026-07-28 revision, its closing the response) cancel
//! it upstream.

use std::sync::Arc;
use std::time::Instant;

use axum::body::{Body, Bytes};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use futures_util::StreamExt;
use serde_json::Value;
use tokio::sync::{mpsc, oneshot};

use super::{
    GRACE, MAX_LINE_BYTES, Proxy, head, is_event_stream, jsonrpc, relay_response, relayed_headers,
    response_in, sse, without_url,
};
use crate::mcp::call::{Admission, Call, Caller, Gate, Upstream};
use crate::mcp::message::{self, key};

/// The first protocol revision in which closing a response cancels its request.
const CLOSING_CANCELS: &str = "2026-07-28";

type Events = mpsc::Sender<Result<Bytes, std::io::Error>>;

/// A `tools/call`: decided, then answered or relayed, by a task of its own.
pub(super) async fn call(
    proxy: Arc<Proxy>,
    (actor, authorization): (String, Option<String>),
    headers: &HeaderMap,
    id: Value,
    params: Value,
) -> Response {
    let gate = match authorization.as_deref().map(|h| proxy.gate.authorized(h)).transpose() {
        Ok(gate) => gate.unwrap_or_else(|| proxy.gate.clone()),
        Err(_) => return StatusCode::UNAUTHORIZED.into_response(),
    };
    let caller = Caller { session: proxy.session(headers), actor };
    // Cancellations find a call by its id within a session the server gave; a call outside
    // one shares the gateway's session with every other client, so it gets a key of its own.
    let within_session = caller.session != proxy.session;
    let call_key = if within_session { key(&id) } else { uuid::Uuid::now_v7().to_string() };
    let open_key = (caller.session.clone(), call_key);
    let (sender, inbox) = mpsc::channel(4);
    {
        let mut open = proxy.open();
        if open.contains_key(&open_key) {
            let error = message::error(
                &id,
                message::INVALID_REQUEST,
                "the id is in use by a tools/call in flight",
            );
            return jsonrpc(StatusCode::BAD_REQUEST, &error);
        }
        open.insert(open_key.clone(), sender);
    }
    let closing_cancels = headers
        .get("mcp-protocol-version")
        .and_then(|v| v.to_str().ok())
        .is_some_and(|version| version >= CLOSING_CANCELS);
    let (reply, replied) = oneshot::channel();
    let upstream_headers = relayed_headers(headers, proxy.auth.is_some());
    let call = Call { caller, id, params, inbox };
    let task = {
        let proxy = proxy.clone();
        let held = proxy.tasks.clone();
        async move {
            run(&proxy, gate, call, upstream_headers, closing_cancels, reply).await;
            proxy.open().remove(&open_key);
            drop(held);
        }
    };
    tokio::spawn(task);
    replied.await.unwrap_or_else(|_| StatusCode::BAD_GATEWAY.into_response())
}

/// How the exchange with the server went.
struct Exchange {
    upstream: Upstream,
    /// The SSE event that carried the response, and the events that came after it.
    event: Option<(Vec<u8>, Vec<u8>)>,
}

/// The call's task.
async fn run(
    proxy: &Proxy,
    gate: Gate,
    mut call: Call,
    headers: HeaderMap,
    closing_cancels: bool,
    reply: oneshot::Sender<Response>,
) {
    let admission = gate.admit(&mut call).await;
    let Call { id, mut inbox, .. } = call;
    let relayed = match admission {
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
    let started = Instant::now();
    let deadline = tokio::time::Instant::now() + relayed.timeout;
    let (events, body) = mpsc::channel(16);
    let mut reply = Some(reply);
    let request = relayed.request(&id).to_string();
    let exchange = tokio::select! {
        exchange = exchange(proxy, &headers, request, &id, &events, body, &mut reply) => exchange,
        () = tokio::time::sleep_until(deadline) => Exchange { upstream: Upstream::TimedOut, event: None },
        message = inbox.recv() => Exchange { upstream: message.unwrap_or(Upstream::Cancelled), event: None },
        () = events.closed(), if closing_cancels => Exchange { upstream: Upstream::Cancelled, event: None },
    };
    let reason = match exchange.upstream {
        Upstream::TimedOut => Some("toolgate: the call's timeout passed"),
        Upstream::Cancelled => Some("cancelled by the client"),
        _ => None,
    };
    if let Some(reason) = reason {
        cancel_upstream(proxy, &headers, &id, reason).await;
    }
    let streaming = reply.is_none() && !events.is_closed();
    let answer = gate.finish(relayed, &id, started, exchange.upstream).await;
    match (reply, answer) {
        (Some(reply), Some(answer)) => {
            let _ = reply.send(jsonrpc(StatusCode::OK, &answer));
        }
        (Some(reply), None) => {
            let _ = reply.send(StatusCode::ACCEPTED.into_response());
        }
        (None, Some(answer)) if streaming => {
            let (event, rest) =
                exchange.event.unwrap_or_else(|| (b"event: message\n".to_vec(), Vec::new()));
            let mut out = sse::with_data(&event, &answer.to_string());
            out.extend_from_slice(&rest);
            let _ = tokio::time::timeout(GRACE, events.send(Ok(Bytes::from(out)))).await;
        }
        // The server's own answer went to the client already (an HTTP error), or no one waits.
        (None, _) => {}
    }
}

/// Sends the call upstream and reads its answer: a JSON body, or an SSE stream whose events
/// are relayed as they come (the stream is the client's from its first byte) up to the one
/// that carries the response. A server that refuses the request at the HTTP level gets its
/// answer passed to the client as it was.
async fn exchange(
    proxy: &Proxy,
    headers: &HeaderMap,
    request: String,
    id: &Value,
    events: &Events,
    body: mpsc::Receiver<Result<Bytes, std::io::Error>>,
    reply: &mut Option<oneshot::Sender<Response>>,
) -> Exchange {
    let failed = |why: String| Exchange { upstream: Upstream::Failed(why), event: None };
    let sent =
        proxy.client.post(proxy.upstream.clone()).headers(headers.clone()).body(request).send();
    let response = match sent.await {
        Ok(response) => response,
        Err(e) => return failed(format!("the MCP server cannot be reached: {}", without_url(&e))),
    };
    proxy.note_session(response.headers());
    let status = response.status();
    if !status.is_success() {
        if let Some(reply) = reply.take() {
            let _ = reply.send(relay_response(response));
        }
        return failed(format!("the MCP server answered HTTP {status}"));
    }
    if !is_event_stream(&response) {
        return match response.bytes().await.map(|b| serde_json::from_slice::<Value>(&b)) {
            Ok(Ok(value)) if value.get("id").is_some_and(|got| key(got) == key(id)) => {
                Exchange { upstream: Upstream::Response(value), event: None }
            }
            Ok(_) => failed("the MCP server's answer is not the call's JSON-RPC response".into()),
            Err(e) => failed(format!("the MCP server's answer broke off: {}", without_url(&e))),
        };
    }
    let stream = Body::from_stream(tokio_stream::wrappers::ReceiverStream::new(body));
    let head =
        head(&response).body(stream).unwrap_or_else(|_| StatusCode::BAD_GATEWAY.into_response());
    if let Some(reply) = reply.take() {
        let _ = reply.send(head);
    }
    let (mut chunks, mut split) = (response.bytes_stream(), sse::Events::default());
    while let Some(chunk) = chunks.next().await {
        let chunk = match chunk {
            Ok(chunk) => chunk,
            Err(e) => {
                return failed(format!("the MCP server's stream broke off: {}", without_url(&e)));
            }
        };
        split.push(&chunk);
        while let Some(event) = split.next_event() {
            if let Some(value) = response_in(&event, id) {
                let mut rest = Vec::new();
                while let Some(after) = split.next_event() {
                    rest.extend_from_slice(&after);
                }
                return Exchange {
                    upstream: Upstream::Response(value),
                    event: Some((event, rest)),
                };
            }
            // A client that left does not stop the call unless leaving cancels (see `run`).
            let _ = events.send(Ok(Bytes::from(event))).await;
        }
        if split.held() > MAX_LINE_BYTES {
            return failed("the MCP server sent an event over 16 MiB".into());
        }
    }
    failed("the MCP server's stream ended without the call's response".into())
}

/// Tells the server to stop the call (the legacy revisions' `notifications/cancelled`, on the
/// call's session); a server of the 2026-07-28 revision has seen its stream closed already.
async fn cancel_upstream(proxy: &Proxy, headers: &HeaderMap, id: &Value, reason: &str) {
    let body = message::cancelled(id, reason).to_string();
    let mut headers = headers.clone();
    headers.remove("mcp-method");
    headers.remove("mcp-name");
    let sent = proxy.client.post(proxy.upstream.clone()).headers(headers).body(body).send();
    if let Ok(Err(e)) = tokio::time::timeout(GRACE, sent).await {
        tracing::warn!(error = %without_url(&e), "the cancellation could not be sent upstream");
    }
}
