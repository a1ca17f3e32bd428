//! A server's `instructions` (in its `initialize` answer, or a 2026-07-28 `server/discover`
//! answer), which a client may put in the model's prompt: cut to `[mcp] max_instructions_chars`
//! and pinned like a tool's definition, under `mcp__<server>/instructions`. The first ones a
//! trail sees are pinned; once they change, the client is shown the ones this gateway showed
//! in force before (or none) until an approver accepts the change, which the gateway asks for
//! as a call of `mcp__<server>/instructions` that needs approval (nothing runs when it is
//! approved: the approval pins them).

use std::collections::HashSet;
use std::sync::PoisonError;

use serde_json::{Value, json};

use super::UpstreamGate;
use crate::mcp::definition;
use crate::mcp::refusals::{Peer, Refused};
use crate::proto;
use crate::request::instructions_tool;

/// Changes already sent to an approver, at most this many (a server that changes its
/// instructions at every answer asks once per change, and no more than this).
const MAX_ASKED: usize = 64;

/// The instructions last shown as the ones in force, by hash, and the changes asked about.
#[derive(Debug, Default)]
pub struct Shown {
    shown: Option<(String, String)>,
    asked: HashSet<String>,
}

impl UpstreamGate {
    /// Takes in an answer that may carry the server's instructions before the client sees it.
    pub async fn instructed(&self, session: &str, actor: &str, response: &mut Value) {
        let Some(Value::String(text)) = response.pointer_mut("/result/instructions") else {
            return;
        };
        let max = self.config.max_instructions_chars;
        if let Some((at, _)) = text.char_indices().nth(max) {
            text.truncate(at);
            let detail = format!("cut to {max} characters");
            self.refusals.refuse(session, Peer::Server, Refused::LongInstructions, &detail);
        }
        let text = text.clone();
        let tool = instructions_tool(&self.server);
        let defined = definition::instructions(tool.clone(), &text);
        let hash = defined.hash.clone();
        let own = proto::Actor {
            id: self.config.actor.clone(),
            kind: "agent".into(),
            ..Default::default()
        };
        let request = proto::DefineToolsRequest {
            actor: Some(own),
            session_id: session.to_owned(),
            tools: vec![defined],
        };
        let in_force = match self.own.gate.clone().define_tools(self.own.request(request)).await {
            Ok(answer) => answer.into_inner().changed.is_empty(),
            Err(status) => {
                tracing::warn!(
                    message = status.message(),
                    "the server's instructions could not be recorded: shown only as shown before"
                );
                let shown = self.instructions.lock().unwrap_or_else(PoisonError::into_inner);
                shown.shown.as_ref().is_some_and(|(before, _)| *before == hash)
            }
        };
        if in_force {
            self.instructions.lock().unwrap_or_else(PoisonError::into_inner).shown =
                Some((hash, text));
            return;
        }
        self.refusals.refuse(session, Peer::Server, Refused::ChangedTool, "instructions");
        let (before, ask) = {
            let mut shown = self.instructions.lock().unwrap_or_else(PoisonError::into_inner);
            let before = shown.shown.as_ref().map(|(_, text)| text.clone());
            let ask = shown.asked.len() < MAX_ASKED && shown.asked.insert(hash.clone());
            (before, ask)
        };
        let result = response.get_mut("result").and_then(Value::as_object_mut);
        if let Some(result) = result {
            match before {
                Some(before) => result.insert("instructions".into(), Value::String(before)),
                None => result.remove("instructions"),
            };
        }
        if ask {
            self.ask_to_accept(session, actor, &tool, &hash, &text).await;
        }
    }

    /// Sends the changed instructions to an approver: a Decide of their pinned name, naming
    /// their new definition, which the sidecar holds for a person whatever the policy says.
    async fn ask_to_accept(&self, session: &str, actor: &str, tool: &str, hash: &str, text: &str) {
        let request = proto::DecideRequest {
            session_id: session.to_owned(),
            task_type: self.config.task_type.clone(),
            actor: Some(proto::Actor {
                id: actor.to_owned(),
                kind: "agent".into(),
                ..Default::default()
            }),
            tool: tool.to_owned(),
            resource: Some(proto::Resource {
                r#type: "mcp".into(),
                id: self.server.to_string(),
                ..Default::default()
            }),
            args_json: json!({ "instructions": text }).to_string(),
            context_json: json!({ "harness": "mcp", "mcp_server": self.server }).to_string(),
            tool_definition: hash.to_owned(),
            ..Default::default()
        };
        match self.sidecar.gate.clone().decide(self.sidecar.request(request)).await {
            Ok(decided) => {
                let decided = decided.into_inner();
                tracing::info!(
                    decision = decided.decision_id,
                    "the server's instructions changed: sent to an approver"
                );
            }
            Err(status) => {
                tracing::warn!(
                    message = status.message(),
                    "the changed instructions could not be sent to an approver"
                );
            }
        }
    }
}
