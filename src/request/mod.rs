//! Wire requests turned into validated, normalized requests. Everything a policy, the trail or the
//! output processing reads comes from here, already checked against the configured limits; a
//! rejection is a [`FieldError`] naming the field.

mod canonical;
mod decide;
mod execute;
mod filter;
mod verdict;

pub use canonical::{ArgsError, ArgsHasher, CanonicalArgs, canonicalize};
pub use decide::{ActionRequest, Actor, ActorKind, ExecutionPlan, Resource, RunOptions};
pub use execute::{ExecutionReport, ExecutionStatus};
pub use filter::Filter;
pub use verdict::{VerdictRequest, awaited_decision};

/// A request field that is missing, malformed or over its limit.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{field}: {problem}")]
pub struct FieldError {
    /// The field's path in the request, for example `actor.id`.
    pub field: String,
    /// What is wrong with it.
    pub problem: String,
}

impl FieldError {
    /// A problem with a field.
    pub fn new(field: impl Into<String>, problem: impl Into<String>) -> Self {
        Self { field: field.into(), problem: problem.into() }
    }

    fn required(field: &str) -> Self {
        Self::new(field, "required")
    }
}

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

/// Refuses an empty `value`, and one longer than `limit` bytes.
fn required(field: &str, value: &str, limit: usize) -> Result<(), FieldError> {
    if value.is_empty() {
        return Err(FieldError::required(field));
    }
    within(field, value, limit)
}

/// Parses an optional JSON object argument (`args_json`, `context_json`): empty means `{}`.
fn json_object(
    field: &str,
    text: &str,
    limit: usize,
) -> Result<serde_json::Map<String, serde_json::Value>, FieldError> {
    within(field, text, limit)?;
    if text.is_empty() {
        return Ok(serde_json::Map::new());
    }
    match serde_json::from_str(text) {
        Ok(serde_json::Value::Object(map)) => Ok(map),
        Ok(_) => Err(FieldError::new(field, "must be a JSON object")),
        Err(e) => Err(FieldError::new(field, format!("must be a JSON object: {e}"))),
    }
}
