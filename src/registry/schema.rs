//! A tool's input schema (`[tools.<name>] input_schema`): JSON Schema 2020-12 from a file or
//! inline, compiled once when the registry is built, and a call's mismatches in words that name
//! the argument's path and the rule it breaks, never its value: the trail keeps arguments by
//! hash only, and a reason is stored.

use std::fmt;
use std::sync::Arc;

use jsonschema::{Draft, Validator};
use serde_json::Value;

/// The most mismatches reported for one call.
const MAX_ERRORS: usize = 8;
/// The longest mismatch reported, in characters.
const MAX_ERROR_CHARS: usize = 200;

/// Why a tool's entry (its safety level, input schema or normalizations) cannot be used.
#[derive(Debug, thiserror::Error)]
#[error("tool `{tool}`: {field}: {message}")]
pub struct SchemaError {
    pub tool: String,
    /// `safety`, `input_schema` or `normalize`.
    pub field: &'static str,
    pub message: String,
}

impl SchemaError {
    pub fn new(tool: &str, field: &'static str, message: String) -> Self {
        Self { tool: tool.to_owned(), field, message }
    }
}

/// A compiled input schema.
#[derive(Clone)]
pub struct InputSchema(Arc<Validator>);

impl fmt::Debug for InputSchema {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("InputSchema")
    }
}

impl InputSchema {
    /// Compiles `source`: a path to a JSON file, or the schema itself (a TOML table).
    pub fn compile(tool: &str, source: &Value) -> Result<Self, SchemaError> {
        let error = |message: String| SchemaError::new(tool, "input_schema", message);
        let schema = match source {
            Value::String(path) => {
                let text = std::fs::read_to_string(path)
                    .map_err(|e| error(format!("cannot read `{path}`: {e}")))?;
                serde_json::from_str(&text)
                    .map_err(|e| error(format!("`{path}` is not JSON: {e}")))?
            }
            Value::Object(_) => source.clone(),
            _ => return Err(error("must be a file's path or an inline table".into())),
        };
        let validator = jsonschema::options()
            .with_draft(Draft::Draft202012)
            .build(&schema)
            .map_err(|e| error(format!("not a valid JSON Schema: {e}")))?;
        Ok(Self(Arc::new(validator)))
    }

    /// How `args` breaks the schema: nothing when they match, else up to eight mismatches,
    /// each `args.<path>: <rule>` with the value left out.
    pub fn mismatches(&self, args: &Value) -> Vec<String> {
        if self.0.is_valid(args) {
            return Vec::new();
        }
        self.0
            .iter_errors(args)
            .take(MAX_ERRORS)
            .map(|e| {
                let rule = e.masked_with("the value").to_string();
                let rule: String = rule.chars().take(MAX_ERROR_CHARS).collect();
                format!("{}: {rule}", path(e.instance_path().as_str()))
            })
            .collect()
    }
}

/// A JSON pointer into the arguments as `args.a.b` (`args` for the whole object).
fn path(pointer: &str) -> String {
    let mut path = String::from("args");
    for token in pointer.split('/').skip(1) {
        path.push('.');
        path.push_str(&token.replace("~1", "/").replace("~0", "~"));
    }
    path
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn schema() -> InputSchema {
        let source = json!({
            "type": "object",
            "required": ["path", "mode"],
            "properties": {
                "path": {"type": "string", "pattern": "^/workspace/"},
                "mode": {"enum": ["append", "replace"]},
                "lines": {"type": "array", "items": {"type": "integer"}},
            },
        });
        InputSchema::compile("write", &source).unwrap()
    }

    #[test]
    fn mismatches_name_the_path_and_the_rule_but_never_the_value() {
        let schema = schema();
        assert!(schema.mismatches(&json!({"path": "/workspace/a", "mode": "append"})).is_empty());
        let errors = schema.mismatches(&json!({"path": "/etc/passwd", "lines": [1, "x"]}));
        assert_eq!(
            errors,
            [
                "args: \"mode\" is a required property",
                "args.path: the value does not match \"^/workspace/\"",
                "args.lines.1: the value is not of type \"integer\"",
            ]
        );
        assert!(!errors.concat().contains("passwd"));
    }

    #[test]
    fn a_broken_schema_or_file_is_refused_with_its_tool() {
        let err = InputSchema::compile("w", &json!({"type": "no-such-type"})).unwrap_err();
        assert!(
            err.to_string().starts_with("tool `w`: input_schema: not a valid JSON Schema"),
            "{err}"
        );
        let err = InputSchema::compile("w", &json!("/nonexistent/schema.json")).unwrap_err();
        assert!(err.to_string().contains("cannot read `/nonexistent/schema.json`"), "{err}");
        assert!(InputSchema::compile("w", &json!(3)).is_err());
    }
}
