//! The error a service call can end in, and the one place that decides its gRPC status.

use tonic::Status;

use crate::request::FieldError;
use crate::store::{StoreError, Writer};
use crate::trail::{Kind, Record};

/// Why a call was not answered with a result.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The request is malformed; it was recorded as an `invalid_request` event.
    #[error(transparent)]
    InvalidArgument(#[from] FieldError),
    /// The trail could not record the call, so nothing may be answered.
    #[error("audit trail unavailable: {0}")]
    Unavailable(#[from] StoreError),
    /// What the request names does not exist.
    #[error("{0}")]
    NotFound(String),
    /// The request is well formed but the state of things refuses it.
    #[error("{0}")]
    FailedPrecondition(String),
    /// The caller may not do this.
    #[error("{0}")]
    PermissionDenied(String),
    /// The caller did not say who it is (auth is on and no valid token came).
    #[error("{0}")]
    Unauthenticated(String),
}

impl From<Error> for Status {
    fn from(error: Error) -> Self {
        match error {
            Error::InvalidArgument(e) => Status::invalid_argument(e.to_string()),
            Error::Unavailable(StoreError::Overloaded) => {
                tracing::warn!("call refused: the trail writer's queue is full");
                Status::resource_exhausted(
                    "toolgate is overloaded: the call was not recorded; retry later",
                )
            }
            Error::Unavailable(e) => {
                // The details are for the operator; the client learns only that the call was
                // not recorded, and so must not proceed.
                tracing::error!(error = %e, "call refused: the trail could not record it");
                Status::unavailable("audit trail unavailable: the call was not recorded")
            }
            Error::NotFound(message) => Status::not_found(message),
            Error::FailedPrecondition(message) => Status::failed_precondition(message),
            Error::PermissionDenied(message) => Status::permission_denied(message),
            Error::Unauthenticated(message) => Status::unauthenticated(message),
        }
    }
}

/// Records a refused request on the trail — the RPC and the error, never the payload — and
/// returns the error to answer with: INVALID_ARGUMENT once it is recorded, UNAVAILABLE if it
/// could not be.
pub async fn refuse(writer: &Writer, rpc: &str, error: FieldError) -> Error {
    let record = Record {
        error: Some(error.to_string()),
        request: Some(serde_json::json!({ "rpc": rpc }).to_string()),
        ..Record::new(Kind::InvalidRequest)
    };
    match writer.append(vec![record]).await {
        Ok(_) => Error::InvalidArgument(error),
        Err(e) => Error::Unavailable(e),
    }
}
