//! The wait for a verdict on a held call: rounds of `Await` up to `[mcp]
//! approval_wait_seconds`, ended early by the client's cancellation or the server's failure,
//! and the call withdrawn when no verdict comes.

use std::time::{Duration, Instant};

use tokio::sync::mpsc;

use super::{Upstream, UpstreamGate};
use crate::proto::{self, ApprovalState, Outcome};

/// `Await`'s longest single wait (the Approvals service caps it at 10 minutes).
const AWAIT_ROUND: Duration = Duration::from_secs(600);

impl UpstreamGate {
    /// Waits for the verdict on `decision`, in rounds of `Await`, up to the configured wait.
    pub(super) async fn hold(
        &self,
        decision: &proto::DecideResponse,
        inbox: &mut mpsc::Receiver<Upstream>,
    ) -> Ended {
        let wait = Duration::from_secs(self.config.approval_wait_seconds);
        let deadline = Instant::now() + wait;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Ended::Refused(self.give_up(&decision.decision_id).await);
            }
            match self.round(&decision.decision_id, left.min(AWAIT_ROUND), inbox).await {
                Round::Pending => continue,
                Round::Verdict(Ended::Dropped) => {
                    self.withdraw(&decision.decision_id, "the client cancelled the call").await;
                    return Ended::Dropped;
                }
                Round::Verdict(verdict) => return verdict,
            }
        }
    }

    /// One `Await` of at most `wait` for the verdict on `decision_id`, or the end of the call
    /// (the server failed: withdrawn and refused; the client cancelled: dropped).
    pub(super) async fn round(
        &self,
        decision_id: &str,
        wait: Duration,
        inbox: &mut mpsc::Receiver<Upstream>,
    ) -> Round {
        let request = self.sidecar.request(proto::AwaitRequest {
            decision_id: decision_id.to_owned(),
            timeout_ms: u32::try_from(wait.as_millis()).unwrap_or(u32::MAX),
        });
        let mut approvals = self.sidecar.approvals.clone();
        let approval = tokio::select! {
            approval = approvals.r#await(request) => approval,
            message = inbox.recv() => {
                // The server failed (the call is answered so), or the client cancelled.
                if let Some(Upstream::Failed(why)) = message {
                    self.withdraw(decision_id, &why).await;
                    return Round::Verdict(Ended::Refused(why));
                }
                return Round::Verdict(Ended::Dropped);
            }
        };
        let approval = match approval {
            Ok(approval) => approval.into_inner(),
            Err(status) => {
                return Round::Verdict(Ended::Refused(format!(
                    "toolgate could not wait for the verdict ({})",
                    status.message()
                )));
            }
        };
        let by = if approval.approver.is_empty() {
            String::new()
        } else {
            format!(" by {}", approval.approver)
        };
        let comment = if approval.comment.is_empty() {
            String::new()
        } else {
            format!(": {}", approval.comment)
        };
        Round::Verdict(match approval.state() {
            ApprovalState::Pending | ApprovalState::Unspecified => return Round::Pending,
            ApprovalState::Approved => Ended::Approved,
            ApprovalState::Expired if approval.verdict_outcome() == Outcome::Allow => {
                Ended::Approved
            }
            ApprovalState::Rejected => Ended::Refused(format!("rejected{by}{comment}")),
            ApprovalState::Expired => Ended::Refused(format!("expired without a verdict{comment}")),
            ApprovalState::Withdrawn => Ended::Refused("withdrawn".into()),
        })
    }

    /// Withdraws a call no verdict came for within `[mcp] approval_wait_seconds`; why, for the
    /// client.
    pub(super) async fn give_up(&self, decision_id: &str) -> String {
        let wait = self.config.approval_wait_seconds;
        let why = format!("the MCP gateway stopped waiting after {wait} s");
        self.withdraw(decision_id, &why).await;
        format!("no verdict within {wait} s")
    }

    pub(super) async fn withdraw(&self, decision_id: &str, reason: &str) {
        let request = self.sidecar.request(proto::WithdrawRequest {
            decision_id: decision_id.to_owned(),
            reason: reason.to_owned(),
        });
        if let Err(status) = self.sidecar.approvals.clone().withdraw(request).await {
            tracing::warn!(
                message = status.message(),
                decision_id,
                "the approval could not be withdrawn"
            );
        }
    }
}

/// How the wait for a verdict ended.
pub(super) enum Ended {
    Approved,
    Refused(String),
    Dropped,
}

/// What one wait for a verdict found.
pub(super) enum Round {
    Pending,
    Verdict(Ended),
}
