//! `toolgate.v1.Admin`: operations on the running server.

use tonic::{Request, Response, Status};

use super::Guard;
use crate::auth::Rpc;
use crate::gate::{Gatekeeper, ReloadError};
use crate::proto::{self, admin_server::Admin};

/// The tonic service.
#[derive(Debug, Clone)]
pub struct AdminService {
    gate: Gatekeeper,
    guard: Guard,
}

impl AdminService {
    /// Operates `gate`, for admins.
    pub fn new(gate: Gatekeeper, guard: Guard) -> Self {
        Self { gate, guard }
    }
}

#[tonic::async_trait]
impl Admin for AdminService {
    #[tracing::instrument(name = "ReloadPolicy", skip_all)]
    async fn reload_policy(
        &self,
        request: Request<proto::ReloadPolicyRequest>,
    ) -> Result<Response<proto::ReloadPolicyResponse>, Status> {
        self.guard.check(&request, Rpc::ReloadPolicy).await?;
        match self.gate.reload_policy().await {
            Ok((policy, event)) => Ok(Response::new(proto::ReloadPolicyResponse {
                policy_version: policy.version().to_owned(),
                source: policy.source_name().to_owned(),
                policies: u32::try_from(policy.len()).unwrap_or(u32::MAX),
                seq: event.seq.unsigned_abs(),
            })),
            Err(ReloadError::Policy(e)) => {
                tracing::warn!(error = %e, "reload refused; the policy in force stays");
                Err(Status::failed_precondition(format!("the policy in force stays: {e}")))
            }
            Err(ReloadError::Record(e)) => Err(e.into()),
        }
    }
}
