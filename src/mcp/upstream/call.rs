//! One `tools/call` through the gate: compiled into an action request and decided as any
//! Decide is, then relayed, answered, or held for a verdict; its upstream result reported
//! through Execute and cut to the decision's limit.

use std::sync::PoisonError;
use std::time::{Duration, Instant};

use serde_json::{Map, Value, json};
use tokio::sync::mpsc;
use tonic::{Code, Status};

use super::approval::{Ended, Round};
use super::{Upstream, UpstreamGate, cut_str};
use crate::mcp::Caller;
use crate::mcp::held;
use crate::mcp::message::key;
use crate::mcp::refusals::{Peer, Refused};
use crate::mcp::result::{counted, cut, cut_error, is_tool_result, tool_error};
use crate::proto::{self, ExecutionStatus, Outcome};

/// A `tools/call` as the client sent it, and where its fate upstream reaches it: the
/// client's cancellation, the server's answer or its failure.
#[derive(Debug)]
pub struct Call {
    pub caller: Caller,
    pub id: Value,
    pub params: Value,
    pub inbox: mpsc::Receiver<Upstream>,
}

/// A call on its way upstream.
#[derive(Debug)]
pub struct Relayed {
    /// The `params` to send upstream: the client's, or with the rewritten arguments.
    pub params: Value,
    /// The upstream call's deadline.
    pub timeout: Duration,
    decision_id: String,
    args_json: String,
    max_chars: usize,
    /// The trail's session of the call.
    session: String,
    /// The client speaks the 2026-07-28 revision: every result says its `resultType`.
    modern: bool,
}

impl Relayed {
    /// The JSON-RPC request that carries the call upstream, as request `id`.
    pub fn request(&self, id: &Value) -> Value {
        json!({ "jsonrpc": "2.0", "id": id, "method": "tools/call", "params": self.params })
    }
}

/// What the gate made of a call.
#[derive(Debug)]
pub enum Admission {
    Relay(Relayed),
    /// Answer the client with this result; nothing goes upstream.
    Answer(Value),
    /// The client cancelled the call while it waited: no answer.
    Dropped,
}

impl UpstreamGate {
    /// Decides on a call; holds it while it waits for a verdict, until a message in its inbox
    /// (the client cancelled it, the server failed) ends the wait.
    pub async fn admit(&self, call: &mut Call) -> Admission {
        let admission = self.decide(call).await;
        // A cancellation or a failure that came while the call was decided: it does not go up.
        let admission = match (admission, call.inbox.try_recv()) {
            (Admission::Relay(_), Ok(Upstream::Failed(why))) => {
                Admission::Answer(tool_error(&format!("toolgate: {why}"), Map::new()))
            }
            (Admission::Relay(_), Ok(_)) => Admission::Dropped,
            (admission, _) => admission,
        };
        // A 2026-07-28 client reads which kind of result it got from each result itself.
        match admission {
            Admission::Answer(mut result) if held::modern(&call.params) => {
                held::complete(&mut result);
                Admission::Answer(result)
            }
            admission => admission,
        }
    }

    async fn decide(&self, call: &mut Call) -> Admission {
        let resumed = call.params.get("requestState").and_then(Value::as_str).map(str::to_owned);
        if let Some(state) = resumed.filter(|_| held::modern(&call.params)) {
            return self.resume(call, &state).await;
        }
        let request = self.decide_request(&call.caller, &call.id, &call.params);
        let decision = match self.sidecar.gate.clone().decide(self.sidecar.request(request)).await {
            Ok(answer) => answer.into_inner(),
            Err(status) => return Admission::Answer(unanswered(&status)),
        };
        let facts = facts(&decision);
        let reason = &decision.reason;
        match decision.outcome() {
            Outcome::Allow => {}
            Outcome::Rewrite => {}
            Outcome::RequireApproval if held::modern(&call.params) => {
                return self.surface(call, &decision);
            }
            Outcome::RequireApproval => match self.hold(&decision, &mut call.inbox).await {
                Ended::Approved => {}
                Ended::Refused(why) => return needed_approval(reason, &why, facts),
                Ended::Dropped => return Admission::Dropped,
            },
            Outcome::DryRun => {
                let text = format!(
                    "toolgate allows this call only as a dry run ({reason}); an MCP tool has \
                     no dry run, so it was not run"
                );
                return Admission::Answer(tool_error(&text, facts));
            }
            Outcome::Deny | Outcome::Unspecified => {
                return Admission::Answer(tool_error(
                    &format!("toolgate denied this call: {reason}"),
                    facts,
                ));
            }
        }
        let mut params = call.params.clone();
        if decision.outcome() == Outcome::Rewrite {
            match serde_json::from_str::<Value>(&decision.rewritten_args_json) {
                Ok(rewritten) => params["arguments"] = rewritten,
                Err(_) => {
                    return Admission::Answer(tool_error(
                        "toolgate: the rewritten arguments are not JSON; the call was not run",
                        facts,
                    ));
                }
            }
        }
        let limits = (decision.timeout_ms, decision.max_output_chars);
        Admission::Relay(relayed(params, decision.decision_id, limits, &call.caller))
    }

    /// A held call answered to a 2026-07-28 client the revision's way: `input_required`, with
    /// the state it echoes when it retries, and (when it can elicit) a question for the person.
    fn surface(&self, call: &Call, decision: &proto::DecideResponse) -> Admission {
        let wait = self.config.approval_wait_seconds;
        let binding = held::binding(&self.server, &call.caller, &call.params);
        let state = self.states.issue(&held::State::new(decision, binding, held::now() + wait));
        let tool = call.params.get("name").and_then(Value::as_str).unwrap_or_default();
        let ask = held::elicits(&call.params).then(|| {
            format!(
                "toolgate holds this call of {tool} for a person's approval ({}), decision {}. \
                 Accept to keep waiting (at most {} minutes); decline to withdraw the call.",
                decision.reason,
                decision.decision_id,
                wait.div_ceil(60)
            )
        });
        Admission::Answer(held::input_required(state, ask))
    }

    /// A 2026-07-28 client's retry of a held call: its state checked, the person's answer
    /// heeded, and the verdict awaited a while; the call runs once approved.
    async fn resume(&self, call: &mut Call, state: &str) -> Admission {
        let binding = held::binding(&self.server, &call.caller, &call.params);
        let held = match self.states.read(state, &binding) {
            Ok(held) => held,
            Err(error) => {
                let (session, peer) = (&call.caller.session, Peer::Client);
                self.refusals.refuse(session, peer, Refused::RequestState, &error.to_string());
                let text = format!("toolgate: {error}; the call was not run");
                return Admission::Answer(tool_error(&text, Map::new()));
            }
        };
        let mut facts = Map::new();
        facts.insert("toolgate/outcome".into(), json!("require_approval"));
        facts.insert("toolgate/decisionId".into(), json!(held.decision_id));
        let refused = |why: &str| needed_approval(&held.reason, why, facts.clone());
        // Given up, the state runs nothing after, whatever the approver does later.
        if held::keeps_waiting(&call.params) == Some(false) {
            self.states.run(&held.decision_id);
            let why = "the person at the MCP client stopped waiting";
            self.withdraw(&held.decision_id, why).await;
            return refused("withdrawn at the client");
        }
        if held.until <= held::now() {
            self.states.run(&held.decision_id);
            return refused(&self.give_up(&held.decision_id).await);
        }
        let left = held.until - held::now();
        // Another retry with this state is waiting already: this one is told to come back.
        let Some(_waiting) = self.states.wait(&held.decision_id) else {
            return Admission::Answer(held::input_required(state.to_owned(), None));
        };
        let wait = Duration::from_secs(left).min(RETRY_WAIT);
        match self.round(&held.decision_id, wait, &mut call.inbox).await {
            Round::Pending => Admission::Answer(held::input_required(state.to_owned(), None)),
            Round::Verdict(Ended::Approved) if self.states.run(&held.decision_id) => {
                let limits = (held.timeout_ms, held.max_chars);
                let params = call.params.clone();
                Admission::Relay(relayed(params, held.decision_id, limits, &call.caller))
            }
            Round::Verdict(Ended::Approved) => refused("the approved call ran already"),
            Round::Verdict(Ended::Refused(why)) => refused(&why),
            // The client gave up on this retry (it may retry again): the approval stays.
            Round::Verdict(Ended::Dropped) => Admission::Dropped,
        }
    }

    /// Reports how the relayed call ended, and the response for the client (none for a call
    /// the client cancelled).
    pub async fn finish(
        &self,
        call: Relayed,
        id: &Value,
        started: Instant,
        upstream: Upstream,
    ) -> Option<Value> {
        let mut report = proto::ExecuteRequest {
            decision_id: call.decision_id.clone(),
            args_json: call.args_json.clone(),
            duration_us: u64::try_from(started.elapsed().as_micros()).unwrap_or(u64::MAX),
            ..Default::default()
        };
        let timeout_ms = call.timeout.as_millis();
        let answer = match upstream {
            // An answer that is no tool result (a task, say, whose result would come later,
            // past the limit and the record) is not relayed.
            Upstream::Response(response)
                if response.get("result").is_some_and(|result| !is_tool_result(result)) =>
            {
                let detail = format!("decision {}", call.decision_id);
                self.refusals.refuse(&call.session, Peer::Server, Refused::NotAToolResult, &detail);
                let why = "the MCP server's answer is not a tool result";
                report.status = ExecutionStatus::Error as i32;
                report.error = why.to_owned();
                Some(crate::mcp::message::result(
                    id,
                    tool_error(&format!("toolgate: {why}"), Map::new()),
                ))
            }
            Upstream::Response(mut response) => {
                // The client hears its answer under its own id, never the gateway's.
                response["id"] = id.clone();
                reported(&mut response, call.max_chars, &mut report);
                Some(response)
            }
            Upstream::TimedOut => {
                report.status = ExecutionStatus::Timeout as i32;
                report.error = format!("no answer within {timeout_ms} ms; cancelled");
                let text = format!(
                    "toolgate: the tool did not answer within its {timeout_ms} ms timeout; the call was cancelled"
                );
                Some(crate::mcp::message::result(id, tool_error(&text, Map::new())))
            }
            Upstream::Failed(why) => {
                report.status = ExecutionStatus::Error as i32;
                report.error = why.clone();
                Some(crate::mcp::message::result(
                    id,
                    tool_error(&format!("toolgate: {why}"), Map::new()),
                ))
            }
            Upstream::Cancelled => {
                report.status = ExecutionStatus::Error as i32;
                report.error = "cancelled by the client".into();
                None
            }
        };
        let answer = match self.sidecar.gate.clone().execute(self.sidecar.request(report)).await {
            Ok(_) => answer,
            // What is not on the trail never reaches the model: an unrecorded read would leave
            // the session's flow facts without it, and its output uncut by the sidecar.
            Err(status) => {
                tracing::error!(code = ?status.code(), message = status.message(), decision = call.decision_id, "the execution could not be reported");
                let why = "toolgate: the call ran, but it could not be recorded, so its result is withheld";
                answer.map(|_| crate::mcp::message::result(id, tool_error(why, Map::new())))
            }
        };
        answer.map(|mut answer| {
            if let Some(result) = answer.get_mut("result").filter(|_| call.modern) {
                held::complete(result);
            }
            answer
        })
    }

    /// The Decide request for a `tools/call`.
    fn decide_request(&self, caller: &Caller, id: &Value, params: &Value) -> proto::DecideRequest {
        let name = params.get("name").and_then(Value::as_str).unwrap_or_default();
        // No name is no tool: Decide refuses it, naming the field, and records the refusal.
        let tool = if name.is_empty() { String::new() } else { self.tool(name) };
        let args = params.get("arguments");
        proto::DecideRequest {
            session_id: caller.session.clone(),
            task_type: self.config.task_type.clone(),
            actor: Some(proto::Actor {
                id: caller.actor.clone(),
                kind: "agent".into(),
                ..Default::default()
            }),
            tool,
            // The registry's action, and the server as the resource unless the registry's entry
            // for the tool names it.
            action: String::new(),
            resource: Some(proto::Resource {
                r#type: "mcp".into(),
                id: self.server.to_string(),
                ..Default::default()
            }),
            args_json: args.map_or_else(String::new, Value::to_string),
            context_json: json!({
                "harness": "mcp",
                "mcp_server": self.server,
                "mcp_tool": name,
            })
            .to_string(),
            options: Some(self.options()),
            plan: Some(proto::ExecutionPlan {
                idempotency_key: id.as_str().map_or_else(|| key(id), ToOwned::to_owned),
                ..Default::default()
            }),
            args_errors: self.mismatches(name, args),
            tool_definition: self
                .listed
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .get(name)
                .map(|listed| listed.definition.clone())
                .unwrap_or_default(),
        }
    }

    /// How a call's arguments break its tool's listed `inputSchema` (a string is not an
    /// object: Decide refuses that by itself).
    fn mismatches(&self, name: &str, args: Option<&Value>) -> Vec<String> {
        let listed = self.listed.lock().unwrap_or_else(PoisonError::into_inner);
        let schema = listed.get(name).and_then(|listed| listed.schema.as_ref());
        let (Some(schema), Some(args)) = (schema, args) else { return Vec::new() };
        if !args.is_object() {
            return Vec::new();
        }
        schema.mismatches(args)
    }
}

/// An upstream answer reported in `report` and cut to `max_chars`: a result's status, size
/// and the start of what counts toward the limit; an error's message.
fn reported(response: &mut Value, max_chars: usize, report: &mut proto::ExecuteRequest) {
    if let Some(result) = response.get_mut("result") {
        let failed = result.get("isError").and_then(Value::as_bool) == Some(true);
        report.status = if failed { ExecutionStatus::Error } else { ExecutionStatus::Ok } as i32;
        if failed {
            // The result's text is output, which the trail does not keep.
            report.error = "the tool's result is an error (isError)".into();
        }
        report.result_bytes = result.to_string().len() as u64;
        // What counts toward the limit, and only its start: enough for the trail to tell the
        // cut as the client sees it (it keeps the size only).
        report.output = Some(counted(result, max_chars + 1).0);
        cut(result, max_chars);
    } else {
        let message = response
            .pointer("/error/message")
            .and_then(Value::as_str)
            .unwrap_or("an error without a message");
        report.status = ExecutionStatus::Error as i32;
        report.error = cut_str(&format!("the MCP server answered an error: {message}"), 1024);
        cut_error(response, max_chars);
    }
}

/// The answer to a call that needed approval (`reason`) and did not get it (`why`).
fn needed_approval(reason: &str, why: &str, facts: Map<String, Value>) -> Admission {
    let text = format!("toolgate: this call needed approval ({reason}): {why}");
    Admission::Answer(tool_error(&text, facts))
}

/// How long one retry of a 2026-07-28 client waits for the verdict before it is answered
/// `input_required` again (the client's SDK retries at once; ten rounds are its default).
const RETRY_WAIT: Duration = Duration::from_secs(20);

/// The call relayed under a decision's limits (`timeout_ms`, `max_output_chars`): a
/// task-augmented call (MCP's tasks) would answer with a task and deliver its result later, past
/// the gate's output limit and record, so it runs as a plain one.
fn relayed(mut params: Value, decision_id: String, limits: (u32, u32), caller: &Caller) -> Relayed {
    let modern = held::modern(&params);
    if let Some(params) = params.as_object_mut() {
        params.remove("task");
        // The 2026-07-28 round trip is the gateway's with its client, never the server's.
        params.remove("requestState");
        params.remove("inputResponses");
    }
    let args_json = params.get("arguments").map_or_else(|| "{}".to_owned(), Value::to_string);
    Relayed {
        params,
        timeout: Duration::from_millis(u64::from(limits.0.max(1))),
        decision_id,
        args_json,
        max_chars: limits.1 as usize,
        session: caller.session.clone(),
        modern,
    }
}

/// toolgate's facts about a decision, for a result's `_meta`.
fn facts(decision: &proto::DecideResponse) -> Map<String, Value> {
    let outcome = match decision.outcome() {
        Outcome::Allow => "allow",
        Outcome::Deny | Outcome::Unspecified => "deny",
        Outcome::RequireApproval => "require_approval",
        Outcome::DryRun => "dry_run",
        Outcome::Rewrite => "rewrite",
    };
    let mut meta = Map::new();
    meta.insert("toolgate/outcome".into(), json!(outcome));
    meta.insert("toolgate/decisionId".into(), json!(decision.decision_id));
    meta.insert("toolgate/policies".into(), json!(decision.policy_ids));
    meta
}

/// The tool error for a call the gate could not decide on: it was not run. A refused input
/// says which field (the sidecar recorded the refusal); anything else says only that toolgate
/// is unavailable, never the internal error.
fn unanswered(status: &Status) -> Value {
    let text = match status.code() {
        Code::InvalidArgument | Code::PermissionDenied => {
            format!("toolgate refused this call: {}", status.message())
        }
        _ => "toolgate could not decide on this call (it is unavailable), so the call was not run"
            .to_owned(),
    };
    tool_error(&text, Map::new())
}
