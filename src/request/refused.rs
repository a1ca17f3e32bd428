//! A `RecordRefusal` request: what an adapter refused from a peer it relays, validated so that a
//! peer's words reach the trail only cut to a known length.

use super::decide::{Actor, actor};
use super::{required, within};
use crate::config::Limits;
use crate::error::FieldError;
use crate::proto;
use crate::text::cut;

/// The peers an adapter relays.
const PEERS: [&str; 2] = ["mcp_server", "mcp_client"];
/// The longest reason kept, in bytes (cut at a character boundary).
pub const MAX_REASON_BYTES: usize = 1024;

/// A validated `RecordRefusal` request.
#[derive(Debug)]
pub struct PeerRefusal {
    pub actor: Actor,
    pub session_id: String,
    pub peer: &'static str,
    pub peer_name: String,
    pub reason: String,
    pub count: u64,
}

impl PeerRefusal {
    /// Validates a request: every rejection names its field.
    pub fn from_proto(
        req: proto::RecordRefusalRequest,
        limits: &Limits,
    ) -> Result<Self, FieldError> {
        let name = limits.max_name_bytes;
        let actor = actor(req.actor, name)?;
        within("session_id", &req.session_id, name)?;
        within("peer_name", &req.peer_name, name)?;
        let peer = PEERS.into_iter().find(|p| *p == req.peer).ok_or_else(|| {
            FieldError::new("peer", format!("must be one of {}", PEERS.join(", ")))
        })?;
        required("reason", &req.reason, usize::MAX)?;
        Ok(Self {
            actor,
            session_id: req.session_id,
            peer,
            peer_name: req.peer_name,
            reason: cut(req.reason, MAX_REASON_BYTES),
            count: req.count.max(1),
        })
    }
}
