//! A `tools/list` answer curated before the client sees it: repeated names left out, the
//! definitions recorded and pinned, a changed definition shown as it was pinned (or not at all)
//! until an approver accepts the change, and, when configured, the tools no call could make
//! allowed hidden.

use std::collections::{HashMap, HashSet};
use std::sync::PoisonError;

use serde_json::Value;

use super::{Listed, UpstreamGate};
use crate::mcp::definition::definition;
use crate::mcp::refusals::{Peer, Refused};
use crate::proto;
use crate::registry::InputSchema;

/// The most tools whose shown definition the gateway remembers.
const MAX_SHOWN: usize = 10_000;

impl UpstreamGate {
    /// Takes in a `tools/list` answer before the client sees it. Entries without a name, and
    /// every entry of a name listed twice, are left out (which of two the client would keep
    /// is the client's guess). The definitions are recorded (`DefineTools`); a tool whose
    /// definition is not the one in force is shown as it was when it was (the pinned one), or,
    /// when the gateway never showed that one, not at all, until an approver accepts the change.
    /// A sidecar that cannot record the definitions leaves only those already shown as in
    /// force. With `[mcp] hide_never_allowed`, the tools no call of `actor` could make allowed
    /// are left out too (a sidecar that cannot tell leaves them: the decision at each call is
    /// what stops one).
    pub async fn listed(&self, session: &str, actor: &str, response: &mut Value) {
        let Some(tools) = response.pointer_mut("/result/tools").and_then(Value::as_array_mut)
        else {
            return;
        };
        for repeated in self.unrepeated(tools) {
            self.refusals.refuse(session, Peer::Server, Refused::RepeatedTool, &repeated);
        }
        self.learn(tools);
        let name =
            |tool: &Value| self.tool(tool.get("name").and_then(Value::as_str).unwrap_or_default());
        let actor =
            proto::Actor { id: actor.to_owned(), kind: "agent".into(), ..Default::default() };
        // Recorded in the gateway's own name: it is the gateway that shows the list.
        let own = proto::Actor { id: self.config.actor.clone(), ..actor.clone() };
        let definitions = proto::DefineToolsRequest {
            actor: Some(own),
            session_id: session.to_owned(),
            tools: tools.iter().filter_map(|tool| definition(name(tool), tool)).collect(),
        };
        let mut gate = self.own.gate.clone();
        let changed: HashMap<String, String> = match gate
            .define_tools(self.own.request(definitions))
            .await
        {
            Ok(defined) => {
                defined.into_inner().changed.into_iter().map(|c| (c.tool, c.pinned)).collect()
            }
            Err(status) => {
                tracing::warn!(
                    message = status.message(),
                    "the tools' definitions could not be recorded: only those shown before are listed"
                );
                self.keep_shown(tools);
                return self.hide_never_allowed(actor, tools).await;
            }
        };
        self.show_pinned(session, tools, &changed);
        self.hide_never_allowed(actor, tools).await;
    }

    /// Leaves out entries without a name and every entry of a name listed twice; the names
    /// listed twice.
    fn unrepeated(&self, tools: &mut Vec<Value>) -> Vec<String> {
        let mut count: HashMap<String, usize> = HashMap::new();
        for tool in tools.iter() {
            if let Some(name) = tool.get("name").and_then(Value::as_str) {
                *count.entry(name.to_owned()).or_default() += 1;
            }
        }
        tools.retain(|tool| {
            tool.get("name").and_then(Value::as_str).is_some_and(|name| count[name] == 1)
        });
        let mut repeated: Vec<String> =
            count.into_iter().filter(|(_, n)| *n > 1).map(|(name, _)| name).collect();
        repeated.sort();
        repeated
    }

    /// Shows, for each tool whose definition is not the one in force, the one in force if it
    /// was shown before, and leaves the tool out otherwise; remembers the rest as shown.
    fn show_pinned(
        &self,
        session: &str,
        tools: &mut Vec<Value>,
        changed: &HashMap<String, String>,
    ) {
        let mut shown = self.shown.lock().unwrap_or_else(PoisonError::into_inner);
        let mut held = Vec::new();
        tools.retain_mut(|tool| {
            let name = tool.get("name").and_then(Value::as_str).unwrap_or_default().to_owned();
            let Some(pinned) = changed.get(&self.tool(&name)) else {
                if (shown.len() < MAX_SHOWN || shown.contains_key(&name))
                    && let Some(hash) = definition_hash(tool)
                {
                    shown.insert(name, (hash, tool.clone()));
                }
                return true;
            };
            held.push(name.clone());
            match shown.get(&name).filter(|(hash, _)| hash == pinned) {
                Some((_, before)) => {
                    *tool = before.clone();
                    true
                }
                None => false,
            }
        });
        drop(shown);
        if !held.is_empty() {
            self.refusals.refuse(session, Peer::Server, Refused::ChangedTool, &held.join(", "));
        }
    }

    /// Keeps only the tools listed as they were last shown in force.
    fn keep_shown(&self, tools: &mut Vec<Value>) {
        let shown = self.shown.lock().unwrap_or_else(PoisonError::into_inner);
        tools.retain(|tool| {
            let name = tool.get("name").and_then(Value::as_str).unwrap_or_default();
            shown.get(name).is_some_and(|(hash, _)| Some(hash) == definition_hash(tool).as_ref())
        });
    }

    /// With `[mcp] hide_never_allowed`, leaves out the tools no call of `actor` could make
    /// allowed.
    async fn hide_never_allowed(&self, actor: proto::Actor, tools: &mut Vec<Value>) {
        if !self.config.hide_never_allowed {
            return;
        }
        let name =
            |tool: &Value| self.tool(tool.get("name").and_then(Value::as_str).unwrap_or_default());
        let request = proto::NeverAllowedRequest {
            actor: Some(actor),
            tools: tools
                .iter()
                .map(|tool| proto::ToolAction { tool: name(tool), action: String::new() })
                .collect(),
            options: Some(self.options()),
        };
        match self.sidecar.gate.clone().never_allowed(self.sidecar.request(request)).await {
            Ok(never) => {
                let never: HashSet<String> = never.into_inner().tools.into_iter().collect();
                tools.retain(|tool| !never.contains(&name(tool)));
            }
            Err(status) => {
                tracing::warn!(
                    message = status.message(),
                    "tools/list left whole: the sidecar could not say which tools are never allowed"
                );
            }
        }
    }

    /// Keeps the listed tools' input schemas and definitions' hashes; a schema that does not
    /// compile is left out, and logged.
    fn learn(&self, tools: &[Value]) {
        let mut listed = self.listed.lock().unwrap_or_else(PoisonError::into_inner);
        for tool in tools {
            let Some(name) = tool.get("name").and_then(Value::as_str) else { continue };
            // A server that lists fresh names at every listing cannot grow this without end.
            if listed.len() >= MAX_SHOWN && !listed.contains_key(name) {
                continue;
            }
            let schema = tool.get("inputSchema").and_then(|schema| {
                InputSchema::compile(name, schema)
                    .inspect_err(
                        |e| tracing::warn!(error = %e, "an MCP tool's inputSchema is not checked"),
                    )
                    .ok()
            });
            let definition = definition_hash(tool).unwrap_or_default();
            listed.insert(name.to_owned(), Listed { schema, definition });
        }
    }
}

/// The hash of a listed tool's definition (`definition`); `None` for an entry without a name.
fn definition_hash(tool: &Value) -> Option<String> {
    definition(String::new(), tool).map(|d| d.hash)
}
