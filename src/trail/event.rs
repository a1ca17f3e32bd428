//! One event of the trail: the fields its writer chose ([`Record`]) and the ones the trail assigns
//! when it appends it (place, identity, time and hashes).

use std::fmt;

/// The kinds of event.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A Decide call and its outcome.
    Decision,
    /// An Execute report.
    Execution,
    /// An execution that broke its decision.
    Violation,
    /// A request refused as malformed.
    InvalidRequest,
    /// A policy set put in force.
    PolicyLoaded,
    /// A decision that requires approval began to wait for a verdict.
    ApprovalRequested,
    /// An approver approved the call (the event's actor is the approver).
    ApprovalApproved,
    /// An approver rejected the call.
    ApprovalRejected,
    /// No verdict came in time; the event's outcome is what the timeout decided.
    ApprovalExpired,
    /// A call refused for who made it (auth): the token's id, the RPC, never the token.
    AccessDenied,
}

impl Kind {
    /// Every kind, in the order of the enum.
    pub const ALL: [Self; 10] = [
        Self::Decision,
        Self::Execution,
        Self::Violation,
        Self::InvalidRequest,
        Self::PolicyLoaded,
        Self::ApprovalRequested,
        Self::ApprovalApproved,
        Self::ApprovalRejected,
        Self::ApprovalExpired,
        Self::AccessDenied,
    ];

    /// The name stored in the `kind` column.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Decision => "decision",
            Self::Execution => "execution",
            Self::Violation => "violation",
            Self::InvalidRequest => "invalid_request",
            Self::PolicyLoaded => "policy_loaded",
            Self::ApprovalRequested => "approval_requested",
            Self::ApprovalApproved => "approval_approved",
            Self::ApprovalRejected => "approval_rejected",
            Self::ApprovalExpired => "approval_expired",
            Self::AccessDenied => "access_denied",
        }
    }
}

impl fmt::Display for Kind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The fields of an event that its writer chooses; `None` is stored as NULL.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct Record {
    pub kind: String,
    pub decision_id: Option<String>,
    pub session_id: Option<String>,
    pub task_type: Option<String>,
    pub actor_id: Option<String>,
    pub actor_kind: Option<String>,
    pub tool: Option<String>,
    pub action: Option<String>,
    pub resource_type: Option<String>,
    pub resource_id: Option<String>,
    pub args_hash: Option<String>,
    /// With a rewrite: hex SHA-256 of the canonical rewritten arguments.
    pub rewritten_args_hash: Option<String>,
    pub outcome: Option<String>,
    pub reason: Option<String>,
    /// A JSON array of policy ids.
    pub policy_ids: Option<String>,
    pub policy_version: Option<String>,
    /// The shadow (candidate) policy's outcome, which never changes the answer.
    pub shadow_outcome: Option<String>,
    pub shadow_reason: Option<String>,
    pub max_output_chars: Option<i64>,
    pub timeout_ms: Option<i64>,
    pub duration_us: Option<i64>,
    pub result_bytes: Option<i64>,
    /// 1 when the output handed back was cut, else 0.
    pub truncated: Option<i64>,
    pub status: Option<String>,
    pub error: Option<String>,
    /// The normalized request as canonical JSON, arguments by hash only.
    pub request: Option<String>,
}

impl Record {
    /// An empty record of the given kind.
    pub fn new(kind: Kind) -> Self {
        Self { kind: kind.as_str().to_owned(), ..Self::default() }
    }

    /// The record with every empty text made NULL. The trail stores no empty texts, so that a
    /// CSV export (where both would be an empty cell) reads back to exactly what was hashed.
    pub fn without_empty_texts(mut self) -> Self {
        for field in [
            &mut self.decision_id,
            &mut self.session_id,
            &mut self.task_type,
            &mut self.actor_id,
            &mut self.actor_kind,
            &mut self.tool,
            &mut self.action,
            &mut self.resource_type,
            &mut self.resource_id,
            &mut self.args_hash,
            &mut self.rewritten_args_hash,
            &mut self.outcome,
            &mut self.reason,
            &mut self.policy_ids,
            &mut self.policy_version,
            &mut self.shadow_outcome,
            &mut self.shadow_reason,
            &mut self.status,
            &mut self.error,
            &mut self.request,
        ] {
            if field.as_deref() == Some("") {
                *field = None;
            }
        }
        self
    }
}

/// An event as it stands on the trail.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Event {
    /// Place in the trail, contiguous from 1.
    pub seq: i64,
    /// A UUID (v7) naming this event.
    pub event_id: String,
    /// When it was appended: RFC 3339, UTC, microseconds.
    pub ts: String,
    #[serde(flatten)]
    pub record: Record,
    /// Hex hash of the previous event (64 zeros for the first).
    pub prev_hash: String,
    /// Hex SHA-256 of `prev_hash` and this event's encoding.
    pub hash: String,
}
