//! `toolgate.v1.Approvals`: list pending approvals, approve, reject, and await a verdict.

use std::time::Duration;

use chrono::{DateTime, SecondsFormat, Utc};
use tokio::sync::watch;
use tonic::{Request, Response, Status};

use super::Guard;
use super::gate::outcome;
use crate::auth::{Caller, Rpc};
use crate::config::Role;
use crate::error::Error;
use crate::gate::Gatekeeper;
use crate::proto::{self, approvals_server::Approvals};
use crate::request::awaited_decision;
use crate::state::approvals::{Approval, ApprovalState, Settled, settled};
use crate::store::Reader;
use crate::trail::Outcome;

/// The longest an Await call waits.
const MAX_WAIT: Duration = Duration::from_secs(600);

/// The tonic service.
#[derive(Debug, Clone)]
pub struct ApprovalsService {
    gate: Gatekeeper,
    reader: Reader,
    /// Becomes true when the server starts shutting down: waits end then.
    stopping: watch::Receiver<bool>,
    guard: Guard,
}

impl ApprovalsService {
    /// Serves the approvals of `gate`, reading settled ones from the trail.
    pub fn new(
        gate: Gatekeeper,
        reader: Reader,
        stopping: watch::Receiver<bool>,
        guard: Guard,
    ) -> Self {
        Self { gate, reader, stopping, guard }
    }

    /// A verdict's approver must be someone the caller may act as.
    async fn verdict(
        &self,
        request: Request<proto::VerdictRequest>,
        rpc: Rpc,
    ) -> Result<(proto::VerdictRequest, Option<Caller>), Status> {
        let caller = self.guard.check(&request, rpc).await?;
        let verdict = request.into_inner();
        if let Some(caller) = &caller
            && !verdict.approver.is_empty()
            && !caller.may_act_as(&verdict.approver)
        {
            let why = format!(
                "the token `{}` may not give verdicts as `{}`",
                caller.id, verdict.approver
            );
            return Err(self.guard.refuse_identity(caller, rpc, why).await);
        }
        Ok((verdict, caller))
    }
}

#[tonic::async_trait]
impl Approvals for ApprovalsService {
    #[tracing::instrument(name = "ListPending", skip_all)]
    async fn list_pending(
        &self,
        request: Request<proto::ListPendingRequest>,
    ) -> Result<Response<proto::ListPendingResponse>, Status> {
        let caller = self.guard.check(&request, Rpc::ListPending).await?;
        let mine = only_its_own(caller.as_ref());
        let filter = request.into_inner();
        let matches = |a: &Approval| {
            let req = &a.request;
            mine.is_none_or(|c| c.may_act_as(&req.actor.id))
                && [
                    (&filter.session_id, &req.session_id),
                    (&filter.actor_id, &req.actor.id),
                    (&filter.tool, &req.tool),
                ]
                .iter()
                .all(|(wanted, value)| wanted.is_empty() || wanted == value)
        };
        let pending = self.gate.pending_approvals(matches);
        let limit = match filter.limit {
            0 => DEFAULT_LIST,
            n => (n as usize).min(MAX_LIST),
        };
        let approvals = pending.iter().take(limit).map(to_proto).collect();
        Ok(Response::new(proto::ListPendingResponse { approvals, total: pending.len() as u64 }))
    }

    #[tracing::instrument(name = "Approve", skip_all)]
    async fn approve(
        &self,
        request: Request<proto::VerdictRequest>,
    ) -> Result<Response<proto::Approval>, Status> {
        let (verdict, caller) = self.verdict(request, Rpc::Approve).await?;
        let approval = self.gate.approve(verdict, caller.as_ref()).await?;
        Ok(Response::new(to_proto(&approval)))
    }

    #[tracing::instrument(name = "Reject", skip_all)]
    async fn reject(
        &self,
        request: Request<proto::VerdictRequest>,
    ) -> Result<Response<proto::Approval>, Status> {
        let (verdict, caller) = self.verdict(request, Rpc::Reject).await?;
        let approval = self.gate.reject(verdict, caller.as_ref()).await?;
        Ok(Response::new(to_proto(&approval)))
    }

    #[tracing::instrument(name = "Withdraw", skip_all)]
    async fn withdraw(
        &self,
        request: Request<proto::WithdrawRequest>,
    ) -> Result<Response<proto::Approval>, Status> {
        let caller = self.guard.check(&request, Rpc::Withdraw).await?;
        let approval = self.gate.withdraw(request.into_inner(), caller.as_ref()).await?;
        Ok(Response::new(to_proto(&approval)))
    }

    #[tracing::instrument(name = "Await", skip_all)]
    async fn r#await(
        &self,
        request: Request<proto::AwaitRequest>,
    ) -> Result<Response<proto::Approval>, Status> {
        let caller = self.guard.check(&request, Rpc::Await).await?;
        let req = request.into_inner();
        if let Err(e) = awaited_decision(&req, self.gate.limits()) {
            return Err(self.guard.invalid(Rpc::Await, e).await);
        }
        if let Some(caller) = only_its_own(caller.as_ref()) {
            let pending = self.gate.pending_approvals(|a| a.decision_id == req.decision_id);
            let actor = match pending.first() {
                Some(approval) => Some(approval.request.actor.id.clone()),
                None => match settled(&self.reader, &req.decision_id).await.map_err(Error::from)? {
                    Settled::Approval(approval) => Some(approval.request.actor.id.clone()),
                    Settled::NotRequired(_, actor) => actor,
                    Settled::Unknown => None,
                },
            };
            if let Some(actor) = actor.filter(|actor| !caller.may_act_as(actor)) {
                let why = format!("the token `{}` may not await a call of `{actor}`", caller.id);
                return Err(self.guard.refuse_identity(caller, Rpc::Await, why).await);
            }
        }
        let timeout = Duration::from_millis(u64::from(req.timeout_ms)).min(MAX_WAIT);
        let mut stopping = self.stopping.clone();
        let waited = tokio::select! {
            waited = self.gate.await_approval(&req.decision_id, timeout) => waited,
            _ = stopping.wait_for(|stopping| *stopping) => {
                return Err(Status::unavailable(
                    "toolgate is shutting down; the approval stays pending: await it again",
                ));
            }
        };
        if let Some(approval) = waited {
            return Ok(Response::new(to_proto(&approval)));
        }
        // Not pending: settled before the wait began, or never an approval.
        match settled(&self.reader, &req.decision_id).await.map_err(Error::from)? {
            Settled::Approval(approval) => Ok(Response::new(to_proto(&approval))),
            Settled::NotRequired(outcome, _) => Err(Error::FailedPrecondition(format!(
                "decision `{}` did not require approval: its outcome is {}",
                req.decision_id,
                outcome.map_or("", Outcome::as_str)
            ))
            .into()),
            Settled::Unknown => {
                Err(Error::NotFound(format!("unknown decision: `{}`", req.decision_id)).into())
            }
        }
    }
}

/// How many pending approvals ListPending answers with when not told, and at most.
const DEFAULT_LIST: usize = 100;
const MAX_LIST: usize = 1_000;

/// The caller, when it sees only the calls of the actors it may act as: an agent's token. An
/// approver or an auditor sees every call, as does anyone with auth off.
fn only_its_own(caller: Option<&Caller>) -> Option<&Caller> {
    caller.filter(|c| !c.has(Role::Approver) && !c.has(Role::Auditor))
}

fn to_proto(approval: &Approval) -> proto::Approval {
    let req = &approval.request;
    let verdict = approval.verdict.as_ref();
    proto::Approval {
        decision_id: approval.decision_id.clone(),
        state: match approval.state() {
            ApprovalState::Pending => proto::ApprovalState::Pending,
            ApprovalState::Approved => proto::ApprovalState::Approved,
            ApprovalState::Rejected => proto::ApprovalState::Rejected,
            ApprovalState::Expired => proto::ApprovalState::Expired,
            ApprovalState::Withdrawn => proto::ApprovalState::Withdrawn,
        } as i32,
        session_id: req.session_id.clone(),
        actor_id: req.actor.id.clone(),
        tool: req.tool.clone(),
        action: req.action.clone(),
        resource_type: req.resource.kind.clone(),
        resource_id: req.resource.id.clone(),
        args_hash: req.args_hash.clone(),
        reason: approval.reason.clone(),
        policy_ids: approval.policy_ids.clone(),
        args_json: approval.args_json.clone().unwrap_or_default(),
        requested_at: rfc3339(approval.requested_at),
        expires_at: rfc3339(approval.expires_at),
        approver: verdict.and_then(|v| v.approver.clone()).unwrap_or_default(),
        comment: verdict.map(|v| v.comment.clone()).unwrap_or_default(),
        decided_at: verdict.map(|v| v.decided_at.clone()).unwrap_or_default(),
        verdict_outcome: verdict.map_or(proto::Outcome::Unspecified, |v| outcome(v.outcome)) as i32,
        seq: verdict.map_or(0, |v| v.seq.unsigned_abs()),
        idempotency_key: req.plan.idempotency_key.clone(),
    }
}

fn rfc3339(at: DateTime<Utc>) -> String {
    at.to_rfc3339_opts(SecondsFormat::Micros, true)
}
