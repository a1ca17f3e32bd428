//! One `tools/call` over HTTP, in a task of its own, so that a client that goes away does not
//! cut it short of its record. It goes up under an id of the gateway's; the decision's deadline
//! and the client's cancellation (its `notifications/cancelled`, or, in the 2026-07-28
//! revision, its closing the response) cancel it upstream.

use std::sync::Arc;
use std::time::Instant;

use axum::body::{Body, Bytes};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use futures_util::StreamExt;
use serde_json::Value;
use tokio::sync::{mpsc, oneshot};

use super::inspect::{self, Expect, Inspected};
use super::{
    Client, GRACE, MAX_LINE_BYTES, Proxy, head, is_event_stream, jsonrpc, relayed_headers, sse,
    without_url,
};
use crate::mcp::Caller;
use crate::mcp::held;
use crate::mcp::message::{self, key};
use crate::mcp::upstream::call::{Admission, Call};
use crate::mcp::upstream::{Upstream, UpstreamGate};

/// The first protocol revision in which closing a response cancels its request.
const CLOSING_CANCELS: &str = "2026-07-28";

type Events = mpsc::Sender<Result<Bytes, std::io::Error>>;

/// A `tools/call`: decided, then answered or relayed, by a task of its own.
pub(super) async fn call(
    proxy: Arc<Proxy>,
    client: Client,
    session: String,
    headers: &HeaderMap,
    id: Value,
    params: Value,
) -> Response {
    let gate = match client.authorization.as_deref().map(|h| proxy.gate.authorized(h)).transpose() {
        Ok(gate) => gate.unwrap_or_else(|| proxy.gate.clone()),
        Err(_) => return StatusCode::UNAUTHORIZED.into_response(),
    };
    let caller = Caller { session, actor: client.actor };
    let client_key = proxy.client_key(&caller.session, &id);
    // The call goes up only once decided (and, if held, approved).
    let ours = match proxy.ids().reserve(client_key, &id, ()) {
        Ok(ours) => ours,
        Err(e) => {
            let error = message::error(&id, message::INVALID_REQUEST, &e.to_string());
            return jsonrpc(StatusCode::BAD_REQUEST, &error);
        }
    };
    // Cancellations find a call by its id within a session the server gave.
    let open_key = (caller.session.clone(), key(&id));
    let (sender, inbox) = mpsc::channel(4);
    let within_session = caller.session != proxy.session;
    if within_session {
        proxy.open().insert(open_key.clone(), sender.clone());
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
            run(&proxy, gate, call, ours, upstream_headers, closing_cancels, reply).await;
            // Only its own: a later call may have taken the id since this one timed out.
            let mut open = proxy.open();
            if open.get(&open_key).is_some_and(|s| s.same_channel(&sender)) {
                open.remove(&open_key);
            }
            drop(open);
            drop(held);
        }
    };
    tokio::spawn(task);
    replied.await.unwrap_or_else(|_| StatusCode::BAD_GATEWAY.into_response())
}

/// How the exchange with the server went.
struct Exchange {
    upstream: Upstream,
    /// The SSE event that carried the response, and the events that came after it (inspected).
    event: Option<(Vec<u8>, Vec<u8>)>,
}

/// The call's task; upstream the call is request `ours`.
async fn run(
    proxy: &Proxy,
    gate: UpstreamGate,
    mut call: Call,
    ours: Value,
    headers: HeaderMap,
    closing_cancels: bool,
    mut reply: oneshot::Sender<Response>,
) {
    // A client of the revision where closing the stream cancels may leave while the call is
    // decided or held: it is then not run (its answer would have no one to go to). Only a
    // client whose requests say the revision in `_meta` is held the revision's way, in retries
    // the approval outlives; any other is held in this request, whose end withdraws it.
    let leaving_cancels = closing_cancels && held::modern(&call.params);
    let admission = tokio::select! {
        biased;
        admission = gate.admit(&mut call) => admission,
        () = reply.closed(), if leaving_cancels => Admission::Dropped,
    };
    let Call { caller, id, mut inbox, .. } = call;
    let relayed = match admission {
        Admission::Relay(relayed) => relayed,
        Admission::Answer(result) => {
            proxy.ids().forget(&ours);
            let _ = reply.send(jsonrpc(StatusCode::OK, &message::result(&id, result)));
            return;
        }
        Admission::Dropped => {
            proxy.ids().forget(&ours);
            let _ = reply.send(StatusCode::ACCEPTED.into_response());
            return;
        }
    };
    let started = Instant::now();
    proxy.ids().sent(&ours);
    let deadline = tokio::time::Instant::now() + relayed.timeout;
    let (events, body) = mpsc::channel(16);
    let mut reply = Some(reply);
    let request = relayed.request(&ours).to_string();
    let expect = Expect::new(ours.clone(), id.clone(), proxy.ids.clone());
    let exchange = tokio::select! {
        exchange = exchange(proxy, &caller.session, &headers, request, expect, &events, body, &mut reply) => exchange,
        () = tokio::time::sleep_until(deadline) => Exchange { upstream: Upstream::TimedOut, event: None },
        message = inbox.recv() => Exchange { upstream: message.unwrap_or(Upstream::Cancelled), event: None },
        () = events.closed(), if closing_cancels => Exchange { upstream: Upstream::Cancelled, event: None },
    };
    let reason = match exchange.upstream {
        Upstream::TimedOut => Some("toolgate: the call's timeout passed"),
        Upstream::Cancelled => Some("cancelled by the client"),
        Upstream::Failed(_) => {
            proxy.ids().forget(&ours);
            None
        }
        Upstream::Response(_) => None,
    };
    if let Some(reason) = reason {
        proxy.ids().abandon(&ours);
        cancel_upstream(proxy, &headers, &ours, reason).await;
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
/// are inspected and relayed as they come (the stream is the client's from its first byte) up
/// to the one that carries the response. A server that refuses the request at the HTTP level
/// gets its answer passed to the client as it was.
#[allow(clippy::too_many_arguments)]
async fn exchange(
    proxy: &Proxy,
    session: &str,
    headers: &HeaderMap,
    request: String,
    expect: Expect,
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
    let status = response.status();
    if !status.is_success() {
        if let Some(reply) = reply.take() {
            let _ = reply.send(
                head(&response)
                    .body(Body::empty())
                    .unwrap_or_else(|_| StatusCode::BAD_GATEWAY.into_response()),
            );
        }
        return failed(format!("the MCP server answered HTTP {status}"));
    }
    let mut expect = Some(expect);
    if !is_event_stream(&response) {
        let Some(bytes) = inspect::read_capped(response).await else {
            return failed("the MCP server's answer broke off or is over 16 MiB".into());
        };
        let text = std::str::from_utf8(&bytes).unwrap_or_default();
        return match inspect::message(proxy, session, text, &mut expect) {
            Some(Ok(value)) => Exchange { upstream: Upstream::Response(value), event: None },
            _ => failed("the MCP server's answer is not the call's JSON-RPC response".into()),
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
            match inspect::event(proxy, session, &event, &mut expect) {
                Inspected::Ours(value) => {
                    let mut rest = Vec::new();
                    while let Some(after) = split.next_event() {
                        if let Inspected::Relay(bytes) =
                            inspect::event(proxy, session, &after, &mut None)
                        {
                            rest.extend_from_slice(&bytes);
                        }
                    }
                    return Exchange {
                        upstream: Upstream::Response(value),
                        event: Some((event, rest)),
                    };
                }
                // A client that left does not stop the call unless leaving cancels (see `run`).
                Inspected::Relay(bytes) => {
                    let _ = events.send(Ok(Bytes::from(bytes))).await;
                }
                Inspected::Dropped => {}
            }
        }
        if split.held() > MAX_LINE_BYTES {
            return failed("the MCP server sent an event over 16 MiB".into());
        }
    }
    failed("the MCP server's stream ended without the call's response".into())
}

/// Tells the server to stop the call (the legacy revisions' `notifications/cancelled`, on the
/// call's session); a server of the 2026-07-28 revision has seen its stream closed already.
async fn cancel_upstream(proxy: &Proxy, headers: &HeaderMap, ours: &Value, reason: &str) {
    let body = message::cancelled(ours, reason).to_string();
    let mut headers = headers.clone();
    headers.remove("mcp-method");
    headers.remove("mcp-name");
    let sent = proxy.client.post(proxy.upstream.clone()).headers(headers).body(body).send();
    if let Ok(Err(e)) = tokio::time::timeout(GRACE, sent).await {
        tracing::warn!(error = %without_url(&e), "the cancellation could not be sent upstream");
    }
}
