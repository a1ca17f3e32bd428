//! The one place where refused calls become events: a malformed request (`invalid_request`) and
//! a caller refused for who it is (`access_denied`). Each records the RPC and the reason, never
//! the payload or a token, and is committed before the caller hears the refusal; a refusal the
//! trail cannot record is answered UNAVAILABLE instead.

use crate::auth::{Refusal, Rpc};
use crate::error::{Error, FieldError};
use crate::store::Writer;
use crate::trail::{Kind, Record};

/// The event of a malformed request.
fn invalid_request(rpc: Rpc, error: &FieldError) -> Record {
    Record {
        error: Some(error.to_string()),
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
            _ => "PERMISSION_DENIED".to_owned(),
        }),
        request: Some(rpc_json(rpc)),
        ..Record::new(Kind::AccessDenied)
    }
}

fn rpc_json(rpc: Rpc) -> String {
    serde_json::json!({ "rpc": rpc.path() }).to_string()
}

/// Records a malformed request and returns the error to answer with: INVALID_ARGUMENT once it
/// is recorded, UNAVAILABLE if it could not be.
pub async fn invalid(writer: &Writer, rpc: Rpc, error: FieldError) -> Error {
    commit(writer, invalid_request(rpc, &error), Error::InvalidArgument(error)).await
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
