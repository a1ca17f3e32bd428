//! Pairing an execution with its decision: what the trail records for an Execute, including the
//! violation when the agent ran something it was not allowed to.

use std::sync::{Arc, OnceLock};

use crate::auth::{Caller, Rpc};
use crate::error::Error;
use crate::registry::ToolRegistry;
use crate::request::ArgsHasher;
use crate::request::ExecutionReport;
use crate::state::facts::Facts;
use crate::state::facts::Reads;
use crate::store::{Lookup, PairedDecision, StoreError};
use crate::trail::Outcome;
use crate::trail::{Event, Kind, Record};

/// An Execute on its way into the trail: what its records are built from on the writer's
/// thread ([`Pairing::records`]), so that pairing it with its decision is serialized with
/// every other append.
pub struct Pairing {
    pub report: ExecutionReport,
    pub caller: Option<Caller>,
    pub registry: Arc<ToolRegistry>,
    pub hasher: ArgsHasher,
    pub facts: Arc<Facts>,
    /// The output limit when no decision names one.
    pub default_max: i64,
    pub output_chars: Option<usize>,
    /// The execution already recorded, when this report is a retry of it (nothing is
    /// appended then).
    pub repeated: Arc<OnceLock<Event>>,
}

impl Pairing {
    /// The records of the execution, from the trail as it stands at this point of the
    /// writer's transaction: its decision (by id, or by the idempotency key of one the caller
    /// may act as), the impersonation refused, the arguments compared in the decided tool's
    /// normal form, a retry answered from what is stored, and the classes the call read joined
    /// to the session's flow facts with the seq the execution takes.
    pub fn records(mut self, lookup: &Lookup<'_>) -> Result<Vec<Record>, StoreError> {
        if let Some(key) = &self.report.idempotency_key {
            let mine = |actor: &str| self.caller.as_ref().is_none_or(|c| c.may_act_as(actor));
            self.report.decision_id = lookup.decision_by_key(key, mine)?.unwrap_or_default();
        }
        let decision = lookup.decision(&self.report.decision_id)?;
        let actor = decision.as_ref().and_then(|d| d.record.actor_id.clone());
        if let (Some(caller), Some(actor)) = (&self.caller, actor)
            && !caller.may_act_as(&actor)
        {
            return Ok(vec![impersonation(&self.report, caller, &actor)]);
        }
        // The tool ran with the arguments as the harness has them: they are compared
        // with the decided ones in the decided tool's normal form.
        if let Some(tool) = decision.as_ref().and_then(|d| d.record.tool.as_deref())
            && self.registry.normalizes(tool)
        {
            let mut args = serde_json::Value::Object(std::mem::take(&mut self.report.args));
            if self.registry.normalize(tool, &mut args).is_empty()
                && let serde_json::Value::Object(args) = &args
                && let Ok(normal) = self.hasher.hash(args)
            {
                self.report.args_hash = normal.hash;
            }
        }
        if let Some(stored) = decision.as_ref().and_then(|d| repeated(&self.report, d)) {
            let _ = self.repeated.set(stored.clone());
            return Ok(Vec::new());
        }
        let max =
            decision.as_ref().and_then(|d| d.record.max_output_chars).unwrap_or(self.default_max);
        let Some(decided) = decision.as_ref() else {
            return Ok(records(&self.report, None, max, self.output_chars, Vec::new()));
        };
        // What the call read: its tool's classes and its resource's classification.
        let r = &decided.record;
        let classification = crate::request::classification(r).unwrap_or_else(|| {
            tracing::error!(
                decision = self.report.decision_id,
                "a decision's request cell does not read"
            );
            String::new()
        });
        let read =
            self.registry.classes_read(r.tool.as_deref().unwrap_or_default(), &classification);
        // The session has read them from now on, with the seq the execution takes: set
        // here, on the writer's thread, so that a caller gone before the commit (or a
        // commit that then fails) cannot leave them out.
        let seq = i64::try_from(lookup.tree_head().0).unwrap_or(i64::MAX - 1) + 1;
        let (actor, session) = (r.actor_id.as_deref(), r.session_id.as_deref());
        let now = chrono::Utc::now().timestamp_micros();
        self.facts.read(actor.unwrap_or_default(), session.unwrap_or_default(), &read, seq, now);
        Ok(records(&self.report, decision.as_ref(), max, self.output_chars, read))
    }
}

/// Why an execution breaks its decision, or `None` when it keeps to it.
pub fn violation(report: &ExecutionReport, decision: Option<&PairedDecision>) -> Option<String> {
    let Some(decision) = decision else {
        return Some(match &report.idempotency_key {
            Some(key) => format!("no decision has the idempotency key `{key}`"),
            None => format!("unknown decision: `{}`", report.decision_id),
        });
    };
    let record = &decision.record;
    // What may run: the decided arguments after allow (and, as a dry run, after dry_run, and
    // once approved, after require_approval), the rewritten ones after rewrite; nothing else.
    let decided = match record.outcome {
        Some(Outcome::Allow | Outcome::DryRun) => record.args_hash.as_deref(),
        Some(Outcome::RequireApproval) => match &decision.approval {
            Some((_, Some(Outcome::Allow))) => record.args_hash.as_deref(),
            Some((kind, _)) => {
                return Some(format!("the call required approval and has none: {kind}"));
            }
            None => return Some("the call required approval and was not approved".to_owned()),
        },
        Some(Outcome::Rewrite) => record.rewritten_args_hash.as_deref(),
        other @ (Some(Outcome::Deny) | None) => {
            let outcome = other.map_or("", Outcome::as_str);
            return Some(format!("the decision was not allow: {outcome}"));
        }
    };
    if decision.execution.is_some() {
        return Some("the decision was already executed".to_owned());
    }
    let decided = decided.unwrap_or_default();
    if report.args_hash != decided {
        return Some(format!(
            "the arguments' hash differs from the decided one: {} is not {decided}",
            report.args_hash
        ));
    }
    None
}

/// The execution already stored for the decision when `report` repeats it exactly (a retry of a
/// report whose answer was lost) and it kept to its decision: Execute is idempotent by decision.
pub fn repeated<'a>(report: &ExecutionReport, decision: &'a PairedDecision) -> Option<&'a Event> {
    let stored = decision.execution.as_ref()?;
    let r = &stored.record;
    let same = r.args_hash.as_deref() == Some(report.args_hash.as_str())
        && r.status.as_deref() == Some(report.status.as_str())
        && r.duration_us == Some(report.duration_us)
        && r.result_bytes == Some(report.result_bytes)
        && r.error == report.error;
    let first = PairedDecision { execution: None, ..decision.clone() };
    (same && violation(report, Some(&first)).is_none()).then_some(stored)
}

/// The events an Execute appends: the execution, with the data classes the call `read` in its
/// `request` cell, and a violation event when it breaks its decision. Both carry the
/// decision's who, what and where, so an auditor filtering by session or actor sees them
/// beside the decision.
pub fn records(
    report: &ExecutionReport,
    decision: Option<&PairedDecision>,
    max_output_chars: i64,
    output_chars: Option<usize>,
    read: Vec<String>,
) -> Vec<Record> {
    let decided = decision.map_or_else(|| Record::new(Kind::Decision), |d| d.record.clone());
    let context = Record {
        decision_id: Some(report.decision_id.clone()),
        session_id: decided.session_id,
        task_type: decided.task_type,
        actor_id: decided.actor_id,
        actor_kind: decided.actor_kind,
        tool: decided.tool,
        action: decided.action,
        resource_type: decided.resource_type,
        resource_id: decided.resource_id,
        args_hash: Some(report.args_hash.clone()),
        policy_version: decided.policy_version,
        ..Record::new(Kind::Execution)
    };
    let truncated = output_chars.map(|chars| i64::from(chars as i64 > max_output_chars));
    let execution = Record {
        kind: Kind::Execution,
        max_output_chars: Some(max_output_chars),
        duration_us: Some(report.duration_us),
        result_bytes: Some(report.result_bytes),
        truncated,
        status: Some(report.status.as_str().to_owned()),
        error: report.error.clone(),
        request: Reads::cell(read),
        ..context.clone()
    };
    let mut records = vec![execution];
    if let Some(reason) = violation(report, decision) {
        records.push(Record { kind: Kind::Violation, reason: Some(reason), ..context });
    }
    records
}

/// The event that takes an Execute's place when its caller may not act as the decision's actor.
pub fn impersonation(report: &ExecutionReport, caller: &Caller, actor: &str) -> Record {
    let why = format!("the token `{}` may not act as `{actor}`", caller.id);
    let error = Error::PermissionDenied(why.clone());
    Record {
        decision_id: Some(report.decision_id.clone()),
        ..super::refusal::access_denied(&caller.id, Rpc::Execute, why, &error)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::request::ExecutionStatus;

    fn report(args_hash: &str) -> ExecutionReport {
        ExecutionReport {
            decision_id: "d1".into(),
            idempotency_key: None,
            args_canonical: String::new(),
            args: Default::default(),
            args_hash: args_hash.into(),
            duration_us: 10,
            status: ExecutionStatus::Ok,
            error: None,
            output: None,
            result_bytes: 0,
            wrap_output: false,
            approved_in_harness: None,
        }
    }

    fn decision(outcome: &str, executed: bool) -> PairedDecision {
        let outcome: Outcome = outcome.parse().unwrap();
        let record = Record {
            outcome: Some(outcome),
            args_hash: Some("h".into()),
            ..Record::new(Kind::Decision)
        };
        let first = PairedDecision { record: record.clone(), execution: None, approval: None };
        let execution = executed.then(|| {
            let stored = records(&report("h"), Some(&first), 8000, None, Vec::new()).remove(0);
            let chain = crate::trail::Chain::default();
            chain.link(stored, "e1".into(), "2026-12-01T00:00:00Z".into()).0
        });
        PairedDecision { execution, ..first }
    }

    #[test]
    fn only_an_exact_repeat_of_a_clean_execution_is_answered_as_the_stored_one() {
        let executed = decision("allow", true);
        assert!(repeated(&report("h"), &executed).is_some());
        let slower = ExecutionReport { duration_us: 11, ..report("h") };
        assert!(repeated(&slower, &executed).is_none(), "another report is a second execution");
        assert!(repeated(&report("h"), &decision("allow", false)).is_none());
        let denied = PairedDecision {
            record: Record { outcome: Some(Outcome::Deny), ..executed.record.clone() },
            ..executed
        };
        assert!(repeated(&report("h"), &denied).is_none(), "a violation is not repeated quietly");
    }

    #[test]
    fn an_allowed_first_execution_with_the_same_arguments_keeps_to_its_decision() {
        assert_eq!(violation(&report("h"), Some(&decision("allow", false))), None);
    }

    #[test]
    fn each_breach_is_named() {
        let cases = [
            (report("h"), None, "unknown decision"),
            (report("h"), Some(decision("deny", false)), "not allow: deny"),
            (report("h"), Some(decision("allow", true)), "already executed"),
            (report("other"), Some(decision("allow", false)), "hash differs"),
            (report("h"), Some(decision("require_approval", false)), "was not approved"),
        ];
        for (report, decision, expected) in cases {
            let found = violation(&report, decision.as_ref()).unwrap();
            assert!(found.contains(expected), "{found}");
        }
    }

    #[test]
    fn a_violation_is_recorded_beside_the_execution() {
        let records = records(
            &report("h"),
            Some(&decision("deny", false)),
            8000,
            Some(5),
            vec!["secret".into()],
        );
        let kinds: Vec<_> = records.iter().map(|r| r.kind.as_str()).collect();
        assert_eq!(kinds, ["execution", "violation"]);
        assert_eq!(records[0].truncated, Some(0));
        assert_eq!(records[0].request.as_deref(), Some(r#"{"reads":["secret"]}"#));
        assert_eq!(Reads::of(&records[0]), ["secret"]);
        assert_eq!(records[1].request, None, "the violation is not a second read");
    }
}
