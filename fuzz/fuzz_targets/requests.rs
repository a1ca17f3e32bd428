//! A DecideRequest or an ExecuteRequest from arbitrary bytes, through prost decoding,
//! validation and normalization: never a panic; every refusal names a field of the request;
//! an accepted request's arguments are canonical (canonicalizing them again changes nothing)
//! and normal (the registry's normalizations, every kind of them declared for `read`, change
//! nothing when applied again).
#![no_main]

use libfuzzer_sys::fuzz_target;
use prost::Message;
use toolgate::config::Limits;
use toolgate::proto::{DecideRequest, ExecuteRequest};
use toolgate::registry::ToolRegistry;
use toolgate::error::FieldError;
use toolgate::request::{ActionRequest, ExecutionReport, canonicalize};

/// The fields a refusal may name: the requests' own, and paths inside them.
const DECIDE: &[&str] = &[
    "session_id",
    "task_type",
    "actor",
    "tool",
    "action",
    "resource",
    "args_json",
    "context_json",
    "options",
    "plan",
    "args_errors",
    "tool_definition",
];
const EXECUTE: &[&str] = &[
    "decision_id",
    "args_json",
    "duration_us",
    "status",
    "error",
    "output",
    "result_bytes",
    "wrap_output",
    "idempotency_key",
];

fn names_a_field(e: &FieldError, fields: &[&str]) {
    let top = e.field.split(['.', '[']).next().unwrap_or_default();
    assert!(fields.contains(&top), "a refusal naming `{}`: {}", e.field, e.problem);
    assert!(!e.problem.is_empty());
}

/// The built-in tools, `read` with one normalization of each kind.
fn registry() -> &'static ToolRegistry {
    static REGISTRY: std::sync::OnceLock<ToolRegistry> = std::sync::OnceLock::new();
    REGISTRY.get_or_init(|| {
    let tools = toml::from_str(
        r#"
        [read]
        safety = "read_only"
        action = "fs.read"
        root = "/workspace"
        resource_from = "/path"
        normalize = { "/path" = "path", "/amount" = "decimal", "/at" = "datetime", "/modes/*" = "lowercase" }
        "#,
    )
    .expect("the registry reads");
    ToolRegistry::with(&tools).expect("the registry compiles")
    })
}

fuzz_target!(|data: &[u8]| {
    let Some((&which, bytes)) = data.split_first() else { return };
    let limits = Limits::default();
    if which % 2 == 0 {
        let Ok(req) = DecideRequest::decode(bytes) else { return };
        let registry = registry();
        match ActionRequest::from_proto(req, &limits, registry) {
            Ok(request) => {
                let again = canonicalize(&request.args).expect("accepted arguments canonicalize");
                assert_eq!(again.hash, request.args_hash);
                if request.unnormalized.is_empty() {
                    let mut twice = serde_json::Value::Object(request.args.clone());
                    assert!(registry.normalize(&request.tool, &mut twice).is_empty());
                    assert_eq!(
                        twice,
                        serde_json::Value::Object(request.args),
                        "normalizing is idempotent"
                    );
                }
            }
            Err(e) => names_a_field(&e, DECIDE),
        }
    } else {
        let Ok(req) = ExecuteRequest::decode(bytes) else { return };
        if let Err(e) = ExecutionReport::from_proto(req, &limits) {
            names_a_field(&e, EXECUTE);
        }
    }
});
