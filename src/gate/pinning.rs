//! Tool definitions at the gate: `DefineTools` records the definitions a harness was shown,
//! a Decide that names one not in force requires approval, and an approval of such a call
//! pins the definition it named, in the same commit as the approval.

use super::{Gate, refusal};
use crate::auth::Rpc;
use crate::error::Error;
use crate::pins::Listed;
use crate::policy::{Outcome, Verdict};
use crate::proto;
use crate::request::{ActionRequest, ToolDefinitions};
use crate::trail::Record;

impl Gate {
    /// Records the definitions of a `DefineTools` request that are new; the tools whose
    /// definition is not the one in force, each with the parts that differ, in its order.
    pub async fn define_tools(
        &self,
        raw: proto::DefineToolsRequest,
    ) -> Result<Vec<(String, Vec<String>)>, Error> {
        let about = refusal::About {
            actor_id: raw.actor.as_ref().map(|a| a.id.clone()).unwrap_or_default(),
            session_id: raw.session_id.clone(),
            ..refusal::About::default()
        };
        let defined = match ToolDefinitions::from_proto(raw, &self.limits) {
            Ok(defined) => defined,
            Err(e) => return Err(self.invalid(Rpc::DefineTools, e, about).await),
        };
        let mut records = Vec::new();
        for (tool, definition) in &defined.tools {
            if let Listed::Record(record) =
                self.pins.list(tool, definition, &defined.actor, &defined.session_id)
            {
                records.push(*record);
            }
        }
        if !records.is_empty() {
            for event in self.writer.append(records).await? {
                self.pins.committed(&event.record);
            }
        }
        Ok(defined
            .tools
            .into_iter()
            .filter_map(|(tool, definition)| {
                let parts = self.pins.changed(&tool, &definition.hash)?;
                Some((tool, parts))
            })
            .collect())
    }

    /// The verdict on a call that names a definition of its tool other than the one in force:
    /// what the policy allows is held for an approver, whose approval pins the definition.
    pub(super) fn held_for_definition(&self, req: &ActionRequest, verdict: Verdict) -> Verdict {
        if req.tool_definition.is_empty() || verdict.outcome == Outcome::Deny {
            return verdict;
        }
        let Some(parts) = self.pins.changed(&req.tool, &req.tool_definition) else {
            return verdict;
        };
        let held = format!(
            "the definition of `{}` changed since it was pinned ({}): an approver must accept it",
            req.tool,
            parts.join(", ")
        );
        let reason = match verdict.outcome {
            Outcome::RequireApproval => format!("{}; {held}", verdict.reason),
            _ => held,
        };
        Verdict { outcome: Outcome::RequireApproval, reason, patches: Vec::new(), ..verdict }
    }

    /// The record that pins the definition an approved call named, if it is not in force.
    pub(super) fn accepted_definition(
        &self,
        req: &ActionRequest,
        approver: &str,
        decision_id: &str,
    ) -> Option<Record> {
        if req.tool_definition.is_empty() {
            return None;
        }
        self.pins.acceptance(&req.tool, &req.tool_definition, approver, decision_id)
    }
}
