//! A DecideRequest or an ExecuteRequest from arbitrary bytes, through prost decoding,
//! validation and normalization: never a panic; every refusal names a field of the request;
//! an accepted request's arguments are canonical (canonicalizing them again changes nothing).
#![no_main]

use libfuzzer_sys::fuzz_target;
use prost::Message;
use toolgate::config::Limits;
use toolgate::proto::{DecideRequest, ExecuteRequest};
use toolgate::registry::ToolRegistry;
use toolgate::request::{ActionRequest, ExecutionReport, FieldError, canonicalize};

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

fuzz_target!(|data: &[u8]| {
    let Some((&which, bytes)) = data.split_first() else { return };
    let limits = Limits::default();
    if which % 2 == 0 {
        let Ok(req) = DecideRequest::decode(bytes) else { return };
        match ActionRequest::from_proto(req, &limits, &ToolRegistry::default()) {
            Ok(request) => {
                let again = canonicalize(&request.args).expect("accepted arguments canonicalize");
                assert_eq!(again.hash, request.args_hash);
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
