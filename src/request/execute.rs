//! The normalized report of an Execute call: which decision it follows, the hash of the arguments
//! the tool really ran with, how long it took, how it ended, and the output's size.

use serde_json::{Map, Value};

use super::{canonicalize, json_object, within};

use crate::config::Limits;
use crate::error::FieldError;
use crate::proto;

/// How a tool run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExecutionStatus {
    Ok,
    Error,
    Timeout,
}

impl ExecutionStatus {
    /// The name the trail uses.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Ok => "ok",
            Self::Error => "error",
            Self::Timeout => "timeout",
        }
    }
}

/// A validated Execute request.
#[derive(Debug, Clone)]
pub struct ExecutionReport {
    /// The decision, by id; empty when named by `idempotency_key` (and then resolved by the
    /// writer, see `gate::execute`).
    pub decision_id: String,
    /// The decision, by the idempotency key it was given.
    pub idempotency_key: Option<String>,
    /// Hex SHA-256 of the canonical arguments the tool ran with (keyed by the gate when
    /// `args_hash` keys are configured).
    pub args_hash: String,
    /// The arguments in canonical form, for a keyed hash; never stored.
    pub args_canonical: String,
    /// The arguments, for the decided tool's normalizations; never stored.
    pub args: Map<String, Value>,
    pub duration_us: i64,
    pub status: ExecutionStatus,
    /// `None` when empty.
    pub error: Option<String>,
    /// The output, when the harness sent it; never stored.
    pub output: Option<String>,
    /// The size of the original output in bytes.
    pub result_bytes: i64,
    pub wrap_output: bool,
    /// Who let the call through in the harness's own permission prompt, if the harness says.
    pub approved_in_harness: Option<String>,
}

impl ExecutionReport {
    /// Validates and normalizes an Execute request.
    pub fn from_proto(req: proto::ExecuteRequest, limits: &Limits) -> Result<Self, FieldError> {
        within("decision_id", &req.decision_id, limits.max_name_bytes)?;
        within("idempotency_key", &req.idempotency_key, limits.max_name_bytes)?;
        match (req.decision_id.is_empty(), req.idempotency_key.is_empty()) {
            (true, true) => {
                return Err(FieldError::new("decision_id", "required (or idempotency_key)"));
            }
            (false, false) => {
                return Err(FieldError::new(
                    "idempotency_key",
                    "give decision_id or idempotency_key, not both",
                ));
            }
            _ => {}
        }
        let args = json_object("args_json", &req.args_json, limits.max_args_bytes)?;
        let canonical =
            canonicalize(&args).map_err(|e| FieldError::new("args_json", e.to_string()))?;
        let status = match proto::ExecutionStatus::try_from(req.status) {
            Ok(proto::ExecutionStatus::Ok) => ExecutionStatus::Ok,
            Ok(proto::ExecutionStatus::Error) => ExecutionStatus::Error,
            Ok(proto::ExecutionStatus::Timeout) => ExecutionStatus::Timeout,
            Ok(proto::ExecutionStatus::Unspecified) => {
                return Err(FieldError::new("status", "required: OK, ERROR or TIMEOUT"));
            }
            Err(_) => {
                return Err(FieldError::new(
                    "status",
                    format!("unknown value {}: must be OK, ERROR or TIMEOUT", req.status),
                ));
            }
        };
        within("error", &req.error, limits.max_error_bytes)?;
        within("approved_in_harness", &req.approved_in_harness, limits.max_name_bytes)?;
        let duration_us = i64::try_from(req.duration_us)
            .map_err(|_| FieldError::new("duration_us", "out of range"))?;
        let claimed = usize::try_from(req.result_bytes)
            .ok()
            .filter(|&bytes| i64::try_from(bytes).is_ok())
            .ok_or_else(|| FieldError::new("result_bytes", "out of range"))?;
        let result_bytes = match &req.output {
            // A client that sends only the start of a long output says its full size.
            Some(output) => {
                within("output", output, limits.max_output_bytes)?;
                claimed.max(output.len())
            }
            None => claimed,
        };
        Ok(Self {
            decision_id: req.decision_id,
            idempotency_key: (!req.idempotency_key.is_empty()).then_some(req.idempotency_key),
            approved_in_harness: (!req.approved_in_harness.is_empty())
                .then_some(req.approved_in_harness),
            args_hash: canonical.hash,
            args_canonical: canonical.json,
            args,
            duration_us,
            status,
            error: (!req.error.is_empty()).then_some(req.error),
            output: req.output,
            // INVARIANT: checked above to fit an i64.
            result_bytes: result_bytes as i64,
            wrap_output: req.wrap_output,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request() -> proto::ExecuteRequest {
        proto::ExecuteRequest {
            decision_id: "d1".into(),
            status: proto::ExecutionStatus::Ok as i32,
            output: Some("héllo".into()),
            result_bytes: 999,
            ..Default::default()
        }
    }

    #[test]
    fn result_bytes_come_from_the_output_unless_it_is_the_start_of_a_larger_one() {
        let size = |result_bytes| {
            let req = proto::ExecuteRequest { result_bytes, ..request() };
            ExecutionReport::from_proto(req, &Limits::default()).unwrap().result_bytes
        };
        assert_eq!(size(0), 6);
        assert_eq!(size(3), 6, "never less than what was sent");
        assert_eq!(size(999), 999);
        let huge = proto::ExecuteRequest { result_bytes: u64::MAX, ..request() };
        let refused = ExecutionReport::from_proto(huge, &Limits::default()).unwrap_err();
        assert_eq!(refused.field, "result_bytes");
    }

    #[test]
    fn unknown_and_missing_status_are_refused() {
        for status in [0, 9] {
            let req = proto::ExecuteRequest { status, ..request() };
            let err = ExecutionReport::from_proto(req, &Limits::default()).unwrap_err();
            assert_eq!(err.field, "status");
        }
    }

    #[test]
    fn output_over_its_limit_is_refused() {
        let limits = Limits { max_output_bytes: 4, ..Limits::default() };
        let err = ExecutionReport::from_proto(request(), &limits).unwrap_err();
        assert_eq!(err.field, "output");
    }
}
