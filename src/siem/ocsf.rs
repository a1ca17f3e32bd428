//! A trail event as an OCSF 1.8.0 event (docs/ocsf.md gives every field): class API Activity
//! (6003, category Application Activity) with the `security_control` profile, whose `action`,
//! `disposition` and `policy` say what toolgate decided and under which policy. A tool call is
//! an API call whose operation is the tool. OCSF 1.8.0 has no field for a record's place in a
//! hash chain (the `record_integrity` profile is not released), so every column of the event,
//! `hash` and `prev_hash` among them, is also under `unmapped.toolgate`, typed as on the trail:
//! a receiver can check the chain from the OCSF events alone.

use serde_json::{Map, Value, json};

use crate::trail::{Event, Kind, Outcome, Value as Cell};

/// The OCSF version the events follow.
pub const VERSION: &str = "1.8.0";
const CLASS_UID: u64 = 6003;
/// API Activity's "Other": toolgate does not know whether a tool creates, reads, updates or
/// deletes, only what was decided about it.
const ACTIVITY_OTHER: u64 = 99;

/// The OCSF event of `event`, from the sidecar `instance` (`src_endpoint.name`).
pub fn event(event: &Event, instance: &str) -> Value {
    let r = &event.record;
    let (status_id, status) = status(event);
    let (severity_id, severity) = severity(event);
    let mut ocsf = json!({
        "class_uid": CLASS_UID,
        "class_name": "API Activity",
        "category_uid": 6,
        "category_name": "Application Activity",
        "activity_id": ACTIVITY_OTHER,
        "activity_name": r.kind.as_str(),
        "type_uid": CLASS_UID * 100 + ACTIVITY_OTHER,
        "type_name": "API Activity: Other",
        "time": millis(&event.ts),
        "severity_id": severity_id,
        "severity": severity,
        "status_id": status_id,
        "status": status,
        "metadata": {
            "version": VERSION,
            "product": {
                "name": "toolgate",
                "vendor_name": "toolgate",
                "version": env!("CARGO_PKG_VERSION"),
            },
            "profiles": ["security_control"],
            "uid": event.event_id,
            "sequence": event.seq,
            "log_name": "toolgate trail",
            "original_time": event.ts,
        },
        "actor": actor(event),
        "api": {
            "operation": r.tool.as_deref().unwrap_or(r.kind.as_str()),
            "service": { "name": "toolgate" },
        },
        "src_endpoint": { "name": instance },
        "message": format!("{} {}", r.kind, r.tool.as_deref().unwrap_or_default()).trim_end().to_owned(),
        "unmapped": { "toolgate": columns(event) },
    });
    let object = ocsf.as_object_mut();
    // INVARIANT: `json!` of an object literal is an object.
    let Some(object) = object else { return ocsf };
    if let Some(detail) = r.reason.as_ref().or(r.error.as_ref()) {
        object.insert("status_detail".into(), detail.as_str().into());
    }
    if let Some(decision) = &r.decision_id {
        object["metadata"]["correlation_uid"] = decision.as_str().into();
        object["api"]["request"] = json!({ "uid": decision });
    }
    if let Some(duration) = r.duration_us {
        object.insert("duration".into(), (duration / 1000).into());
    }
    if r.resource_type.is_some() || r.resource_id.is_some() {
        let resource = json!({
            "type": r.resource_type.as_deref().unwrap_or_default(),
            "uid": r.resource_id.as_deref().unwrap_or_default(),
        });
        object.insert("resources".into(), json!([resource]));
    }
    if let Some((action_id, action, disposition_id, disposition)) = verdict(event) {
        object.insert("action_id".into(), action_id.into());
        object.insert("action".into(), action.into());
        object.insert("disposition_id".into(), disposition_id.into());
        object.insert("disposition".into(), disposition.into());
    }
    if let Some(policy) = policy(event) {
        object.insert("policy".into(), policy);
    }
    ocsf
}

/// The policy that decided: the policies named, else the set, with the set's version.
fn policy(event: &Event) -> Option<Value> {
    let r = &event.record;
    if r.policy_ids.is_none() && r.policy_version.is_none() {
        return None;
    }
    let ids: Vec<String> =
        r.policy_ids.as_deref().and_then(|ids| serde_json::from_str(ids).ok()).unwrap_or_default();
    let version = r.policy_version.as_deref().unwrap_or_default();
    // OCSF's policy needs a name or a uid: the policies that decided, else the set.
    let (uid, name) = match ids.is_empty() {
        true => (version.to_owned(), "the policy set".to_owned()),
        false => (ids.join(","), ids.join(", ")),
    };
    let mut policy = Map::from_iter([("uid".into(), uid.into()), ("name".into(), name.into())]);
    if !version.is_empty() {
        policy.insert("version".into(), version.into());
    }
    Some(Value::Object(policy))
}

/// Who acted: the event's actor as a user (an agent is a user of the API), in its session;
/// toolgate itself for the events it makes on its own.
fn actor(event: &Event) -> Value {
    let r = &event.record;
    let mut actor = match &r.actor_id {
        Some(id) => {
            // OCSF's user types are User (1), Admin, System and Other (99): an agent is Other.
            let (type_id, kind) = match r.actor_kind.as_deref() {
                Some("user") => (1, "User"),
                Some(kind) => (99, kind),
                None => (0, "Unknown"),
            };
            json!({ "user": { "uid": id, "name": id, "type_id": type_id, "type": kind } })
        }
        None => json!({ "app_name": "toolgate" }),
    };
    if let Some(session) = &r.session_id {
        actor["session"] = json!({ "uid": session });
    }
    actor
}

/// Every non-NULL column, typed as the trail types it.
fn columns(event: &Event) -> Value {
    let columns = event.named_cells().map(|(name, cell)| {
        let value = match cell {
            Cell::Integer(n) => Value::from(n),
            Cell::Text(bytes) => Value::from(String::from_utf8_lossy(bytes).into_owned()),
        };
        (name.to_owned(), value)
    });
    Value::Object(columns.collect())
}

/// Whether what the event records went through: OCSF's status. A call held for approval or
/// allowed only as a dry run neither went through nor failed: Other.
fn status(event: &Event) -> (u64, &'static str) {
    let r = &event.record;
    let failed = match r.kind {
        Kind::Decision => match r.outcome {
            Some(Outcome::Allow | Outcome::Rewrite) => false,
            Some(Outcome::RequireApproval | Outcome::DryRun) => return (99, "Other"),
            Some(Outcome::Deny) | None => true,
        },
        Kind::Execution => r.status.as_deref() != Some("ok"),
        Kind::Violation | Kind::InvalidRequest | Kind::AccessDenied | Kind::Undelivered => true,
        Kind::PeerRefused => true,
        Kind::ApprovalRejected | Kind::ApprovalExpired | Kind::ApprovalWithdrawn => true,
        Kind::PolicyLoaded
        | Kind::ApprovalRequested
        | Kind::ApprovalApproved
        | Kind::Checkpoint
        | Kind::Prune
        | Kind::ToolDefined => false,
    };
    if failed { (2, "Failure") } else { (1, "Success") }
}

fn severity(event: &Event) -> (u64, &'static str) {
    let r = &event.record;
    match r.kind {
        Kind::Violation => (4, "High"),
        Kind::AccessDenied | Kind::Undelivered | Kind::PeerRefused => (3, "Medium"),
        Kind::ToolDefined if r.status.as_deref() == Some("changed") => (3, "Medium"),
        Kind::Decision if r.outcome == Some(Outcome::Deny) => (2, "Low"),
        Kind::InvalidRequest => (2, "Low"),
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
        | Kind::Prune => (1, "Informational"),
    }
}

/// The security control's action and disposition of a decision, a verdict or a refusal.
fn verdict(event: &Event) -> Option<(u64, &'static str, u64, &'static str)> {
    let r = &event.record;
    Some(match (r.kind, r.outcome) {
        (Kind::Decision, Some(Outcome::Allow)) => (1, "Allowed", 1, "Allowed"),
        (Kind::Decision, Some(Outcome::Deny)) => (2, "Denied", 2, "Blocked"),
        (Kind::Decision, Some(Outcome::RequireApproval)) => (99, "Other", 14, "Delayed"),
        (Kind::Decision, Some(Outcome::DryRun)) => (99, "Other", 16, "No Action"),
        (Kind::Decision, Some(Outcome::Rewrite)) => (4, "Modified", 11, "Corrected"),
        (Kind::ApprovalApproved, _) => (1, "Allowed", 8, "Approved"),
        (Kind::ApprovalRejected, _) => (2, "Denied", 25, "Rejected"),
        (Kind::AccessDenied, _) => (2, "Denied", 26, "Unauthorized"),
        (Kind::InvalidRequest, _) => (2, "Denied", 25, "Rejected"),
        (Kind::PeerRefused, _) => (2, "Denied", 2, "Blocked"),
        // No security control acted: the record carries no action or disposition.
        (Kind::Decision, None)
        | (
            Kind::Execution
            | Kind::Violation
            | Kind::PolicyLoaded
            | Kind::ApprovalRequested
            | Kind::ApprovalExpired
            | Kind::ApprovalWithdrawn
            | Kind::Checkpoint
            | Kind::Prune
            | Kind::Undelivered
            | Kind::ToolDefined,
            _,
        ) => return None,
    })
}

fn millis(ts: &str) -> i64 {
    chrono::DateTime::parse_from_rfc3339(ts).map_or(0, |t| t.timestamp_millis())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trail::{Chain, Record};

    #[test]
    fn a_denied_call_is_a_blocked_api_activity_with_its_chain_unmapped() {
        let record = Record {
            decision_id: Some("d1".into()),
            actor_id: Some("agent-7".into()),
            actor_kind: Some("agent".into()),
            tool: Some("write".into()),
            outcome: Some(Outcome::Deny),
            reason: Some("<script>alert(1)</script>".into()),
            policy_ids: Some(r#"["p1","p2"]"#.into()),
            policy_version: Some("v9".into()),
            ..Record::new(Kind::Decision)
        };
        let (e, _) =
            Chain::default().link(record, "e1".into(), "2026-12-02T01:00:00.123456Z".into());

        let ocsf = event(&e, "host-1");

        assert_eq!(ocsf["type_uid"], 600_399);
        assert_eq!(ocsf["time"], 1_796_173_200_123_i64);
        assert_eq!(
            (ocsf["action_id"].clone(), ocsf["disposition"].clone()),
            (json!(2), json!("Blocked"))
        );
        assert_eq!(ocsf["policy"], json!({"uid": "p1,p2", "name": "p1, p2", "version": "v9"}));
        assert_eq!(ocsf["api"]["operation"], "write");
        assert_eq!(ocsf["status_detail"], "<script>alert(1)</script>", "text stays data");
        assert_eq!(ocsf["unmapped"]["toolgate"]["hash"], e.hash.as_str());
        assert_eq!(ocsf["unmapped"]["toolgate"]["seq"], 1);
        assert_eq!(ocsf["actor"]["user"]["uid"], "agent-7");
    }
}
