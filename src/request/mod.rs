//! Wire requests turned into validated, normalized requests. Everything a policy, the trail or the
//! output processing reads comes from here, already checked against the configured limits; a
//! rejection is a `FieldError` (`error::FieldError`) naming the field.

mod canonical;
mod decide;
mod define;
mod execute;
mod filter;
pub mod json;
mod never;
pub mod proof;
mod refused;
mod stored;
mod verdict;

pub use canonical::{ArgsError, ArgsHasher, CanonicalArgs, canonicalize};
pub use decide::{ActionRequest, Actor, ActorKind, ExecutionPlan, Resource, RunOptions};
pub use define::{Definition, ToolDefinitions, instructions_tool, is_instructions};
pub use execute::{ExecutionReport, ExecutionStatus};
pub use filter::{Page, WireFilter};
pub use never::NeverAllowed;
pub use refused::PeerRefusal;
pub use stored::classification;
pub use verdict::{VerdictRequest, WithdrawRequest, awaited_decision};

use crate::error::FieldError;

/// Refuses `value` when it is longer than `limit` bytes.
fn within(field: &str, value: &str, limit: usize) -> Result<(), FieldError> {
    if value.len() > limit {
        return Err(FieldError::new(
            field,
            format!("{} bytes, over the limit of {limit}", value.len()),
        ));
    }
    Ok(())
}

/// Refuses what is not a lower-case hex SHA-256.
fn hash(field: &str, value: &str) -> Result<(), FieldError> {
    let hex = value.len() == 64 && value.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'));
    if hex { Ok(()) } else { Err(FieldError::new(field, "must be a lower-case hex SHA-256")) }
}

/// Refuses an empty `value`, and one longer than `limit` bytes.
fn required(field: &str, value: &str, limit: usize) -> Result<(), FieldError> {
    if value.is_empty() {
        return Err(FieldError::required(field));
    }
    within(field, value, limit)
}

/// The arguments of a HashArgs request, validated as Decide validates its `args_json`.
pub fn hash_args_request(
    args_json: &str,
    limits: &crate::config::Limits,
) -> Result<serde_json::Map<String, serde_json::Value>, FieldError> {
    json_object("args_json", args_json, limits.max_args_bytes)
}

/// Parses an optional JSON object argument (`args_json`, `context_json`), strictly (see
/// [`json`]): empty means `{}`.
fn json_object(
    field: &str,
    text: &str,
    limit: usize,
) -> Result<serde_json::Map<String, serde_json::Value>, FieldError> {
    within(field, text, limit)?;
    if text.is_empty() {
        return Ok(serde_json::Map::new());
    }
    let root = field.strip_suffix("_json").unwrap_or(field);
    json::object(root, text).map_err(|e| FieldError::new(field, e.to_string()))
}
