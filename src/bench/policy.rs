//! The cost of one policy decision in process, session facts included: what `Decide` spends
//! before the trail, measured for the default policy and for a generated set of 100 policies
//! (also with sessions that have read data classes, as flow policies see them); and the cost
//! of checking a call's arguments against a typical input schema.

use std::collections::HashMap;
use std::time::Instant;

use hdrhistogram::Histogram;

use crate::config::Limits;
use crate::policy::{PolicyEngine, PolicyError};
use crate::proto;
use crate::registry::{InputSchema, Normalization, Safety, ToolRegistry, ToolSpec};
use crate::request::ActionRequest;
use crate::state::facts::{Call, Facts};

/// Median and 99th percentile of one evaluation, in nanoseconds.
#[derive(Debug, Clone, Copy)]
pub struct EvalFigures {
    pub policies: usize,
    pub median_ns: u64,
    pub p99_ns: u64,
}

/// Times `iterations` checks of a write tool's arguments against a typical input schema (a
/// required path with a pattern, an enum, an optional bounded integer), the arguments varied
/// and matching, as most calls' do: the schema alone, and with the tool's path made absolute
/// and its mode lowercased first, as the registry's `check` does at Decide. Each as median and
/// 99th percentile, in nanoseconds.
#[allow(clippy::expect_used)] // see the INVARIANT inside
pub fn measure_schema(iterations: usize) -> [(u64, u64); 2] {
    let schema = serde_json::json!({
        "type": "object",
        "required": ["path", "mode"],
        "additionalProperties": false,
        "properties": {
            "path": {"type": "string", "pattern": "^/workspace/", "maxLength": 4096},
            "mode": {"enum": ["append", "replace"]},
            "content": {"type": "string"},
            "line": {"type": "integer", "minimum": 1},
        },
    });
    let spec = ToolSpec {
        safety: Safety::Write,
        action: "fs.write".to_owned(),
        resource_type: None,
        resource_from: None,
        input_schema: Some(schema.clone()),
        normalize: [("/path", Normalization::Path), ("/mode", Normalization::Lowercase)]
            .into_iter()
            .map(|(pointer, n)| (pointer.to_owned(), n))
            .collect(),
        root: Some("/workspace".to_owned()),
        reads: Vec::new(),
        sends: None,
    };
    // INVARIANT: the schema and the normalizations above are valid.
    let schema = InputSchema::compile("write", &schema).expect("a valid schema");
    let mut registry = ToolRegistry::default();
    registry.insert("write", spec).expect("a valid entry");
    let args: Vec<serde_json::Value> = (0..100)
        .map(|i| serde_json::json!({"path": format!("/workspace/src/file{i}.rs"), "mode": "append", "content": "x".repeat(i * 10), "line": i + 1}))
        .collect();
    let relative: Vec<serde_json::Value> = (0..100)
        .map(|i| serde_json::json!({"path": format!("src/./file{i}.rs"), "mode": "Append", "content": "x".repeat(i * 10), "line": i + 1}))
        .collect();
    let time = |check: &mut dyn FnMut(usize)| {
        // INVARIANT: valid bounds and precision.
        let mut histogram =
            Histogram::<u64>::new_with_bounds(1, 60_000_000_000, 3).expect("valid bounds");
        for i in 0..iterations {
            let t0 = Instant::now();
            check(i);
            histogram.saturating_record(t0.elapsed().as_nanos() as u64);
        }
        (histogram.value_at_quantile(0.5), histogram.value_at_quantile(0.99))
    };
    let alone = time(&mut |i| {
        std::hint::black_box(schema.mismatches(&args[i % args.len()]));
    });
    let normalized = time(&mut |i| {
        let mut args = relative[i % relative.len()].clone();
        std::hint::black_box(registry.check("write", &mut args));
    });
    [alone, normalized]
}

/// A policy set of `n` policies in the shapes real sets use: scoped permits and forbids with
/// `like` patterns, role membership and context conditions. Every request matches some.
pub fn generated(n: usize) -> Result<PolicyEngine, PolicyError> {
    let mut text = String::from(
        "@id(\"base\") permit (principal, action, resource) when { context.tool.safety != \"unknown\" };\n",
    );
    for i in 1..n {
        let policy = match i % 4 {
            0 => format!(
                "@id(\"p{i}\") @reason(\"area {i} is closed\") forbid (principal, action, resource) \
                 when {{ context.resource.id like \"/area{i}/*\" }};\n"
            ),
            1 => format!(
                "@id(\"p{i}\") forbid (principal, action == Action::\"svc{i}.call\", resource) \
                 when {{ !context.options.allow_write }};\n"
            ),
            2 => format!(
                "@id(\"p{i}\") permit (principal in Role::\"team{i}\", action, resource) \
                 when {{ context.session.task_type == \"task{i}\" }};\n"
            ),
            _ => format!(
                "@id(\"p{i}\") forbid (principal, action, resource) \
                 when {{ context.facts.identical_calls > {} && context.tool.name == \"tool{i}\" }};\n",
                5 + i % 7
            ),
        };
        text.push_str(&policy);
    }
    PolicyEngine::parse(&format!("generated-{n}"), &text)
}

/// Times `iterations` decisions (facts, then evaluation) of varied read requests; with
/// `tainted`, in sessions that have each read two data classes.
#[allow(clippy::expect_used)] // see the INVARIANT inside
pub fn measure(engine: &PolicyEngine, iterations: usize, tainted: bool) -> EvalFigures {
    let registry = ToolRegistry::default();
    let limits = Limits::default();
    let requests: Vec<ActionRequest> = (0..100)
        .filter_map(|i| {
            let req = proto::DecideRequest {
                session_id: format!("s{}", i % 8),
                actor: Some(proto::Actor { id: format!("agent-{}", i % 4), ..Default::default() }),
                tool: "read".into(),
                resource: Some(proto::Resource {
                    id: format!("/work/src/file{i}.rs"),
                    ..Default::default()
                }),
                args_json: format!(r#"{{"path":"/work/src/file{i}.rs"}}"#),
                ..Default::default()
            };
            ActionRequest::from_proto(req, &limits, &registry).ok()
        })
        .collect();
    let facts = Facts::new(HashMap::new());
    if tainted {
        let classes = ["customer_pii".to_owned(), "secret".to_owned()];
        for (seq, req) in requests.iter().enumerate() {
            facts.read(&req.actor.id, &req.session_id, &classes, seq as i64 + 1, 0);
        }
    }
    // INVARIANT: valid bounds and precision.
    let mut histogram =
        Histogram::<u64>::new_with_bounds(1, 60_000_000_000, 3).expect("valid bounds");
    let started = Instant::now();
    for i in 0..iterations {
        let req = &requests[i % requests.len()];
        let t0 = Instant::now();
        let observed = facts.observe(Call::of(req, started.elapsed().as_micros() as i64));
        let verdict = engine.evaluate(req, &registry, &observed);
        std::hint::black_box(verdict);
        histogram.saturating_record(t0.elapsed().as_nanos() as u64);
    }
    EvalFigures {
        policies: engine.len(),
        median_ns: histogram.value_at_quantile(0.5),
        p99_ns: histogram.value_at_quantile(0.99),
    }
}
