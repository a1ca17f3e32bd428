//! The Cedar context a policy sees for one request (docs/policy.md lists it):
//!
//! ```text
//! context.tool      { name, safety, default_action, reads, sends }
//!                   safety: read_only | write | bash | unknown; sends: internal | external
//! context.actor     { kind, delegation_chain }
//! context.resource  { type, id, classification }
//! context.options   { allow_write, allow_bash }
//! context.plan      { dry_run, idempotency_key, rollback_hint }
//! context.session   { id, task_type, read_classes }   (the classes its executions read)
//! context.facts     { session_calls, session_tool_calls, identical_calls,
//!                     consecutive_identical, session_denials, actor_calls_last_minute,
//!                     session_cap }   (this call included)
//! context.time      { unix, hour, weekday }   (UTC; weekday 0 = Monday)
//! context.approval  { state, approver, approver_roles }   state: none | approved
//! context.args_valid, context.args_errors   the arguments against the tool's input_schema
//! context.args      the call's arguments, normalized (what toolgate hashed)
//! context.harness   the request's context_json (the harness's word)
//! ```

use cedar_policy::{Context, ContextCreationError, RestrictedExpression as Expr};
use chrono::{DateTime, Datelike, Timelike};
use serde_json::Value;

use super::Grant;
use super::shape::{CONTEXT, Used};
use crate::registry::ToolRegistry;
use crate::request::{ActionRequest, Actor, RunOptions};
use crate::state::facts::Observed;

/// Builds the records of the context of a request that the policy set reads (see [`Used`]).
pub fn build(
    req: &ActionRequest,
    registry: &ToolRegistry,
    facts: &Observed,
    grant: Option<&Grant>,
    used: Used,
) -> Result<Context, Box<ContextCreationError>> {
    let long = |n: u64| Expr::new_long(i64::try_from(n).unwrap_or(i64::MAX));
    let string = |s: &str| Expr::new_string(s.to_owned());
    let part = |name: &str| match name {
        "tool" => tool(&req.tool, registry),
        "actor" => actor(&req.actor),
        "resource" => record([
            ("type", string(&req.resource.kind)),
            ("id", string(&req.resource.id)),
            ("classification", string(&req.resource.classification)),
        ]),
        "options" => options(&req.options),
        "plan" => record([
            ("dry_run", Expr::new_bool(req.plan.dry_run)),
            ("idempotency_key", string(&req.plan.idempotency_key)),
            ("rollback_hint", string(&req.plan.rollback_hint)),
        ]),
        "session" => record([
            ("id", string(&req.session_id)),
            ("task_type", string(&req.task_type)),
            ("read_classes", Expr::new_set(facts.read_classes.iter().map(|r| string(&r.class)))),
        ]),
        "facts" => record([
            ("session_calls", long(facts.session_calls)),
            ("session_tool_calls", long(facts.session_tool_calls)),
            ("identical_calls", long(facts.identical_calls)),
            ("consecutive_identical", long(facts.consecutive_identical)),
            ("session_denials", long(facts.session_denials)),
            ("actor_calls_last_minute", long(facts.actor_calls_last_minute)),
            ("session_cap", long(facts.session_cap)),
        ]),
        "time" => time(facts.at_us),
        "approval" => record([
            ("state", string(if grant.is_some() { "approved" } else { "none" })),
            ("approver", string(grant.map_or("", |g| &g.approver))),
            (
                "approver_roles",
                Expr::new_set(grant.iter().flat_map(|g| &g.roles).map(|r| string(r))),
            ),
        ]),
        "args_valid" => Expr::new_bool(req.args_errors.is_empty()),
        "args_errors" => Expr::new_set(req.args_errors.iter().map(|e| string(e))),
        "args" => json_record(&req.args),
        // The free-form record, the last of `CONTEXT`; a test checks that every record is built
        // (`the_shape_lists_exactly_what_the_context_holds`).
        _ => json_record(&req.context),
    };
    let pairs = CONTEXT.iter().filter(|(name, _)| used.contains(name));
    Context::from_pairs(pairs.map(|(name, _)| ((*name).to_owned(), part(name)))).map_err(Box::new)
}

/// The context of a question about every call of a tool by an actor with these run options
/// ([`super::PolicyEngine::never_allows`]): those three records known, every other unknown.
pub fn partial(
    who: &Actor,
    name: &str,
    registry: &ToolRegistry,
    run: &RunOptions,
) -> Result<Context, Box<ContextCreationError>> {
    let part = |record: &str| match record {
        "tool" => tool(name, registry),
        "actor" => actor(who),
        "options" => options(run),
        other => Expr::new_unknown(format!("context.{other}")),
    };
    Context::from_pairs(CONTEXT.iter().map(|(record, _)| ((*record).to_owned(), part(record))))
        .map_err(Box::new)
}

/// What the registry says of a tool (looked up once: this is on every decision's path).
fn tool(name: &str, registry: &ToolRegistry) -> Expr {
    let string = |s: &str| Expr::new_string(s.to_owned());
    let described = registry.describe(name);
    record([
        ("name", string(name)),
        ("safety", string(described.safety.as_str())),
        ("default_action", string(described.action)),
        ("reads", Expr::new_set(described.reads.iter().map(|class| string(class)))),
        ("sends", string(described.sends.as_str())),
    ])
}

fn actor(actor: &Actor) -> Expr {
    let chain = actor.delegation_chain.iter().map(|a| Expr::new_string(a.clone()));
    record([
        ("kind", Expr::new_string(actor.kind.as_str().to_owned())),
        ("delegation_chain", Expr::new_set(chain)),
    ])
}

fn options(options: &RunOptions) -> Expr {
    record([
        ("allow_write", Expr::new_bool(options.allow_write)),
        ("allow_bash", Expr::new_bool(options.allow_bash)),
    ])
}

/// The time of the call: Unix seconds, and the UTC hour (0–23) and weekday (0 = Monday).
fn time(at_us: i64) -> Expr {
    let at = DateTime::from_timestamp_micros(at_us).unwrap_or_default();
    record([
        ("unix", Expr::new_long(at.timestamp())),
        ("hour", Expr::new_long(i64::from(at.hour()))),
        ("weekday", Expr::new_long(i64::from(at.weekday().num_days_from_monday()))),
    ])
}

#[allow(clippy::expect_used)] // see the INVARIANT inside
fn record<const N: usize>(fields: [(&str, Expr); N]) -> Expr {
    // INVARIANT: the keys are distinct literals, the only way `new_record` can fail.
    Expr::new_record(fields.into_iter().map(|(k, v)| (k.to_owned(), v)))
        .expect("record keys are distinct")
}

/// JSON as Cedar values. Cedar has no null and no fractions: nulls are left out and numbers
/// that are not 64-bit integers become their decimal text.
pub(super) fn json_expr(value: &Value) -> Option<Expr> {
    Some(match value {
        Value::Null => return None,
        Value::Bool(b) => Expr::new_bool(*b),
        Value::Number(n) => match n.as_i64() {
            Some(i) => Expr::new_long(i),
            None => Expr::new_string(n.to_string()),
        },
        Value::String(s) => Expr::new_string(s.clone()),
        Value::Array(items) => Expr::new_set(items.iter().filter_map(json_expr)),
        Value::Object(map) => json_record(map),
    })
}

#[allow(clippy::expect_used)] // see the INVARIANT inside
fn json_record(map: &serde_json::Map<String, Value>) -> Expr {
    let fields = map.iter().filter_map(|(k, v)| Some((k.clone(), json_expr(v)?)));
    // INVARIANT: a JSON object's keys are distinct.
    Expr::new_record(fields).expect("JSON object keys are distinct")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Limits;
    use crate::proto;
    use crate::registry::ToolRegistry;

    fn request() -> ActionRequest {
        let req = proto::DecideRequest {
            session_id: "s1".into(),
            actor: Some(proto::Actor { id: "agent".into(), ..Default::default() }),
            tool: "read".into(),
            context_json: r#"{"ticket": "T-1"}"#.into(),
            ..Default::default()
        };
        ActionRequest::from_proto(req, &Limits::default(), &ToolRegistry::default()).unwrap()
    }

    fn keys(used: Used) -> Vec<String> {
        let registry = ToolRegistry::default();
        let context = build(&request(), &registry, &Observed::default(), None, used);
        let mut keys: Vec<_> = context.unwrap().into_iter().map(|(k, _)| k).collect();
        keys.sort();
        keys
    }

    #[test]
    fn only_the_records_a_policy_reads_are_built() {
        let policy = cedar_policy::Policy::parse(
            None,
            "permit(principal, action, resource) when { context.tool.safety == \"read_only\" && context has harness };",
        )
        .unwrap();
        assert_eq!(keys(Used::by(&policy.to_json().unwrap())), ["harness", "tool"]);

        let whole = cedar_policy::Policy::parse(
            None,
            "permit(principal, action, resource) when { context == {} };",
        )
        .unwrap();
        assert_eq!(Used::by(&whole.to_json().unwrap()), Used::ALL);
    }
}
