//! The one place where refused calls become events: a malformed request (`invalid_request`) and
//! a caller refused for who it is (`access_denied`). Each records the RPC and the reason, never
//! the payload or a token, and is committed before the caller hears the refusal; a refusal the
//! trail cannot record is answered UNAVAILABLE instead.

use crate::auth::{Refusal, Rpc};
use crate::error::{Error, FieldError};
use crate::request::PeerRefusal;
use crate::store::Writer;
use crate::trail::{Kind, Record};

/// The longest error a refused request records, in bytes: the message may echo what the
/// caller sent.
pub const MAX_ERROR_BYTES: usize = 1024;

/// The event of a malformed request.
fn invalid_request(rpc: Rpc, error: &FieldError) -> Record {
    Record {
        error: Some(crate::text::cut(error.to_string(), MAX_ERROR_BYTES)),
        request: Some(rpc_json(rpc)),
        ..Record::new(Kind::InvalidRequest)
    }
}

/// The event of a call refused for who made it: the caller's id, the RPC, why, and the status
/// it was answered with.
pub(super) fn access_denied(caller: &str, rpc: Rpc, why: String, error: &Error) -> Record {
    Record {
        actor_id: Some(caller.to_owned()),
        reason: Some(why),
        error: Some(match error {
            Error::Unauthenticated(_) => "UNAUTHENTICATED".to_owned(),
            // A call refused for who made it is refused as not permitted, whatever stood in
            // the way.
            Error::PermissionDenied(_)
            | Error::InvalidArgument(_)
            | Error::Unavailable(_)
            | Error::Overloaded
            | Error::Unconfirmed
            | Error::FleetUnavailable(_)
            | Error::NotFound(_)
            | Error::ArchiveUnavailable(_)
            | Error::DataLoss(_)
            | Error::FailedPrecondition(_) => "PERMISSION_DENIED".to_owned(),
        }),
        request: Some(rpc_json(rpc)),
        ..Record::new(Kind::AccessDenied)
    }
}

fn rpc_json(rpc: Rpc) -> String {
    serde_json::json!({ "rpc": rpc.path() }).to_string()
}

/// What a malformed request was about, as far as it can be told, so that an auditor asking for
/// a session or a decision finds its refusal beside them. Only names within the limit for names
/// are kept; the rest of a malformed request never reaches the trail.
#[derive(Debug, Default)]
pub struct About {
    pub session_id: String,
    pub actor_id: String,
    pub tool: String,
    /// A decision the request names: its session, actor and tool come from the trail.
    pub decision_id: String,
}

impl About {
    /// The names of a Decide request.
    pub fn call(req: &crate::proto::DecideRequest) -> Self {
        let actor_id = req.actor.as_ref().map(|a| a.id.clone()).unwrap_or_default();
        Self {
            session_id: req.session_id.clone(),
            actor_id,
            tool: req.tool.clone(),
            ..Self::default()
        }
    }

    /// A request that names a decision.
    pub fn decision(decision_id: &str) -> Self {
        Self { decision_id: decision_id.to_owned(), ..Self::default() }
    }
}

/// Records a malformed request and returns the error to answer with: INVALID_ARGUMENT once it
/// is recorded, UNAVAILABLE if it could not be.
pub async fn invalid(writer: &Writer, rpc: Rpc, error: FieldError) -> Error {
    invalid_about(writer, rpc, error, About::default(), 0).await
}

/// The same, for a request about a call or a decision (`max_name` bytes the longest name kept).
pub async fn invalid_about(
    writer: &Writer,
    rpc: Rpc,
    error: FieldError,
    about: About,
    max_name: usize,
) -> Error {
    let mut record = invalid_request(rpc, &error);
    let kept = |name: String| (!name.is_empty() && name.len() <= max_name).then_some(name);
    record.session_id = kept(about.session_id);
    record.actor_id = kept(about.actor_id);
    record.tool = kept(about.tool);
    let decision_id = kept(about.decision_id);
    let appended = writer
        .append_with(move |lookup| {
            if let Some(id) = decision_id {
                if let Some(decision) = lookup.decision(&id)? {
                    let d = decision.record;
                    (record.session_id, record.actor_id, record.tool) =
                        (d.session_id, d.actor_id, d.tool);
                }
                record.decision_id = Some(id);
            }
            Ok(vec![record])
        })
        .await;
    match appended {
        Ok(_) => Error::InvalidArgument(error),
        Err(e) => e.into(),
    }
}

/// Records what an adapter refused from a peer it relays; the event's seq.
pub async fn peer(writer: &Writer, refusal: PeerRefusal) -> Result<i64, Error> {
    let PeerRefusal { actor, session_id, peer, peer_name, reason, count } = refusal;
    let request = serde_json::json!({ "peer": peer, "name": peer_name, "count": count });
    let record = Record {
        session_id: (!session_id.is_empty()).then_some(session_id),
        actor_id: Some(actor.id),
        actor_kind: Some(actor.kind.as_str().to_owned()),
        reason: Some(reason),
        request: Some(request.to_string()),
        ..Record::new(Kind::PeerRefused)
    };
    let events = writer.append(vec![record]).await?;
    Ok(events.last().map_or(0, |event| event.seq))
}

/// Records a refused caller when the refusal is due (one a second per caller, RPC and reason),
/// and returns the error to answer with.
pub async fn deny(writer: &Writer, refusal: Refusal) -> Error {
    let Refusal { caller, rpc, why, error, record } = refusal;
    let Some(folded) = record else {
        return error;
    };
    let why = match folded {
        0 => why,
        n => format!("{why} ({n} more refusals like it folded into this event)"),
    };
    commit(writer, access_denied(&caller, rpc, why, &error), error).await
}

async fn commit(writer: &Writer, record: Record, error: Error) -> Error {
    match writer.append(vec![record]).await {
        Ok(_) => error,
        Err(e) => e.into(),
    }
}
