//! The server's messages as they come back over HTTP, each inspected as what it is before the
//! client sees it: in a JSON body or an SSE event, the one response the gateway expects on the
//! stream goes back under the client's id; every other response is dropped and recorded; the
//! server's requests and notifications go through as the gateway read them.

use std::sync::Arc;

use axum::body::{Body, Bytes};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use futures_util::StreamExt;
use serde_json::Value;

use super::{MAX_LINE_BYTES, Proxy, head, is_event_stream, jsonrpc, sse};
use crate::mcp::ids::Answered;
use crate::mcp::message::{self, Message};
use crate::mcp::refusals::{Peer, Refused};

/// The response a stream may carry: to the request the gateway sent as `ours`, which goes back
/// to the client as `client`.
#[derive(Debug, Clone)]
pub struct Expect {
    pub ours: Value,
    pub client: Value,
}

/// What one message of the server's comes to.
#[derive(Debug)]
pub enum Inspected {
    /// Relay this (an event as it came when it holds no data, or with its message as read).
    Relay(Vec<u8>),
    /// The expected response, under the client's id.
    Ours(Value),
    /// Dropped, and recorded.
    Dropped,
}

/// Inspects one SSE event of the server's, on a stream that may carry `expect`ed response
/// (taken once it came).
pub fn event(proxy: &Proxy, session: &str, event: &[u8], expect: &mut Option<Expect>) -> Inspected {
    let Some(data) = sse::data(event) else {
        // No data: a comment, or an event that only sets the stream's id. Nothing is dispatched.
        return Inspected::Relay(event.to_vec());
    };
    match message(proxy, session, &data, expect) {
        Some(Ok(ours)) => Inspected::Ours(ours),
        Some(Err(value)) => Inspected::Relay(sse::with_data(event, &value.to_string())),
        None => Inspected::Dropped,
    }
}

/// Inspects one message of the server's: `Ok` the expected response under the client's id,
/// `Err` a message to relay as read, `None` when it is dropped (and recorded).
pub fn message(
    proxy: &Proxy,
    session: &str,
    text: &str,
    expect: &mut Option<Expect>,
) -> Option<Result<Value, Value>> {
    let refuse = |refused, detail: &str| {
        proxy.gate.refusals().refuse(session, Peer::Server, refused, detail);
    };
    let (parsed, mut value) = match Message::parse(text) {
        Ok(parsed) => parsed,
        Err(e) => {
            refuse(Refused::Malformed, &e.to_string());
            return None;
        }
    };
    let Message::Response { id } = parsed else { return Some(Err(value)) };
    let theirs = expect.as_ref().is_some_and(|expect| expect.ours == id);
    let answered = if theirs { proxy.ids().answer(&id) } else { Answered::Nothing };
    match (answered, expect.take()) {
        (Answered::Request(..), Some(Expect { client, .. })) => {
            value["id"] = client;
            Some(Ok(value))
        }
        (_, taken) => {
            *expect = taken;
            refuse(Refused::UnknownResponse, &format!("id {id}"));
            None
        }
    }
}

/// The server's answer to a request the gateway relayed (as `expect.ours`, or a notification
/// or response when `expect` is `None`), every message in it inspected: a JSON body is read
/// whole (up to the cap), an SSE stream relayed event by event as it comes.
pub fn relayed(
    proxy: Arc<Proxy>,
    session: String,
    response: reqwest::Response,
    expect: Option<Expect>,
) -> Response {
    let head = head(&response);
    if !is_event_stream(&response) {
        return json(proxy, session, response, expect, head);
    }
    let state = (response.bytes_stream(), sse::Events::default(), expect, false);
    let stream =
        futures_util::stream::unfold(state, move |(mut chunks, mut split, mut expect, done)| {
            let (proxy, session) = (proxy.clone(), session.clone());
            async move {
                if done {
                    return None;
                }
                loop {
                    let mut out = Vec::new();
                    while let Some(one) = split.next_event() {
                        match event(&proxy, &session, &one, &mut expect) {
                            Inspected::Relay(bytes) => out.extend_from_slice(&bytes),
                            Inspected::Ours(value) => {
                                out.extend_from_slice(&sse::with_data(&one, &value.to_string()))
                            }
                            Inspected::Dropped => {}
                        }
                    }
                    if !out.is_empty() {
                        return Some((
                            Ok::<_, std::io::Error>(Bytes::from(out)),
                            (chunks, split, expect, false),
                        ));
                    }
                    if split.held() > MAX_LINE_BYTES {
                        return None;
                    }
                    match chunks.next().await {
                        Some(Ok(chunk)) => split.push(&chunk),
                        Some(Err(e)) => {
                            let e = std::io::Error::other(super::without_url(&e));
                            return Some((Err(e), (chunks, split, expect, true)));
                        }
                        None => return None,
                    }
                }
            }
        });
    head.body(Body::from_stream(stream)).unwrap_or_else(|_| StatusCode::BAD_GATEWAY.into_response())
}

/// A JSON body: empty, or one message, inspected.
fn json(
    proxy: Arc<Proxy>,
    session: String,
    response: reqwest::Response,
    mut expect: Option<Expect>,
    head: axum::http::response::Builder,
) -> Response {
    let status = response.status();
    let client = expect.as_ref().map_or(Value::Null, |e| e.client.clone());
    let body = async move {
        let bytes = read_capped(response).await?;
        if bytes.is_empty() || !status.is_success() {
            return Some(bytes);
        }
        let text = std::str::from_utf8(&bytes).ok()?;
        match message(&proxy, &session, text, &mut expect)? {
            Ok(value) | Err(value) => Some(Bytes::from(value.to_string())),
        }
    };
    let stream = futures_util::stream::once(body).map(move |bytes| match bytes {
        Some(bytes) => Ok(bytes),
        None => Err(std::io::Error::other("the MCP server's answer was refused")),
    });
    // A body is read before the head is sent only when it must be inspected whole: the
    // client hears a refused answer as an error of its request.
    let _ = client;
    head.body(Body::from_stream(stream)).unwrap_or_else(|_| StatusCode::BAD_GATEWAY.into_response())
}

/// The whole body, unless it is over the cap.
pub async fn read_capped(response: reqwest::Response) -> Option<Bytes> {
    let mut chunks = response.bytes_stream();
    let mut body = Vec::new();
    while let Some(chunk) = chunks.next().await {
        body.extend_from_slice(&chunk.ok()?);
        if body.len() > MAX_LINE_BYTES {
            return None;
        }
    }
    Some(Bytes::from(body))
}

/// The answer for a client whose request's answer was refused.
pub fn refused_answer(client: &Value) -> Response {
    let error =
        message::error(client, message::INTERNAL_ERROR, "toolgate refused the MCP server's answer");
    jsonrpc(StatusCode::BAD_GATEWAY, &error)
}
