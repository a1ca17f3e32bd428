//! Approvals read from the trail: the pending ones after a restart (every `approval_requested`
//! event without a verdict event, its call read back from the decision event), and the state of
//! one approval already settled.

use std::collections::BTreeMap;

use std::time::Duration;

use chrono::Utc;

use super::{Approval, ApprovalState, Approvals, Ruling};
use crate::request::ActionRequest;
use crate::state::facts::Observed;
use crate::store::{PAGE, Reader, StoreError};
use crate::trail::Filter;
use crate::trail::Outcome;
use crate::trail::{Event, Kind};

/// Opens again the approvals the trail shows pending; returns how many. Their arguments are
/// gone (the trail keeps only the hash) and their facts are those of a first call.
pub async fn rebuild(approvals: &Approvals, reader: &Reader) -> Result<usize, StoreError> {
    let mut requested = BTreeMap::new();
    reader
        .scan(&Filter::of_kind(Kind::ApprovalRequested), |event| {
            if let Some(id) = &event.record.decision_id {
                requested.insert(id.clone(), event);
            }
        })
        .await?;
    for verdict in Kind::ENDS_APPROVAL {
        reader
            .scan(&Filter::of_kind(verdict), |event| {
                if let Some(id) = &event.record.decision_id {
                    requested.remove(id);
                }
            })
            .await?;
    }
    let mut opened = 0;
    for (decision_id, requested) in requested {
        let filter = Filter {
            decision_id: Some(decision_id.clone()),
            kind: Some(Kind::Decision),
            ..Filter::default()
        };
        let decision = reader.query(&filter, 0, 1).await?;
        match decision.first().and_then(|decision| approval(decision, requested)) {
            Some(approval) => {
                approvals.reopen(approval);
                opened += 1;
            }
            None => {
                tracing::error!(%decision_id, "an approval's decision is unreadable: left closed")
            }
        }
    }
    Ok(opened)
}

/// The state each event that ends an approval (`Kind::ENDS_APPROVAL`) leaves it in.
const VERDICTS: [(Kind, ApprovalState); 4] = [
    (Kind::ApprovalApproved, ApprovalState::Approved),
    (Kind::ApprovalRejected, ApprovalState::Rejected),
    (Kind::ApprovalExpired, ApprovalState::Expired),
    (Kind::ApprovalWithdrawn, ApprovalState::Withdrawn),
];

/// The state a verdict's event leaves an approval in; `None` for an event that is no verdict.
pub fn verdict_state(kind: Kind) -> Option<ApprovalState> {
    VERDICTS.iter().find(|(verdict, _)| *verdict == kind).map(|(_, state)| *state)
}

/// What the trail says of the approval of one decision.
#[derive(Debug)]
pub enum Settled {
    /// No such decision.
    Unknown,
    /// The decision did not require approval; its outcome and its actor.
    NotRequired(Option<Outcome>, Option<String>),
    /// The approval, with its verdict if it has one.
    Approval(Box<Approval>),
}

/// The approval of one decision as the trail records it.
pub async fn settled(reader: &Reader, decision_id: &str) -> Result<Settled, StoreError> {
    let filter = Filter { decision_id: Some(decision_id.to_owned()), ..Filter::default() };
    let events = reader.query(&filter, 0, PAGE).await?;
    let of = |kind: Kind| events.iter().find(|e| e.record.kind == kind);
    let Some(decision) = of(Kind::Decision) else {
        return Ok(Settled::Unknown);
    };
    let Some(requested) = of(Kind::ApprovalRequested) else {
        return Ok(Settled::NotRequired(decision.record.outcome, decision.record.actor_id.clone()));
    };
    let Some(mut approval) = approval(decision, requested.clone()) else {
        return Ok(Settled::Unknown);
    };
    approval.verdict = VERDICTS.into_iter().find_map(|(kind, state)| {
        let event = of(kind)?;
        Some(Ruling {
            state,
            approver: event.record.actor_id.clone().filter(|_| state != ApprovalState::Withdrawn),
            comment: event.record.reason.clone().unwrap_or_default(),
            decided_at: event.ts.clone(),
            outcome: match event.record.outcome {
                Some(Outcome::Allow) => Outcome::Allow,
                Some(
                    Outcome::Deny | Outcome::RequireApproval | Outcome::DryRun | Outcome::Rewrite,
                )
                | None => Outcome::Deny,
            },
            seq: event.seq,
        })
    });
    Ok(Settled::Approval(Box::new(approval)))
}

/// An approval from its decision and `approval_requested` events; `None` when the decision's
/// request cannot be read back.
fn approval(decision: &Event, requested: Event) -> Option<Approval> {
    let request = ActionRequest::from_trail(&decision.record)?;
    let ttl = Duration::from_millis(requested.record.timeout_ms.unwrap_or_default().unsigned_abs());
    let ts = requested.ts;
    let record = requested.record;
    let approval = Approval {
        decision_id: record.decision_id.unwrap_or_default(),
        request,
        reason: record.reason.unwrap_or_default(),
        policy_ids: record
            .policy_ids
            .and_then(|ids| serde_json::from_str(&ids).ok())
            .unwrap_or_default(),
        args_json: None,
        requested_at: Utc::now(),
        expires_at: Utc::now(),
        observed: Observed::default(),
        verdict: None,
    };
    Some(approval.requested_at(&ts, ttl))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_event_that_ends_an_approval_leaves_it_in_a_state() {
        assert_eq!(VERDICTS.map(|(kind, _)| kind), Kind::ENDS_APPROVAL);
    }
}
