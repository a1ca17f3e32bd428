//! The shape of what toolgate hands a policy — the records of `context` and their attributes,
//! and its two values —
//! and the check, when a policy loads, that every `context` attribute it names exists, so a
//! typo fails at start rather than as an evaluation error at the first request.
//!
//! Cedar's own validator cannot do this here: it needs every record closed, and `context.harness`
//! (the harness's free-form context) and actors' configured attributes are open by design
//! (cedar-policy 4.14 refuses open records and entities in a schema).

use serde_json::Value;

/// The records of `context` and their attributes; `args` and `harness` are free-form.
pub const CONTEXT: [(&str, &[&str]); RECORDS] = [
    ("tool", &["name", "safety", "default_action", "reads", "sends"]),
    ("actor", &["kind", "delegation_chain"]),
    ("resource", &["type", "id", "classification"]),
    ("options", &["allow_write", "allow_bash"]),
    ("plan", &["dry_run", "idempotency_key", "rollback_hint"]),
    ("session", &["id", "task_type", "read_classes"]),
    (
        "facts",
        &[
            "session_calls",
            "session_tool_calls",
            "identical_calls",
            "consecutive_identical",
            "session_denials",
            "actor_calls_last_minute",
            "session_cap",
        ],
    ),
    ("time", &["unix", "hour", "weekday"]),
    ("approval", &["state", "approver", "approver_roles"]),
    ("args_valid", &[]),
    ("args_errors", &[]),
    ("args", &[]),
    ("harness", &[]),
];

const RECORDS: usize = 13;

/// The entries of `context` that are values, not records, and what they hold.
const VALUES: [(&str, &str); 2] = [
    ("args_valid", "whether the arguments match the tool's input_schema (true without one)"),
    ("args_errors", "the set of mismatches, each `args.<path>: <rule>` (empty when valid)"),
];

/// The records that hold free-form attributes: the call's arguments (normalized, as toolgate
/// checked and hashed them), and the harness's own context.
pub(super) const FREE_FORM: [&str; 2] = ["args", "harness"];

/// The shape as text, for `toolgate policy schema`.
pub fn describe() -> String {
    let mut out = String::from(
        "principal: Actor::\"<actor.id>\"  (in Role::\"<role>\" and with attributes, when configured)\n\
         action:    Action::\"<action>\"  (in Action::\"<group>\" for configured action groups)\n\
         resource:  Resource::\"<resource.id>\"\n\ncontext:\n",
    );
    for (record, attributes) in CONTEXT {
        if let Some((_, what)) = VALUES.iter().find(|(name, _)| *name == record) {
            out.push_str(&format!("  {record}: {what}\n"));
        } else if record == "args" {
            out.push_str(&format!(
                "  {record}: the call's arguments, normalized (free-form: test with `has`)\n"
            ));
        } else if FREE_FORM.contains(&record) {
            out.push_str(&format!(
                "  {record}: the request's context_json, the harness's word (free-form: test with `has`)\n"
            ));
        } else {
            out.push_str(&format!("  {record}: {{ {} }}\n", attributes.join(", ")));
        }
    }
    out
}

/// The `context` attributes a policy (in Cedar's JSON form) names that toolgate does not
/// provide, as `context.<record>.<attribute>` paths.
pub fn unknown_attributes(policy: &Value) -> Vec<String> {
    let mut unknown = Vec::new();
    walk(policy, &mut unknown);
    unknown.sort();
    unknown.dedup();
    unknown
}

fn walk(node: &Value, unknown: &mut Vec<String>) {
    match node {
        Value::Object(map) => {
            for (key, value) in map {
                if key == "." || key == "has" {
                    check(value, unknown);
                }
                walk(value, unknown);
            }
        }
        Value::Array(items) => items.iter().for_each(|item| walk(item, unknown)),
        _ => {}
    }
}

/// Checks one attribute access (`{"left": …, "attr": …}`) whose left side is `context` or
/// `context.<record>`.
fn check(access: &Value, unknown: &mut Vec<String>) {
    let (Some(left), Some(attr)) = (access.get("left"), access.get("attr").and_then(Value::as_str))
    else {
        return;
    };
    if is_context(left) {
        if !CONTEXT.iter().any(|(record, _)| *record == attr) {
            unknown.push(format!("context.{attr}"));
        }
        return;
    }
    let record = left.get(".").filter(|inner| inner.get("left").is_some_and(is_context));
    if let Some(record) = record.and_then(|inner| inner.get("attr")).and_then(Value::as_str) {
        let known = CONTEXT.iter().find(|(name, _)| *name == record);
        if let Some((name, attributes)) = known
            && !FREE_FORM.contains(name)
            && !attributes.contains(&attr)
        {
            unknown.push(format!("context.{record}.{attr}"));
        }
    }
}

fn is_context(node: &Value) -> bool {
    node.get("Var").and_then(Value::as_str) == Some("context")
}

/// The records of `context` a policy set reads. Only these are built for a request: a policy
/// cannot tell a record it never names from one that is absent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Used([bool; RECORDS]);

impl Used {
    pub const NONE: Self = Self([false; RECORDS]);
    pub const ALL: Self = Self([true; RECORDS]);

    /// The records a policy (in Cedar's JSON form) reads: those it names as `context.<record>`
    /// or tests with `context has <record>`; all of them when it uses `context` whole.
    pub fn by(policy: &Value) -> Self {
        let mut used = Self::NONE;
        let (mut whole, mut accessed) = (0, 0);
        count(policy, &mut used, &mut whole, &mut accessed);
        if whole > accessed { Self::ALL } else { used }
    }

    /// The records either reads.
    pub fn or(self, other: Self) -> Self {
        Self(std::array::from_fn(|i| self.0[i] || other.0[i]))
    }

    /// Whether `record` is read.
    pub fn contains(self, record: &str) -> bool {
        CONTEXT.iter().zip(self.0).any(|((name, _), used)| used && *name == record)
    }
}

/// Counts the uses of `context` (`whole`), those that access one of its records (`accessed`),
/// and marks the records accessed.
fn count(node: &Value, used: &mut Used, whole: &mut usize, accessed: &mut usize) {
    match node {
        Value::Object(map) => {
            if is_context(node) {
                *whole += 1;
            }
            for (key, value) in map {
                if key == "." || key == "has" {
                    let attr = value.get("attr").and_then(Value::as_str);
                    if let (Some(left), Some(attr)) = (value.get("left"), attr)
                        && is_context(left)
                    {
                        *accessed += 1;
                        if let Some(i) = CONTEXT.iter().position(|(name, _)| *name == attr) {
                            used.0[i] = true;
                        }
                    }
                }
                count(value, used, whole, accessed);
            }
        }
        Value::Array(items) => items.iter().for_each(|item| count(item, used, whole, accessed)),
        _ => {}
    }
}
