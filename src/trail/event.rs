//! One event of the trail: the fields its writer chose ([`Record`], from the table in
//! `columns.rs`) and the ones the trail assigns when it appends it (place, identity, time and
//! hashes), and the domain's fixed sets of names: [`Kind`] and [`Outcome`].

use std::fmt;
use std::str::FromStr;

use super::Record;

/// The kinds of event.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
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

impl FromStr for Kind {
    type Err = ();

    /// The kind stored under this name.
    fn from_str(name: &str) -> Result<Self, ()> {
        Self::ALL.into_iter().find(|k| k.as_str() == name).ok_or(())
    }
}

/// What the harness is told to do with a tool call; for an approval's verdict or expiry, what
/// it decided (`allow` or `deny`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    Allow,
    Deny,
    RequireApproval,
    DryRun,
    Rewrite,
}

impl Outcome {
    /// Every outcome, in the order of the enum.
    pub const ALL: [Self; 5] =
        [Self::Allow, Self::Deny, Self::RequireApproval, Self::DryRun, Self::Rewrite];

    /// The name the trail uses.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Allow => "allow",
            Self::Deny => "deny",
            Self::RequireApproval => "require_approval",
            Self::DryRun => "dry_run",
            Self::Rewrite => "rewrite",
        }
    }
}

impl fmt::Display for Outcome {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Outcome {
    type Err = ();

    /// The outcome stored under this name.
    fn from_str(name: &str) -> Result<Self, ()> {
        Self::ALL.into_iter().find(|o| o.as_str() == name).ok_or(())
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
