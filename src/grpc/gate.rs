//! `toolgate.v1.Gate`: Decide and Execute, translated between protobuf and [`crate::gate`].

use tonic::{Request, Response, Status};

use super::Guard;
use crate::auth::{Caller, Rpc};
use crate::gate::Gatekeeper;
use crate::proto::{
    self, DecideRequest, DecideResponse, DefineToolsRequest, DefineToolsResponse, ExecuteRequest,
    ExecuteResponse, NeverAllowedRequest, NeverAllowedResponse, RecordRefusalRequest,
    RecordRefusalResponse,
};
use crate::trail::Outcome;

/// The tonic service.
#[derive(Debug, Clone)]
pub struct GateService {
    gate: Gatekeeper,
    guard: Guard,
}

impl GateService {
    /// Serves `gate` to agents.
    pub fn new(gate: Gatekeeper, guard: Guard) -> Self {
        Self { gate, guard }
    }

    /// Refuses, and records, a call whose actor, or the head of whose delegation chain, is not
    /// an identity the caller's token may act as. (An empty actor id is refused by validation,
    /// by name.)
    async fn check_actor(
        &self,
        caller: Option<&Caller>,
        actor: Option<&proto::Actor>,
        rpc: Rpc,
    ) -> Result<(), Status> {
        let (Some(caller), Some(actor)) = (caller, actor) else { return Ok(()) };
        let claimed = std::iter::once(&actor.id).chain(actor.delegation_chain.first());
        match claimed.filter(|id| !id.is_empty()).find(|id| !caller.may_act_as(id)) {
            Some(other) => {
                let why = format!("the token `{}` may not act as `{other}`", caller.id);
                Err(self.guard.refuse_identity(caller, rpc, why).await)
            }
            None => Ok(()),
        }
    }
}

#[tonic::async_trait]
impl proto::gate_server::Gate for GateService {
    #[tracing::instrument(name = "Decide", skip_all)]
    async fn decide(
        &self,
        request: Request<DecideRequest>,
    ) -> Result<Response<DecideResponse>, Status> {
        let caller = self.guard.check(&request, Rpc::Decide).await?;
        let req = request.into_inner();
        self.check_actor(caller.as_ref(), req.actor.as_ref(), Rpc::Decide).await?;
        let decision = self.gate.decide(req, caller.map(|c| c.id)).await?;
        let verdict = decision.verdict;
        tracing::debug!(outcome = %verdict.outcome, seq = decision.seq, "decided");
        Ok(Response::new(DecideResponse {
            decision_id: decision.decision_id,
            outcome: outcome(verdict.outcome) as i32,
            reason: verdict.reason,
            policy_ids: verdict.policy_ids,
            args_hash: decision.args_hash,
            max_output_chars: decision.max_output_chars,
            timeout_ms: decision.timeout_ms,
            rewritten_args_json: decision.rewritten_args_json,
            seq: seq(decision.seq),
            policy_version: decision.policy_version,
        }))
    }

    #[tracing::instrument(name = "NeverAllowed", skip_all)]
    async fn never_allowed(
        &self,
        request: Request<NeverAllowedRequest>,
    ) -> Result<Response<NeverAllowedResponse>, Status> {
        let caller = self.guard.check(&request, Rpc::NeverAllowed).await?;
        let req = request.into_inner();
        self.check_actor(caller.as_ref(), req.actor.as_ref(), Rpc::NeverAllowed).await?;
        let tools = self.gate.never_allowed(req).await?;
        Ok(Response::new(NeverAllowedResponse { tools }))
    }

    #[tracing::instrument(name = "DefineTools", skip_all)]
    async fn define_tools(
        &self,
        request: Request<DefineToolsRequest>,
    ) -> Result<Response<DefineToolsResponse>, Status> {
        let caller = self.guard.check(&request, Rpc::DefineTools).await?;
        let req = request.into_inner();
        self.check_actor(caller.as_ref(), req.actor.as_ref(), Rpc::DefineTools).await?;
        let changed = self.gate.define_tools(req).await?;
        let changed = changed
            .into_iter()
            .map(|c| proto::ChangedTool { tool: c.tool, parts: c.parts, pinned: c.pinned })
            .collect();
        Ok(Response::new(DefineToolsResponse { changed }))
    }

    #[tracing::instrument(name = "RecordRefusal", skip_all)]
    async fn record_refusal(
        &self,
        request: Request<RecordRefusalRequest>,
    ) -> Result<Response<RecordRefusalResponse>, Status> {
        let caller = self.guard.check(&request, Rpc::RecordRefusal).await?;
        let req = request.into_inner();
        self.check_actor(caller.as_ref(), req.actor.as_ref(), Rpc::RecordRefusal).await?;
        let seq = self.gate.record_refusal(req).await?;
        Ok(Response::new(RecordRefusalResponse { seq: seq.unsigned_abs() }))
    }

    #[tracing::instrument(name = "Execute", skip_all)]
    async fn execute(
        &self,
        request: Request<ExecuteRequest>,
    ) -> Result<Response<ExecuteResponse>, Status> {
        let caller = self.guard.check(&request, Rpc::Execute).await?;
        let execution = self.gate.execute(request.into_inner(), caller).await?;
        if let Some(violation) = &execution.violation {
            tracing::warn!(%violation, seq = execution.seq, "execution broke its decision");
        }
        Ok(Response::new(ExecuteResponse {
            output: execution.output,
            truncated: execution.truncated,
            result_bytes: execution.result_bytes.unsigned_abs(),
            seq: seq(execution.seq),
            violation: execution.violation.unwrap_or_default(),
        }))
    }
}

/// The wire form of an outcome.
pub(super) fn outcome(outcome: Outcome) -> proto::Outcome {
    match outcome {
        Outcome::Allow => proto::Outcome::Allow,
        Outcome::Deny => proto::Outcome::Deny,
        Outcome::RequireApproval => proto::Outcome::RequireApproval,
        Outcome::DryRun => proto::Outcome::DryRun,
        Outcome::Rewrite => proto::Outcome::Rewrite,
    }
}

/// Sequence numbers start at 1 and only grow.
fn seq(seq: i64) -> u64 {
    seq.unsigned_abs()
}
