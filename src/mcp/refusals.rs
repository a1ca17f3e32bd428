//! What the gateway refuses from a peer it relays, on the trail: each refusal is logged, and
//! recorded as a `peer_refused` event through the sidecar's `RecordRefusal`, at most once a
//! second for each kind of refusal, the next record counting those folded into it. A peer
//! that floods the gateway with messages it drops spends a bounded number of events.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use crate::proto;
use crate::sidecar::Sidecar;

/// A refusal of each kind is recorded at most this often.
const RECORD_EVERY: Duration = Duration::from_secs(1);
/// The longest detail of a refusal kept, in characters (a peer's words: an id, a name).
const MAX_DETAIL_CHARS: usize = 200;

/// Who sent what was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Peer {
    Server,
    Client,
}

impl Peer {
    fn as_str(self) -> &'static str {
        match self {
            Self::Server => "mcp_server",
            Self::Client => "mcp_client",
        }
    }
}

/// The kinds of refusal, each folded on its own.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Refused {
    /// A response whose id names no request the gateway has in flight.
    UnknownResponse,
    /// A `tools/list` whose names repeat: every entry of such a name is left out.
    RepeatedTool,
    /// A tool whose definition changed since it was pinned: the pinned one is shown, or none.
    ChangedTool,
    /// A message in no shape the gateway knows, or in the wrong place.
    Malformed,
    /// An answer to a `tools/call` that is not a tool result.
    NotAToolResult,
    /// A client without a valid token (401), or whose token lacks the role (403).
    Unauthenticated,
    /// A retried call whose request state the gateway did not issue for it, or whose call ran.
    RequestState,
    /// A notification over `[mcp] max_notification_chars`: cut, or dropped.
    LongNotification,
    /// Instructions over `[mcp] max_instructions_chars`: cut.
    LongInstructions,
}

impl Refused {
    fn what(self) -> &'static str {
        match self {
            Self::UnknownResponse => "a response to no request in flight, dropped",
            Self::RepeatedTool => {
                "a tool list whose names repeat: every tool of such a name left out"
            }
            Self::ChangedTool => {
                "a tool whose definition changed since it was pinned: not shown until an approver accepts it"
            }
            Self::Malformed => "a message the gateway cannot relay as what it is, dropped",
            Self::NotAToolResult => "an answer to a tools/call that is not a tool result, refused",
            Self::Unauthenticated => "a request to the MCP endpoint refused for who made it",
            Self::RequestState => {
                "a retried tools/call whose request state is forged, moved or spent: not run"
            }
            Self::LongNotification => {
                "a notification over [mcp] max_notification_chars: its message cut, or dropped"
            }
            Self::LongInstructions => "instructions over [mcp] max_instructions_chars: cut",
        }
    }
}

/// The gateway's record of refusals, for one server.
#[derive(Debug, Clone)]
pub struct Refusals {
    sidecar: Sidecar,
    server: Arc<str>,
    actor: String,
    /// When each (peer, kind) was last recorded, and how many were folded since.
    recorded: Arc<Mutex<HashMap<(Peer, Refused), Fold>>>,
}

impl Refusals {
    pub fn new(sidecar: Sidecar, server: Arc<str>, actor: String) -> Self {
        Self { sidecar, server, actor, recorded: Arc::default() }
    }

    /// Records a refusal of `peer`'s, with `detail` (the peer's words, cut), in the background
    /// when one of its kind is due, and logs it then; one folded is recorded a second later at
    /// most, with the count of those folded into it.
    pub fn refuse(&self, session: &str, peer: Peer, refused: Refused, detail: &str) {
        let detail: String = detail.chars().take(MAX_DETAIL_CHARS).collect();
        let reason = match detail.is_empty() {
            true => refused.what().to_owned(),
            false => format!("{}: {}", refused.what(), detail.escape_debug()),
        };
        let mut recorded = self.recorded.lock().unwrap_or_else(PoisonError::into_inner);
        let now = Instant::now();
        let fold = recorded.entry((peer, refused)).or_insert(Fold { last: None, folded: 0 });
        match fold.last {
            Some(last) if now.duration_since(last) < RECORD_EVERY => {
                fold.folded += 1;
                if fold.folded == 1 {
                    // The first folded since the record: flushed when the second is up.
                    let this = self.clone();
                    let session = session.to_owned();
                    let wait = RECORD_EVERY - now.duration_since(last);
                    tokio::spawn(async move {
                        tokio::time::sleep(wait).await;
                        this.flush(&session, peer, refused, reason);
                    });
                }
            }
            _ => {
                fold.last = Some(now);
                drop(recorded);
                self.record(session, peer, reason, 1);
            }
        }
    }

    /// Records the refusals of a kind folded since its last record, if any.
    fn flush(&self, session: &str, peer: Peer, refused: Refused, reason: String) {
        let mut recorded = self.recorded.lock().unwrap_or_else(PoisonError::into_inner);
        let Some(fold) = recorded.get_mut(&(peer, refused)) else { return };
        let count = std::mem::take(&mut fold.folded);
        if count == 0 {
            return;
        }
        fold.last = Some(Instant::now());
        drop(recorded);
        self.record(session, peer, format!("{reason} (and refusals like it)"), count);
    }

    fn record(&self, session: &str, peer: Peer, reason: String, count: u64) {
        tracing::warn!(peer = peer.as_str(), server = %self.server, count, "{reason}");
        let request = self.sidecar.request(proto::RecordRefusalRequest {
            session_id: session.to_owned(),
            actor: Some(proto::Actor {
                id: self.actor.clone(),
                kind: "agent".into(),
                ..Default::default()
            }),
            peer: peer.as_str().to_owned(),
            peer_name: self.server.to_string(),
            reason,
            count,
        });
        let mut gate = self.sidecar.gate.clone();
        tokio::spawn(async move {
            if let Err(status) = gate.record_refusal(request).await {
                tracing::error!(message = status.message(), "a refusal could not be recorded");
            }
        });
    }
}

/// When a kind of refusal was last recorded, and how many were folded since.
#[derive(Debug)]
struct Fold {
    last: Option<Instant>,
    folded: u64,
}
