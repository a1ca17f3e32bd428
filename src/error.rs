//! The error a service call can end in, and the one place that decides its gRPC status. A leaf:
//! each module that can fail a call turns its own error into an [`Error`] where it is defined
//! (`impl From<StoreError> for Error` in `store`), so this module imports none of them.

use tonic::Status;

/// A request field that is missing, malformed or over its limit.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{field}: {problem}")]
pub struct FieldError {
    /// The field's path in the request, for example `actor.id`.
    pub field: String,
    /// What is wrong with it.
    pub problem: String,
}

impl FieldError {
    /// A problem with a field.
    pub fn new(field: impl Into<String>, problem: impl Into<String>) -> Self {
        Self { field: field.into(), problem: problem.into() }
    }

    /// A field that must be given and was not.
    pub fn required(field: &str) -> Self {
        Self::new(field, "required")
    }
}

/// Why a call was not answered with a result.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The request is malformed; it was recorded as an `invalid_request` event.
    #[error(transparent)]
    InvalidArgument(#[from] FieldError),
    /// The trail could not record the call, so nothing may be answered. The cause is for the
    /// operator's log, never for the client.
    #[error("audit trail unavailable: {0}")]
    Unavailable(String),
    /// The trail's writer is too far behind to take the call.
    #[error("the trail writer's queue is full")]
    Overloaded,
    /// The trail did not confirm the call's record within `commit_timeout_ms`. The record may
    /// still be committed (followed by an `undelivered` event), but the call was not answered.
    #[error("the trail did not confirm the record in time")]
    Unconfirmed,
    /// The fleet store failed a read. The cause is for the operator's log, never for the
    /// client.
    #[error("the fleet store is unavailable: {0}")]
    FleetUnavailable(String),
    /// What the request names does not exist.
    #[error("{0}")]
    NotFound(String),
    /// The archive failed a read of what a prune took from the trail. The cause is for the
    /// operator's log, never for the client.
    #[error("the archive is unavailable: {0}")]
    ArchiveUnavailable(String),
    /// What was read does not prove itself: the message names the object.
    #[error("{0}")]
    DataLoss(String),
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
            Error::Overloaded => {
                tracing::warn!("call refused: the trail writer's queue is full");
                Status::resource_exhausted(
                    "toolgate is overloaded: the call was not recorded; retry later",
                )
            }
            Error::Unconfirmed => {
                tracing::error!("call refused: the trail did not confirm its record in time");
                Status::unavailable(
                    "audit trail too slow: the call's record was not confirmed in time; it may \
                     still be recorded, marked undelivered, but this is no answer: do not proceed",
                )
            }
            Error::Unavailable(cause) => {
                // The details are for the operator; the client learns only that the call was
                // not recorded, and so must not proceed.
                tracing::error!(error = %cause, "call refused: the trail could not record it");
                Status::unavailable("audit trail unavailable: the call was not recorded")
            }
            Error::FleetUnavailable(cause) => {
                tracing::error!(error = %cause, "the fleet store failed");
                Status::unavailable("the fleet store is unavailable")
            }
            Error::ArchiveUnavailable(cause) => {
                tracing::error!(error = %cause, "the archive failed a read");
                Status::unavailable("the archive is unavailable")
            }
            Error::DataLoss(message) => {
                tracing::error!(%message, "a read found the archive other than the trail kept it");
                Status::data_loss(message)
            }
            Error::NotFound(message) => Status::not_found(message),
            Error::FailedPrecondition(message) => Status::failed_precondition(message),
            Error::PermissionDenied(message) => Status::permission_denied(message),
            Error::Unauthenticated(message) => Status::unauthenticated(message),
        }
    }
}
