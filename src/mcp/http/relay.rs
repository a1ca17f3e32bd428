//! The server's side of a request: a `tools/list`, `initialize` or `server/discover` read up to
//! its response and taken in by the gate before the client sees it; any other message relayed,
//! its answer streamed back as it comes, every message in it inspected; the headers that go up.

use std::sync::Arc;

use axum::body::{Body, Bytes};
use axum::http::{HeaderMap, Method, StatusCode};
use axum::response::{IntoResponse, Response};
use futures_util::StreamExt;
use serde_json::Value;

use super::inspect::{self, Expect};
use std::sync::PoisonError;
use std::time::Duration;

use super::{Client, Proxy, head, is_event_stream, relayed_headers, sse, without_url};
use crate::mcp::frame::MAX_LINE_BYTES;
use crate::mcp::upstream::UpstreamGate;

/// What of an answer the gate takes in before the client sees it.
#[derive(Debug, Clone, Copy)]
pub(super) enum Curated {
    /// A `tools/list`'s tools (`UpstreamGate::listed`).
    Tools,
    /// An `initialize`'s (or `server/discover`'s) instructions (`UpstreamGate::instructed`).
    Instructions,
}

impl Curated {
    async fn take_in(self, gate: &UpstreamGate, session: &str, actor: &str, answer: &mut Value) {
        match self {
            Self::Tools => gate.listed(session, actor, answer).await,
            Self::Instructions => gate.instructed(session, actor, answer).await,
        }
    }
}

/// A `tools/list`, `initialize` or `server/discover`: the server's answer, read up to the
/// response (a JSON body, or the SSE events up to the one that carries it, each inspected),
/// through the gate.
#[allow(clippy::too_many_arguments)]
pub(super) async fn list(
    proxy: &Arc<Proxy>,
    client: &Client,
    session: String,
    headers: &HeaderMap,
    expect: Expect,
    body: Bytes,
    curated: Curated,
) -> Response {
    let request = proxy
        .client
        .post(proxy.upstream.clone())
        .headers(relayed_headers(headers, proxy.auth.is_some()))
        .body(body);
    let ours = expect.ours.clone();
    let client_id = expect.client.clone();
    // The tools hidden are those the client's own actor could never call.
    let gate = match client.authorization.as_deref().map(|h| proxy.gate.authorized(h)) {
        Some(Ok(gate)) => gate,
        _ => proxy.gate.clone(),
    };
    let read = async {
        let response = request.send().await.ok()?;
        proxy.note_session(response.headers(), client);
        let (status, head) = (response.status(), head(&response));
        let mut expect = Some(expect);
        if !status.is_success() || !is_event_stream(&response) {
            if !status.is_success() {
                // An error's body is not relayed: a lenient client would read a message in it.
                return Some(head.body(Body::empty()));
            }
            let bytes = inspect::read_capped(response).await?;
            let text = std::str::from_utf8(&bytes).ok()?;
            let mut value = inspect::message(proxy, &session, text, &mut expect)?.ok()?;
            curated.take_in(&gate, &session, &client.actor, &mut value).await;
            return Some(head.body(Body::from(value.to_string())));
        }
        let (mut chunks, mut events, mut out) =
            (response.bytes_stream(), sse::Events::default(), Vec::new());
        while let Some(chunk) = chunks.next().await {
            events.push(&chunk.ok()?);
            while let Some(event) = events.next_event() {
                match inspect::event(proxy, &session, &event, &mut expect) {
                    inspect::Inspected::Ours(mut value) => {
                        curated.take_in(&gate, &session, &client.actor, &mut value).await;
                        out.extend_from_slice(&sse::with_data(&event, &value.to_string()));
                        return Some(head.body(Body::from(out)));
                    }
                    inspect::Inspected::Relay(bytes) => out.extend_from_slice(&bytes),
                    inspect::Inspected::Dropped => {}
                }
            }
            if out.len() + events.held() > MAX_LINE_BYTES {
                return None;
            }
        }
        None
    };
    match tokio::time::timeout(Duration::from_secs(60), read).await {
        Ok(Some(Ok(response))) => response,
        _ => {
            proxy.ids().forget(&ours);
            inspect::refused_answer(&client_id)
        }
    }
}

/// Any other message, relayed, its answer streamed back as it comes, every message in it
/// inspected (`expect`: the response to the request it carries, if it carries one).
pub(super) async fn forward(
    proxy: Arc<Proxy>,
    client: &Client,
    session: String,
    method: Method,
    headers: &HeaderMap,
    body: Bytes,
    expect: Option<Expect>,
) -> Response {
    let request = proxy
        .client
        .request(method.clone(), proxy.upstream.clone())
        .headers(relayed_headers(headers, proxy.auth.is_some()))
        .body(body);
    match request.send().await {
        Ok(response) => {
            proxy.note_session(response.headers(), client);
            if method == Method::DELETE && response.status().is_success() {
                forget_session(&proxy, headers);
            }
            inspect::relayed(proxy, session, response, expect)
        }
        Err(e) => {
            if let Some(expect) = &expect {
                proxy.ids().forget(&expect.ours);
            }
            tracing::warn!(error = %without_url(&e), "the MCP server cannot be reached");
            (StatusCode::BAD_GATEWAY, "the MCP server cannot be reached\n").into_response()
        }
    }
}

/// Forgets a session the client ended.
fn forget_session(proxy: &Proxy, headers: &HeaderMap) {
    let Some(id) = headers.get("mcp-session-id").and_then(|v| v.to_str().ok()) else { return };
    let mut sessions = proxy.sessions.lock().unwrap_or_else(PoisonError::into_inner);
    if sessions.owners.contains_key(id) {
        sessions.forget(id);
        sessions.order.retain(|s| s != id);
    }
}
