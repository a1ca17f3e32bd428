//! An approver's verdict on a pending approval, validated.

use super::{required, within};

use crate::config::Limits;
use crate::error::FieldError;
use crate::proto;

/// A validated Approve or Reject request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VerdictRequest {
    pub decision_id: String,
    /// Who gives the verdict.
    pub approver: String,
    pub comment: String,
}

impl VerdictRequest {
    /// Validates an Approve or Reject request.
    pub fn from_proto(req: proto::VerdictRequest, limits: &Limits) -> Result<Self, FieldError> {
        required("decision_id", &req.decision_id, limits.max_name_bytes)?;
        required("approver", &req.approver, limits.max_name_bytes)?;
        within("comment", &req.comment, limits.max_error_bytes)?;
        Ok(Self { decision_id: req.decision_id, approver: req.approver, comment: req.comment })
    }
}

/// A Withdraw request, validated.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WithdrawRequest {
    pub decision_id: String,
    /// Why; empty when not given.
    pub reason: String,
}

impl WithdrawRequest {
    /// Validates a Withdraw request.
    pub fn from_proto(req: proto::WithdrawRequest, limits: &Limits) -> Result<Self, FieldError> {
        required("decision_id", &req.decision_id, limits.max_name_bytes)?;
        within("reason", &req.reason, limits.max_error_bytes)?;
        Ok(Self { decision_id: req.decision_id, reason: req.reason })
    }
}

/// Validates the decision id of an Await request.
pub fn awaited_decision(req: &proto::AwaitRequest, limits: &Limits) -> Result<(), FieldError> {
    required("decision_id", &req.decision_id, limits.max_name_bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_approver_is_required() {
        let req = proto::VerdictRequest { decision_id: "d".into(), ..Default::default() };
        let err = VerdictRequest::from_proto(req, &Limits::default()).unwrap_err();
        assert_eq!(err.field, "approver");
    }
}
