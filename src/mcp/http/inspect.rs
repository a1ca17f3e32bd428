//! The server's messages as they come back over HTTP, each inspected as what it is before the
//! client sees it: in a JSON body or an SSE event, the one response the gateway expects on the
//! stream goes back under the client's id; every other response is dropped and recorded; the
//! server's requests and notifications go through as the gateway read them.

use std::sync::{Arc, Mutex, PoisonError};

use axum::body::{Body, Bytes};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use futures_util::StreamExt;
use serde_json::Value;

use super::{MAX_LINE_BYTES, Proxy, head, is_event_stream, jsonrpc, sse};
use crate::mcp::ids::{Answered, Ids};
use crate::mcp::message::{self, Message};
use crate::mcp::refusals::{Peer, Refused};

/// The response a stream may carry: to the request the gateway sent as `ours`, which goes back
/// to the client as `client`. Dropped before that response came (the client left, the server
/// answered with an error or nothing), the request is abandoned: its id is freed for the client
/// and a late answer is taken quietly, so that no path leaves an id held for ever.
#[derive(Debug)]
pub struct Expect {
    pub ours: Value,
    pub client: Value,
    ids: Arc<Mutex<Ids<()>>>,
}

impl Expect {
    pub fn new(ours: Value, client: Value, ids: Arc<Mutex<Ids<()>>>) -> Self {
        Self { ours, client, ids }
    }
}

impl Drop for Expect {
    fn drop(&mut self) {
        self.ids.lock().unwrap_or_else(PoisonError::into_inner).abandon(&self.ours);
    }
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
        if sse::has_data(event) {
            // Data that is not UTF-8: a client's decoder would replace the bad bytes and read
            // the rest, so it is dropped rather than relayed unread.
            let refusals = proxy.gate.refusals();
            refusals.refuse(
                session,
                Peer::Server,
                Refused::Malformed,
                "an event's data is not UTF-8",
            );
            return Inspected::Dropped;
        }
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
    let id = match parsed {
        Message::Response { id } => id,
        Message::Notification { .. } => {
            return proxy.gate.notice(session, &mut value).then_some(Err(value));
        }
        Message::Request { .. } => return Some(Err(value)),
    };
    let theirs = expect.as_ref().is_some_and(|expect| expect.ours == id);
    let answered = match theirs {
        true => proxy.ids().answer(&id),
        // A late answer to a request the client stopped waiting for is taken quietly; an answer
        // to another stream's request is not taken from it.
        false if proxy.ids().is_abandoned(&id) => {
            proxy.ids().answer(&id);
            return None;
        }
        false => Answered::Nothing,
    };
    match (answered, expect.take()) {
        (Answered::Request(..), Some(expect)) => {
            value["id"] = expect.client.clone();
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
    if !response.status().is_success() {
        // An error's body is not relayed: a lenient client would read a message in it.
        return head
            .body(Body::empty())
            .unwrap_or_else(|_| StatusCode::BAD_GATEWAY.into_response());
    }
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
    let body = async move {
        let bytes = read_capped(response).await?;
        if bytes.is_empty() {
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
