//! Tool definitions at the gate: `DefineTools` records the definitions a harness was shown,
//! a Decide that names one not in force requires approval, and an approval of such a call
//! pins the definition it named, in the same commit as the approval.

use super::{Gatekeeper, refusal};
use crate::auth::Rpc;
use crate::error::Error;
use crate::policy::Verdict;
use crate::proto;
use crate::request::{ActionRequest, ToolDefinitions, is_instructions};
use crate::state::pins::Listed;
use crate::trail::Outcome;
use crate::trail::Record;

/// A listed tool whose definition is not the one in force.
#[derive(Debug)]
pub struct Changed {
    pub tool: String,
    /// The parts that differ from the one in force.
    pub parts: Vec<String>,
    /// The hash of the one in force.
    pub pinned: String,
}

impl Gatekeeper {
    /// Records the definitions of a `DefineTools` request that are new; the tools whose
    /// definition is not the one in force, each with the parts that differ and the hash of the
    /// one in force, in its order.
    pub async fn define_tools(
        &self,
        raw: proto::DefineToolsRequest,
    ) -> Result<Vec<Changed>, Error> {
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
                self.pins.committed(&event);
            }
        }
        // Asked once the new records are in force, so a change recorded just now is answered
        // as one recorded before.
        let changed = |(tool, definition): (String, crate::request::Definition)| {
            let parts = self.pins.changed(&tool, &definition.hash)?;
            let pinned = self.pins.pinned(&tool).unwrap_or_default();
            Some(Changed { tool, parts, pinned })
        };
        Ok(defined.tools.into_iter().filter_map(changed).collect())
    }

    /// The verdict on a call that names a definition of its tool other than the one in force
    /// (or, from the MCP gateway, none for a pinned tool: the gateway has not seen it listed).
    /// What the policy allows is held for an approver, whose approval pins the definition; a
    /// call that already needs approval needs it for the definition too. A rewrite is denied:
    /// an approval is of the call as made, so it would run unrewritten. A deny and a dry run
    /// stand.
    pub(super) fn held_for_definition(&self, req: &ActionRequest, verdict: Verdict) -> Verdict {
        let Some(changed) = self.definition_not_in_force(req) else { return verdict };
        // A server's new instructions are not a call the policy judges: only a person can
        // accept them (and nothing runs when one does), and only the text they are shown: the
        // definition named must be the hash of the arguments' `instructions`.
        if is_instructions(&req.tool) {
            let shown =
                req.args.len() == 1 && req.args.get("instructions").is_some_and(|t| t.is_string());
            let hashed = crate::request::canonicalize(&req.args)
                .is_ok_and(|c| c.hash == req.tool_definition);
            // One approval per change: every gateway that meets it would ask again.
            let waiting = self.approvals.list(|a| {
                a.request.tool == req.tool && a.request.tool_definition == req.tool_definition
            });
            let (outcome, reason) = match (shown && hashed, waiting.first()) {
                (false, _) => (
                    Outcome::Deny,
                    "the instructions to accept are not the ones whose definition is named"
                        .to_owned(),
                ),
                (true, Some(waiting)) => (
                    Outcome::Deny,
                    format!(
                        "{changed}: already waiting for an approver (decision {})",
                        waiting.decision_id
                    ),
                ),
                (true, None) => (
                    Outcome::RequireApproval,
                    format!(
                        "{changed}: the server's instructions, which a client may put in the model's prompt, wait for an approver to accept them"
                    ),
                ),
            };
            return Verdict { outcome, reason, patches: Vec::new(), ..verdict };
        }
        let (outcome, reason) = match verdict.outcome {
            Outcome::Allow => {
                (Outcome::RequireApproval, format!("{changed}: an approver must accept it"))
            }
            Outcome::RequireApproval => (
                Outcome::RequireApproval,
                format!("{}; {changed}: an approver must accept it", verdict.reason),
            ),
            Outcome::Rewrite => (
                Outcome::Deny,
                format!(
                    "{}; {changed}: a rewritten call is not run until the definition is accepted",
                    verdict.reason
                ),
            ),
            Outcome::Deny | Outcome::DryRun => return verdict,
        };
        Verdict { outcome, reason, patches: Vec::new(), ..verdict }
    }

    /// Why the call's tool definition is not the one in force, if it is not. Its approval,
    /// if it expires, is then a deny whatever `on_timeout` says: no person accepted it.
    pub(super) fn definition_not_in_force(&self, req: &ActionRequest) -> Option<String> {
        let tool = &req.tool;
        if req.tool_definition.is_empty() {
            let from_gateway = req.context.get("harness").and_then(|h| h.as_str()) == Some("mcp");
            return (from_gateway && self.pins.is_pinned(tool)).then(|| {
                format!("the call names no definition of `{tool}`, which is pinned (the gateway has not seen it listed)")
            });
        }
        let parts = self.pins.changed(tool, &req.tool_definition)?;
        Some(format!(
            "the definition of `{tool}` changed since it was pinned ({})",
            parts.join(", ")
        ))
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
