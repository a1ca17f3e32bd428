//! The gate for one upstream server: every `tools/call` through Decide and Execute, every
//! listing through the pins, its peers' misbehaviour on the trail. Shared by both transports.
//!
//! - [`call`]: one `tools/call`'s life: compiled into an action request and decided as any
//!   Decide is, then relayed, answered, or held for a verdict; its result reported through
//!   Execute and cut to the decision's limit.
//! - `approval`: the wait for a verdict on a held call, in rounds of `Await`.
//! - `listing`: a `tools/list` answer curated before the client sees it.
//! - `instructions`: the server's instructions, cut and pinned.

mod approval;
pub mod call;
mod instructions;
mod listing;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use serde_json::Value;
use tonic::Status;

use crate::config::McpConfig;
use crate::mcp::held::States;
use crate::mcp::notice::Bounded;
use crate::mcp::refusals::{Peer, Refusals, Refused};
use crate::proto;
use crate::registry::InputSchema;
use crate::sidecar::Sidecar;

/// What happened upstream to a relayed call (or to one held before it).
#[derive(Debug)]
pub enum Upstream {
    /// Its response, the whole JSON-RPC message.
    Response(Value),
    /// No response within the decision's timeout; the call was cancelled upstream.
    TimedOut,
    /// The client cancelled it (`notifications/cancelled`).
    Cancelled,
    /// The server failed: it exited, or its connection broke.
    Failed(String),
}

/// The gate, for one upstream server.
#[derive(Debug, Clone)]
pub struct UpstreamGate {
    /// The sidecar as the callers reach it (with a client's own token over HTTP).
    pub(super) sidecar: Sidecar,
    /// The sidecar as the gateway reaches it, in its own name (the `gateway` role): for what
    /// only the gateway may record, the listed tools' definitions and its refusals.
    pub(super) own: Sidecar,
    pub(super) config: Arc<McpConfig>,
    pub(super) server: Arc<str>,
    /// What the server's last listing said of each tool, by the server's name for it.
    listed: Arc<Mutex<HashMap<String, Listed>>>,
    /// The definition last shown to the client as the one in force, with its hash, by the
    /// server's name.
    shown: Arc<Mutex<HashMap<String, (String, Value)>>>,
    pub(super) refusals: Refusals,
    /// The request states of calls held for 2026-07-28 clients (`held`).
    states: Arc<States>,
    /// The server's instructions last shown as the ones in force, and the changes already
    /// sent to an approver (`instructions`).
    pub(super) instructions: Arc<Mutex<instructions::Shown>>,
}

/// What a listing said of one tool.
#[derive(Debug, Default)]
struct Listed {
    /// Its `inputSchema`, compiled; `None` when it has none or it does not compile.
    schema: Option<InputSchema>,
    /// The hash of its definition (`definition`).
    definition: String,
}

impl UpstreamGate {
    /// The gate for `server`: calls are decided through `sidecar`, the gateway's own records
    /// made through `own`.
    pub fn new(sidecar: Sidecar, own: Sidecar, config: McpConfig, server: &str) -> Self {
        let server: Arc<str> = server.into();
        let refusals = Refusals::new(own.clone(), server.clone(), config.actor.clone());
        Self {
            sidecar,
            own,
            config: Arc::new(config),
            server,
            listed: Arc::default(),
            shown: Arc::default(),
            refusals,
            states: Arc::default(),
            instructions: Arc::default(),
        }
    }

    /// Where the gateway records what it refused from its peers.
    pub fn refusals(&self) -> &Refusals {
        &self.refusals
    }

    /// A notification of the server's, bounded (see `notice`): whether it goes on to the
    /// client. A cut or a drop is recorded.
    pub fn notice(&self, session: &str, notification: &mut Value) -> bool {
        let method = notification.get("method").and_then(Value::as_str).unwrap_or_default();
        let method = cut_str(method, 64);
        match crate::mcp::notice::bound(notification, self.config.max_notification_chars) {
            Bounded::Kept => true,
            Bounded::Cut => {
                self.refusals.refuse(session, Peer::Server, Refused::LongNotification, &method);
                true
            }
            Bounded::Dropped => {
                self.refusals.refuse(session, Peer::Server, Refused::LongNotification, &method);
                false
            }
        }
    }

    /// The same gate, calling the sidecar with this `authorization` header (the client's own,
    /// so that the sidecar checks and records who calls).
    pub fn authorized(&self, header: &str) -> Result<Self, Status> {
        Ok(Self { sidecar: self.sidecar.clone().authorized(header)?, ..self.clone() })
    }

    /// The actor calls are made as, unless the client authenticated.
    pub fn actor(&self) -> &str {
        &self.config.actor
    }

    /// The gateway's name for the server's tool `name`: `mcp__<server>__<name>`.
    fn tool(&self, name: &str) -> String {
        format!("mcp__{}__{name}", self.server)
    }

    fn options(&self) -> proto::RunOptions {
        proto::RunOptions {
            allow_write: self.config.allow_write,
            allow_bash: self.config.allow_bash,
            ..Default::default()
        }
    }
}

/// At most `chars` characters of `text`.
fn cut_str(text: &str, chars: usize) -> String {
    text.chars().take(chars).collect()
}
