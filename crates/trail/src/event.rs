//! One event of the trail: the fields its writer chose ([`Record`], from the table in
//! `columns.rs`) and the ones the trail assigns when it appends it (place, identity, time and
//! hashes), and the domain's fixed sets of names: [`Kind`] and [`Outcome`].

use std::fmt;
use std::str::FromStr;

use super::Record;

/// A fixed set of names the trail stores: the enum, every value (`ALL`), the stored name of
/// each (`as_str`, `Display`) and back (`FromStr`, `()` for a name not in the set).
macro_rules! names {
    (
        $(#[doc = $doc:literal])*
        pub enum $enum:ident { $( $(#[doc = $vdoc:literal])* $variant:ident = $name:literal, )* }
    ) => {
        $(#[doc = $doc])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
        #[serde(rename_all = "snake_case")]
        pub enum $enum { $( $(#[doc = $vdoc])* $variant, )* }

        impl $enum {
            /// Every value, in the order of the enum.
            pub const ALL: [Self; [$($name),*].len()] = [$(Self::$variant),*];

            /// The name the trail stores.
            pub fn as_str(self) -> &'static str {
                match self { $( Self::$variant => $name, )* }
            }
        }

        impl fmt::Display for $enum {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.as_str())
            }
        }

        impl FromStr for $enum {
            type Err = ();

            fn from_str(name: &str) -> Result<Self, ()> {
                Self::ALL.into_iter().find(|v| v.as_str() == name).ok_or(())
            }
        }
    };
}

names! {
    /// The kinds of event.
    pub enum Kind {
        /// A Decide call and its outcome.
        Decision = "decision",
        /// An Execute report.
        Execution = "execution",
        /// An execution that broke its decision.
        Violation = "violation",
        /// A request refused as malformed.
        InvalidRequest = "invalid_request",
        /// A policy set put in force.
        PolicyLoaded = "policy_loaded",
        /// A decision that requires approval began to wait for a verdict.
        ApprovalRequested = "approval_requested",
        /// An approver approved the call (the event's actor is the approver).
        ApprovalApproved = "approval_approved",
        /// An approver rejected the call.
        ApprovalRejected = "approval_rejected",
        /// No verdict came in time; the event's outcome is what the timeout decided.
        ApprovalExpired = "approval_expired",
        /// The agent withdrew its pending approval (the event's actor is the call's).
        ApprovalWithdrawn = "approval_withdrawn",
        /// A call refused for who made it (auth): the token's id, the RPC, never the token.
        AccessDenied = "access_denied",
        /// A signed checkpoint of the tree of every event before it (its `note`).
        Checkpoint = "checkpoint",
        /// Events committed after their caller had stopped waiting (the commit outlived
        /// `commit_timeout_ms`, or the call was cancelled): the caller never got their answer.
        Undelivered = "undelivered",
        /// A tool's definition as a harness was shown it, by hash (`args_hash`, its parts'
        /// hashes in `request`): `status` `pinned` when it is the one in force (first seen,
        /// or accepted by an approver), `changed` when it differs and is not.
        ToolDefined = "tool_defined",
        /// A message an adapter refused from a peer it relays (an MCP server's response to no
        /// request in flight, a tool list whose names repeat): who (`request`), why (`reason`).
        PeerRefused = "peer_refused",
        /// Events that left this file under the retention rules, being archived, verified
        /// there and covered by a signed checkpoint: the range, the archive, the root and the
        /// last hash (`request`), why (`reason`).
        Prune = "prune",
    }
}

impl Kind {
    /// The kinds of the events that end an approval: the approvers' verdicts, an expiry, a
    /// withdrawal.
    pub const ENDS_APPROVAL: [Kind; 4] = [
        Kind::ApprovalApproved,
        Kind::ApprovalRejected,
        Kind::ApprovalExpired,
        Kind::ApprovalWithdrawn,
    ];

    /// The kinds of the events an approval's round is made of: its request and its end.
    pub const APPROVAL: [Kind; 5] = [
        Kind::ApprovalRequested,
        Kind::ApprovalApproved,
        Kind::ApprovalRejected,
        Kind::ApprovalExpired,
        Kind::ApprovalWithdrawn,
    ];

    /// Whether an event of this kind ends an approval.
    pub fn ends_approval(self) -> bool {
        Self::ENDS_APPROVAL.contains(&self)
    }

    /// The group the kind falls in.
    pub fn group(self) -> Group {
        match self {
            Kind::Decision => Group::Decision,
            Kind::Execution => Group::Execution,
            Kind::Violation => Group::Violation,
            Kind::InvalidRequest | Kind::AccessDenied | Kind::PeerRefused => Group::Refusal,
            Kind::ApprovalRequested
            | Kind::ApprovalApproved
            | Kind::ApprovalRejected
            | Kind::ApprovalExpired
            | Kind::ApprovalWithdrawn => Group::Approval,
            Kind::PolicyLoaded
            | Kind::ToolDefined
            | Kind::Checkpoint
            | Kind::Undelivered
            | Kind::Prune => Group::Keeping,
        }
    }
}

/// The groups the kinds fall in, declared once here: what a reader that counts the trail or
/// rebuilds state from it asks of an event first. A reader that matches on the group is asked
/// about a new kind when the kind starts a group of its own; one that must tell the kinds of a
/// group apart matches on [`Kind`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Group {
    /// `decision`: a Decide call and its outcome.
    Decision,
    /// `execution`: an Execute report.
    Execution,
    /// `violation`: an execution that broke its decision.
    Violation,
    /// A request or a relayed message refused before any decision: `invalid_request`,
    /// `access_denied`, `peer_refused`.
    Refusal,
    /// An approval's round: `approval_requested` and the kinds that end it
    /// ([`Kind::ENDS_APPROVAL`]).
    Approval,
    /// What the trail records of its setting and its own keeping: `policy_loaded`,
    /// `tool_defined`, `checkpoint`, `undelivered`, `prune`.
    Keeping,
}

names! {
    /// What the harness is told to do with a tool call; for an approval's verdict or expiry,
    /// what it decided (`allow` or `deny`).
    pub enum Outcome {
        Allow = "allow",
        Deny = "deny",
        RequireApproval = "require_approval",
        DryRun = "dry_run",
        Rewrite = "rewrite",
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

impl Event {
    /// How long ago it was appended, in seconds (0 for a time that does not read, or is ahead
    /// of this clock): the lag of whoever has not taken it yet.
    pub fn age_seconds(&self) -> f64 {
        chrono::DateTime::parse_from_rfc3339(&self.ts).map_or(0.0, |t| {
            (chrono::Utc::now() - t.with_timezone(&chrono::Utc)).as_seconds_f64().max(0.0)
        })
    }
}

#[cfg(test)]
mod group_tests {
    use super::*;

    #[test]
    fn the_named_groups_agree_with_the_kinds_each_holds() {
        let approval: Vec<Kind> =
            Kind::ALL.into_iter().filter(|k| k.group() == Group::Approval).collect();
        assert_eq!(approval, Kind::APPROVAL);
        assert!(Kind::ENDS_APPROVAL.iter().all(|k| Kind::APPROVAL.contains(k)));
        assert!(!Kind::ApprovalRequested.ends_approval());
    }
}
