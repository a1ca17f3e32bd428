//! Verdicts on calls that require approval: approve, reject, expire. Each is checked, committed
//! to the trail, and only then made known to the agent waiting for it.

use std::time::Duration;

use chrono::Utc;

use super::Gatekeeper;
use crate::auth::{Caller, Rpc};
use crate::error::Error;
use crate::policy::Grant;
use crate::proto;
use crate::request::{VerdictRequest, WithdrawRequest};
use crate::state::approvals::{Approval, ClaimError, GivenBy, Ruling, verdict_state};
use crate::state::facts::Observed;
use crate::trail::Kind;
use crate::trail::Outcome;

impl Gatekeeper {
    /// The pending approvals that `matches` selects, oldest first.
    pub fn pending_approvals(&self, matches: impl Fn(&Approval) -> bool) -> Vec<Approval> {
        self.approvals.list(matches)
    }

    /// Waits up to `timeout` for the verdict on a pending approval; `None` when the decision
    /// has none pending.
    pub async fn await_approval(&self, decision_id: &str, timeout: Duration) -> Option<Approval> {
        self.approvals.wait(decision_id, timeout).await
    }

    /// Approves a pending call, once the policies, seeing the approval in
    /// `context.approval`, do not forbid it. The approver may not be the call's actor or one of
    /// the actors it acts for.
    pub async fn approve(
        &self,
        raw: proto::VerdictRequest,
        caller: Option<&Caller>,
    ) -> Result<Approval, Error> {
        self.judge(Rpc::Approve, raw, caller, Kind::ApprovalApproved).await
    }

    /// Rejects a pending call; the agent is told the approver's comment.
    pub async fn reject(
        &self,
        raw: proto::VerdictRequest,
        caller: Option<&Caller>,
    ) -> Result<Approval, Error> {
        self.judge(Rpc::Reject, raw, caller, Kind::ApprovalRejected).await
    }

    /// Withdraws a pending approval of the caller's own call: the agent stopped waiting, or no
    /// longer wants it. Afterwards no verdict can be given, and the call may not execute.
    pub async fn withdraw(
        &self,
        raw: proto::WithdrawRequest,
        caller: Option<&Caller>,
    ) -> Result<Approval, Error> {
        let about = super::refusal::About::decision(&raw.decision_id);
        let request = match WithdrawRequest::from_proto(raw, &self.limits) {
            Ok(request) => request,
            Err(e) => return Err(self.invalid(Rpc::Withdraw, e, about).await),
        };
        let approval = self.claim(&request.decision_id)?;
        let actor = approval.request.actor.id.clone();
        let withdrawn = async {
            if caller.is_some_and(|c| !c.may_act_as(&actor)) {
                return Err(Error::PermissionDenied(format!(
                    "only the call's actor `{actor}` may withdraw its approval"
                )));
            }
            let comment = match request.reason.as_str() {
                "" => "withdrawn by the agent".to_owned(),
                reason => reason.to_owned(),
            };
            let identity = caller.map(|c| c.id.as_str());
            let by = GivenBy { kind: Kind::ApprovalWithdrawn, approver: None, identity };
            self.record_verdict(approval, by, comment, Outcome::Deny).await
        }
        .await;
        if withdrawn.is_err() {
            self.approvals.release(&request.decision_id);
        }
        withdrawn
    }

    /// A call that required approval and that the harness's own permission prompt let through
    /// (Claude Code's `ask`), reported with its run: its pending approval (by decision id, or by
    /// idempotency key among the calls of actors the caller may act as) is recorded as approved
    /// by `approver`, the person at the harness, naming the prompt and the reporting caller, so
    /// that the run that follows pairs with it. Only from a caller that may report harness
    /// approvals (or with auth off); a policy that forbids this approver, or a call no longer
    /// pending, leaves the run to be recorded without an approval. Never an error: the run is
    /// recorded either way.
    pub(super) async fn approve_in_harness(
        &self,
        report: &crate::request::ExecutionReport,
        approver: &str,
        caller: Option<&Caller>,
    ) {
        if caller.is_some_and(|c| !c.reports_harness_approvals()) {
            tracing::warn!(
                caller = caller.map(|c| c.id.as_str()),
                "a harness approval from a token without harness_approvals: not recorded"
            );
            return;
        }
        let mine = |a: &Approval| caller.is_none_or(|c| c.may_act_as(&a.request.actor.id));
        let key = report.idempotency_key.as_deref();
        let pending = self.approvals.list(|a| {
            let named = a.decision_id == report.decision_id
                || key.is_some_and(|k| a.request.plan.idempotency_key == k);
            named && mine(a)
        });
        let Some(approval) = pending.into_iter().last() else { return };
        // The harness's word accepts no changed tool definition (which would pin it for every
        // tenant), and names no one whom policies know by roles.
        if let Some(changed) = self.definition_not_in_force(&approval.request) {
            tracing::warn!(changed, "a harness approval of a changed definition: not recorded");
            return;
        }
        if self.roles.contains_key(approver) {
            tracing::warn!(
                approver,
                "a harness approval in a configured actor's name: not recorded"
            );
            return;
        }
        let Ok(approval) = self.claim(&approval.decision_id) else { return };
        let decision_id = approval.decision_id.clone();
        let comment = format!(
            "allowed in the harness's own permission prompt, as reported with the run by `{}`",
            caller.map_or("the harness (auth off)", |c| c.id.as_str())
        );
        if let Err(e) = self.check_policy(&approval, approver) {
            tracing::warn!(error = %e, decision_id, "the harness's approval is refused by the policy");
            self.approvals.release(&decision_id);
            return;
        }
        let recorded = self
            .record_verdict_pinning(
                approval,
                GivenBy {
                    kind: Kind::ApprovalApproved,
                    approver: Some(approver),
                    identity: caller.map(|c| c.id.as_str()),
                },
                comment,
                Outcome::Allow,
                false,
            )
            .await;
        if let Err(e) = recorded {
            tracing::warn!(error = %e, decision_id, "the harness's approval could not be recorded");
            self.approvals.release(&decision_id);
        }
    }

    /// An approver's verdict (`kind`): claimed, checked, recorded — or handed back.
    async fn judge(
        &self,
        rpc: Rpc,
        raw: proto::VerdictRequest,
        caller: Option<&Caller>,
        kind: Kind,
    ) -> Result<Approval, Error> {
        let verdict = self.verdict_request(rpc, raw).await?;
        let approval = self.claim(&verdict.decision_id)?;
        let judged = async {
            let approver = verdict.approver.as_str();
            if is_own(&approval, approver, caller) {
                let what =
                    if kind == Kind::ApprovalApproved { "approve" } else { "give a verdict on" };
                return Err(Error::PermissionDenied(format!(
                    "`{approver}` cannot {what} their own call"
                )));
            }
            let outcome = if kind == Kind::ApprovalApproved {
                self.check_policy(&approval, approver)?;
                Outcome::Allow
            } else {
                Outcome::Deny
            };
            let comment = verdict.comment.clone();
            let identity = caller.map(|c| c.id.as_str());
            let by = GivenBy { kind, approver: Some(approver), identity };
            self.record_verdict(approval, by, comment, outcome).await
        }
        .await;
        if judged.is_err() {
            self.approvals.release(&verdict.decision_id);
        }
        judged
    }

    /// Expires the approvals past their time with the configured verdict; returns how many.
    /// One that cannot be recorded now stays pending and is tried again next time.
    pub async fn expire_approvals(&self) -> usize {
        let mut expired = 0;
        for (approval, outcome) in self.approvals.claim_expired(Utc::now()) {
            let decision_id = approval.decision_id.clone();
            // A changed tool definition is accepted by a person, never by a timeout.
            let outcome = match self.definition_not_in_force(&approval.request) {
                Some(_) => Outcome::Deny,
                None => outcome,
            };
            let comment = format!(
                "no verdict within {} s: expired, the timeout verdict is {outcome}",
                self.approvals.ttl().as_secs()
            );
            match self
                .record_verdict(
                    approval,
                    GivenBy { kind: Kind::ApprovalExpired, approver: None, identity: None },
                    comment,
                    outcome,
                )
                .await
            {
                Ok(_) => expired += 1,
                Err(e) => {
                    tracing::error!(%decision_id, error = %e, "approval expiry not recorded");
                    self.approvals.release(&decision_id);
                }
            }
        }
        expired
    }

    async fn verdict_request(
        &self,
        rpc: Rpc,
        raw: proto::VerdictRequest,
    ) -> Result<VerdictRequest, Error> {
        let about = super::refusal::About::decision(&raw.decision_id);
        match VerdictRequest::from_proto(raw, &self.limits) {
            Ok(verdict) => Ok(verdict),
            Err(e) => Err(self.invalid(rpc, e, about).await),
        }
    }

    fn claim(&self, decision_id: &str) -> Result<Approval, Error> {
        self.approvals.claim(decision_id).map_err(|e| match e {
            ClaimError::NotPending(_) => Error::FailedPrecondition(format!(
                "{e}: it is settled, expired, or never required approval"
            )),
            ClaimError::Busy(_) => Error::FailedPrecondition(e.to_string()),
        })
    }

    /// Refuses an approval the policies forbid once they see it.
    fn check_policy(&self, approval: &Approval, approver: &str) -> Result<(), Error> {
        let grant = Grant {
            approver: approver.to_owned(),
            roles: self.roles.get(approver).cloned().unwrap_or_default(),
        };
        // The session may have read more while the call waited (and a call reopened at start
        // has no facts of its own): the approval is judged with what it has read now.
        let req = &approval.request;
        let observed = Observed {
            read_classes: self.facts.read_classes(&req.actor.id, &req.session_id),
            ..approval.observed.clone()
        };
        let verdict =
            self.policy.load().evaluate_approved(req, &self.registry.load(), &observed, &grant);
        if verdict.outcome == Outcome::Deny {
            return Err(Error::FailedPrecondition(format!(
                "the policy does not accept this approval: {} (policies: {})",
                verdict.reason,
                verdict.policy_ids.join(", ")
            )));
        }
        Ok(())
    }

    /// Commits a verdict event of `kind`, by `approver` (the actor named) and `identity` (the
    /// caller that gave it), then publishes the verdict to whoever waits. An approver's
    /// approval pins the tool definition the call named.
    async fn record_verdict(
        &self,
        approval: Approval,
        by: GivenBy<'_>,
        comment: String,
        outcome: Outcome,
    ) -> Result<Approval, Error> {
        self.record_verdict_pinning(approval, by, comment, outcome, true).await
    }

    /// The same, pinning the call's definition only when `pins` (never for a harness's word).
    async fn record_verdict_pinning(
        &self,
        approval: Approval,
        by: GivenBy<'_>,
        comment: String,
        outcome: Outcome,
        pins: bool,
    ) -> Result<Approval, Error> {
        let GivenBy { kind, approver, .. } = by;
        let Some(state) = verdict_state(kind) else {
            return Err(Error::Unavailable(format!("{kind} is not a verdict")));
        };
        let mut records = vec![approval.verdict_record(by, &comment, outcome)];
        if let (Kind::ApprovalApproved, Some(approver), true) = (kind, approver, pins) {
            let decision_id = &approval.decision_id;
            records.extend(self.accepted_definition(&approval.request, approver, decision_id));
        }
        let events = self.writer.append(records).await?;
        for pinned in &events[1..] {
            self.pins.committed(pinned);
        }
        let verdict = Ruling {
            state,
            approver: approver.map(str::to_owned),
            comment,
            decided_at: events[0].ts.clone(),
            outcome,
            seq: events[0].seq,
        };
        self.approvals.settle(&approval.decision_id, verdict.clone());
        tracing::info!(decision_id = %approval.decision_id, %kind, seq = verdict.seq, "approval settled");
        Ok(Approval { verdict: Some(verdict), ..approval })
    }
}

/// Whether the call is the approver's own: made by `approver` or for them (its delegation
/// chain), or under an identity the caller's token may act as.
fn is_own(approval: &Approval, approver: &str, caller: Option<&Caller>) -> bool {
    let actor = &approval.request.actor;
    let identities = std::iter::once(&actor.id).chain(&actor.delegation_chain);
    identities.into_iter().any(|id| id == approver || caller.is_some_and(|c| c.may_act_as(id)))
}
