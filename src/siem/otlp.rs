//! A trail event as an OpenTelemetry log record (OTLP): every column of the event under
//! `toolgate.<column>`, typed as the trail types it, so that a receiver can rebuild the event
//! and check its hash and its link to the one before from the records alone; and the
//! OpenTelemetry GenAI (`gen_ai.*`, a decision also as a guardrail run, `gen_ai.guardrail.*`)
//! and MCP (`mcp.*`) attributes where they apply, for the dashboards that read those. Arguments and outputs are not on the trail, so not here either.

use chrono::DateTime;
use opentelemetry_proto::tonic::collector::logs::v1::ExportLogsServiceRequest;
use opentelemetry_proto::tonic::common::v1::{AnyValue, InstrumentationScope, KeyValue, any_value};
use opentelemetry_proto::tonic::logs::v1::{LogRecord, ResourceLogs, ScopeLogs, SeverityNumber};
use opentelemetry_proto::tonic::resource::v1::Resource;

use crate::trail::{Event, Kind, Outcome, Value};

/// The scope every record is in.
pub const SCOPE: &str = "toolgate.trail";

/// The resource attributes of one sidecar's records.
#[derive(Debug, Clone)]
pub struct Origin {
    /// `service.instance.id`: the fleet node id, or the host name.
    pub instance: String,
    /// The fleet node id, when the sidecar is one.
    pub node: Option<String>,
}

/// One export request holding `events`, in order.
pub fn request(events: &[Event], origin: &Origin) -> ExportLogsServiceRequest {
    let mut resource = vec![
        text("service.name", "toolgate"),
        text("service.version", env!("CARGO_PKG_VERSION")),
        text("service.instance.id", &origin.instance),
    ];
    resource.extend(origin.node.as_deref().map(|node| text("toolgate.node_id", node)));
    let observed = now_nanos();
    ExportLogsServiceRequest {
        resource_logs: vec![ResourceLogs {
            resource: Some(Resource { attributes: resource, ..Default::default() }),
            scope_logs: vec![ScopeLogs {
                scope: Some(InstrumentationScope {
                    name: SCOPE.to_owned(),
                    version: env!("CARGO_PKG_VERSION").to_owned(),
                    ..Default::default()
                }),
                log_records: events.iter().map(|e| record(e, observed)).collect(),
                ..Default::default()
            }],
            ..Default::default()
        }],
    }
}

/// The log record of one event.
fn record(event: &Event, observed: u64) -> LogRecord {
    let r = &event.record;
    let (severity, name) = severity(event);
    let mut attributes: Vec<KeyValue> = event
        .named_cells()
        .map(|(name, cell)| {
            let value = match cell {
                Value::Integer(n) => any_value::Value::IntValue(n),
                Value::Text(bytes) => {
                    any_value::Value::StringValue(String::from_utf8_lossy(bytes).into_owned())
                }
            };
            attribute(&format!("toolgate.{name}"), value)
        })
        .collect();
    if let Some(tool) = &r.tool
        && matches!(r.kind, Kind::Decision | Kind::Execution | Kind::Violation)
    {
        attributes.push(text("gen_ai.operation.name", "execute_tool"));
        attributes.push(text("gen_ai.tool.name", tool));
        attributes.extend(r.session_id.as_deref().map(|s| text("gen_ai.conversation.id", s)));
        if matches!(r.actor_kind.as_deref(), Some("agent" | "subagent")) {
            attributes.extend(r.actor_id.as_deref().map(|a| text("gen_ai.agent.id", a)));
        }
        attributes.extend(call_id(event).map(|id| text("gen_ai.tool.call.id", &id)));
        if tool.starts_with("mcp__") {
            attributes.push(text("mcp.method.name", "tools/call"));
        }
        if r.status.as_deref().is_some_and(|s| s != "ok") {
            attributes.push(text("error.type", r.status.as_deref().unwrap_or_default()));
        }
    }
    attributes.extend(guardrail(event));
    LogRecord {
        time_unix_nano: nanos(&event.ts),
        observed_time_unix_nano: observed,
        severity_number: severity as i32,
        severity_text: severity.as_str_name().trim_start_matches("SEVERITY_NUMBER_").to_owned(),
        body: Some(string(summary(event))),
        attributes,
        event_name: name,
        ..Default::default()
    }
}

/// A decision, and an approver's or the timeout's final verdict on one, as a guardrail run
/// (the OpenTelemetry GenAI security conventions, `gen_ai.guardrail.*`, at Development status:
/// semantic-conventions-genai pull request 427 as of its revision 3155df28). Nothing for other
/// events.
fn guardrail(event: &Event) -> Vec<KeyValue> {
    let r = &event.record;
    let outcome = match (r.kind, r.outcome) {
        (Kind::Decision | Kind::ApprovalExpired, Some(outcome)) => outcome,
        (Kind::ApprovalApproved, _) => Outcome::Allow,
        (Kind::ApprovalRejected, _) => Outcome::Deny,
        (
            Kind::Decision
            | Kind::ApprovalExpired
            | Kind::Execution
            | Kind::Violation
            | Kind::InvalidRequest
            | Kind::PolicyLoaded
            | Kind::ApprovalRequested
            | Kind::ApprovalWithdrawn
            | Kind::AccessDenied
            | Kind::Checkpoint
            | Kind::Undelivered
            | Kind::ToolDefined
            | Kind::PeerRefused
            | Kind::Prune,
            _,
        ) => return Vec::new(),
    };
    // The verdict, and what the harness is told to do with the call.
    let (verdict, action) = match outcome {
        Outcome::Allow => ("allow", "allow"),
        Outcome::Deny => ("deny", "block"),
        Outcome::RequireApproval => ("escalate", "escalate"),
        Outcome::DryRun | Outcome::Rewrite => ("modify", "modify"),
    };
    let mut attributes = vec![
        text("gen_ai.guardrail.component.name", "toolgate"),
        text("gen_ai.guardrail.target.type", "input"),
        text("gen_ai.guardrail.target.subtype", "tool_call"),
        text("gen_ai.guardrail.verdict.type", verdict),
        text("gen_ai.guardrail.verdict.code", outcome.as_str()),
        text("gen_ai.guardrail.action.type", action),
    ];
    attributes.extend(r.decision_id.as_deref().map(|id| text("gen_ai.guardrail.target.id", id)));
    if outcome != Outcome::Allow {
        attributes
            .extend(r.reason.as_deref().map(|why| text("gen_ai.guardrail.verdict.reason", why)));
    }
    let policies: Vec<String> =
        r.policy_ids.as_deref().and_then(|ids| serde_json::from_str(ids).ok()).unwrap_or_default();
    if let Some(policy) = policies.first() {
        attributes.push(text("gen_ai.guardrail.security.policy.id", policy));
    }
    if let Some(hash) = r.args_hash.as_deref() {
        // The conventions want the algorithm named: a plain hash is hex SHA-256, a keyed one
        // names itself (`hmac-sha256:<key id>:<hex>`).
        let named = if hash.contains(':') { hash.to_owned() } else { format!("sha256:{hash}") };
        attributes.push(text("gen_ai.guardrail.security.content.input.hash", &named));
    }
    if matches!(outcome, Outcome::Rewrite | Outcome::DryRun) {
        let modified = any_value::Value::BoolValue(true);
        attributes.push(attribute("gen_ai.guardrail.security.content.modified", modified));
    }
    attributes
}

/// How grave an event is, and its event name (`toolgate.<kind>`).
fn severity(event: &Event) -> (SeverityNumber, String) {
    let r = &event.record;
    // Every kind named: a new one must be placed here, not fall into Info unseen.
    let severity = match r.kind {
        Kind::Violation => SeverityNumber::Error,
        Kind::AccessDenied | Kind::InvalidRequest | Kind::Undelivered | Kind::PeerRefused => {
            SeverityNumber::Warn
        }
        Kind::ToolDefined if r.status.as_deref() == Some("changed") => SeverityNumber::Warn,
        Kind::Decision if r.outcome == Some(Outcome::Deny) => SeverityNumber::Warn,
        Kind::Execution if r.status.as_deref() != Some("ok") => SeverityNumber::Warn,
        Kind::Decision
        | Kind::Execution
        | Kind::ToolDefined
        | Kind::PolicyLoaded
        | Kind::ApprovalRequested
        | Kind::ApprovalApproved
        | Kind::ApprovalRejected
        | Kind::ApprovalExpired
        | Kind::ApprovalWithdrawn
        | Kind::Checkpoint
        | Kind::Prune => SeverityNumber::Info,
    };
    (severity, format!("toolgate.{}", r.kind))
}

/// One line for a human: the kind, the outcome or status, the tool, the actor, the reason.
fn summary(event: &Event) -> String {
    let r = &event.record;
    let mut line = format!("{} {}", event.seq, r.kind);
    for part in [
        r.outcome.map(|o| o.to_string()),
        r.status.clone(),
        r.tool.clone(),
        r.actor_id.as_ref().map(|a| format!("by {a}")),
    ]
    .into_iter()
    .flatten()
    {
        line.push(' ');
        line.push_str(&part);
    }
    if let Some(why) = r.reason.as_ref().or(r.error.as_ref()) {
        line.push_str(": ");
        line.push_str(why);
    }
    line
}

/// The idempotency key of a decision, which names the harness's tool call.
fn call_id(event: &Event) -> Option<String> {
    let request: serde_json::Value = serde_json::from_str(event.record.request.as_deref()?).ok()?;
    let key = request.pointer("/plan/idempotency_key")?.as_str()?;
    (!key.is_empty()).then(|| key.to_owned())
}

fn nanos(ts: &str) -> u64 {
    DateTime::parse_from_rfc3339(ts)
        .ok()
        .and_then(|t| t.timestamp_nanos_opt())
        .and_then(|n| u64::try_from(n).ok())
        .unwrap_or(0)
}

fn now_nanos() -> u64 {
    chrono::Utc::now().timestamp_nanos_opt().and_then(|n| u64::try_from(n).ok()).unwrap_or(0)
}

fn string(value: String) -> AnyValue {
    AnyValue { value: Some(any_value::Value::StringValue(value)) }
}

fn attribute(key: &str, value: any_value::Value) -> KeyValue {
    KeyValue {
        key: key.to_owned(),
        value: Some(AnyValue { value: Some(value) }),
        ..Default::default()
    }
}

fn text(key: &str, value: &str) -> KeyValue {
    attribute(key, any_value::Value::StringValue(value.to_owned()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trail::{Chain, Record};

    #[test]
    fn a_record_carries_every_column_and_the_genai_attributes() {
        let record = Record {
            decision_id: Some("d1".into()),
            session_id: Some("s1".into()),
            actor_id: Some("agent-7".into()),
            actor_kind: Some("agent".into()),
            tool: Some("mcp__fs__read_file".into()),
            outcome: Some(Outcome::Deny),
            reason: Some("no".into()),
            policy_ids: Some(r#"["forbid.fs","forbid.other"]"#.into()),
            args_hash: Some("ab12".into()),
            max_output_chars: Some(100),
            request: Some(r#"{"plan":{"idempotency_key":"call-1"}}"#.into()),
            ..Record::new(Kind::Decision)
        };
        let (event, _) =
            Chain::default().link(record, "e1".into(), "2026-12-02T01:00:00.000001Z".into());
        let origin = Origin { instance: "host".into(), node: Some("a".into()) };

        let request = request(std::slice::from_ref(&event), &origin);

        let logs = &request.resource_logs[0];
        let log = &logs.scope_logs[0].log_records[0];
        let get = |key: &str| {
            log.attributes.iter().find(|kv| kv.key == key).and_then(|kv| kv.value.clone()?.value)
        };
        let text = |key: &str| match get(key) {
            Some(any_value::Value::StringValue(s)) => s,
            other => panic!("{key}: {other:?}"),
        };
        assert_eq!(text("toolgate.hash"), event.hash);
        assert_eq!(text("toolgate.prev_hash"), event.prev_hash);
        assert_eq!(text("toolgate.kind"), "decision");
        assert_eq!(get("toolgate.seq"), Some(any_value::Value::IntValue(1)));
        assert_eq!(get("toolgate.max_output_chars"), Some(any_value::Value::IntValue(100)));
        assert_eq!(get("toolgate.error"), None, "NULL columns are absent");
        assert_eq!(text("gen_ai.operation.name"), "execute_tool");
        assert_eq!(text("gen_ai.tool.name"), "mcp__fs__read_file");
        assert_eq!(text("gen_ai.tool.call.id"), "call-1");
        assert_eq!(text("gen_ai.agent.id"), "agent-7");
        assert_eq!(text("mcp.method.name"), "tools/call");
        assert_eq!(text("gen_ai.guardrail.verdict.type"), "deny");
        assert_eq!(text("gen_ai.guardrail.action.type"), "block");
        assert_eq!(text("gen_ai.guardrail.verdict.code"), "deny");
        assert_eq!(text("gen_ai.guardrail.verdict.reason"), "no");
        assert_eq!(text("gen_ai.guardrail.target.id"), "d1");
        assert_eq!(text("gen_ai.guardrail.target.subtype"), "tool_call");
        assert_eq!(text("gen_ai.guardrail.security.policy.id"), "forbid.fs");
        assert_eq!(text("gen_ai.guardrail.security.content.input.hash"), "sha256:ab12");
        assert_eq!(log.severity_number, SeverityNumber::Warn as i32);
        assert_eq!(log.event_name, "toolgate.decision");
        assert_eq!(log.time_unix_nano, 1_796_173_200_000_001_000);
        let resource = logs.resource.as_ref().unwrap();
        assert!(resource.attributes.iter().any(|kv| kv.key == "service.name"));
    }

    #[test]
    fn every_outcome_and_final_verdict_is_a_guardrail_verdict_and_nothing_else_is() {
        let of = |kind: Kind, outcome: Option<Outcome>| {
            let record = Record {
                outcome,
                args_hash: Some("hmac-sha256:k1:ab".into()),
                reason: Some("why".into()),
                ..Record::new(kind)
            };
            let (event, _) = Chain::default().link(record, "e".into(), "t".into());
            let found = guardrail(&event);
            let get = |key: &str| {
                found.iter().find(|kv| kv.key == key).and_then(|kv| kv.value.clone()?.value)
            };
            let text = |key: &str| match get(key) {
                Some(any_value::Value::StringValue(s)) => Some(s),
                _ => None,
            };
            let modified = get("gen_ai.guardrail.security.content.modified");
            (
                text("gen_ai.guardrail.verdict.type"),
                text("gen_ai.guardrail.action.type"),
                text("gen_ai.guardrail.verdict.reason").is_some(),
                modified == Some(any_value::Value::BoolValue(true)),
                text("gen_ai.guardrail.security.content.input.hash"),
            )
        };
        let some = |s: &str| Some(s.to_owned());
        let keyed = some("hmac-sha256:k1:ab");
        use Outcome::*;
        assert_eq!(
            of(Kind::Decision, Some(Allow)),
            (some("allow"), some("allow"), false, false, keyed.clone())
        );
        assert_eq!(of(Kind::Decision, Some(Deny)).0, some("deny"));
        assert_eq!(of(Kind::Decision, Some(RequireApproval)).1, some("escalate"));
        assert_eq!(
            of(Kind::Decision, Some(Rewrite)),
            (some("modify"), some("modify"), true, true, keyed)
        );
        assert_eq!(of(Kind::ApprovalApproved, None).0, some("allow"));
        assert_eq!(of(Kind::ApprovalRejected, None).1, some("block"));
        assert_eq!(of(Kind::ApprovalExpired, Some(Deny)).0, some("deny"));
        for kind in [Kind::Execution, Kind::ApprovalRequested, Kind::Checkpoint, Kind::Violation] {
            assert_eq!(of(kind, Some(Allow)).0, None, "{kind}");
        }
    }
}
