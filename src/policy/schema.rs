//! The Cedar schema of what toolgate hands a policy (`toolgate policy schema`): the entity
//! types, the actions a configuration knows, and the context's records with their types, in
//! Cedar's schema syntax, so that Cedar's validator (and the tools built on it) can check a
//! policy set strictly. Two records cannot be declared: `context.args` and `context.harness`
//! are free-form, and a Cedar schema has no open records. A policy that reads them does not
//! validate against this schema; toolgate checks every other `context` attribute it names at
//! load (`shape::unknown_attributes`).

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write;

use serde_json::Value;

use super::shape::{CONTEXT, FREE_FORM};
use crate::config::Config;
use crate::registry::ToolRegistry;

/// The Cedar type of a `context` attribute (or of a record that is a value).
fn attribute_type(record: &str, attribute: &str) -> &'static str {
    match (record, attribute) {
        ("facts" | "time", _) => "Long",
        ("options", _) | ("plan", "dry_run") | ("args_valid", _) => "Bool",
        ("actor", "delegation_chain")
        | ("approval", "approver_roles")
        | ("args_errors", _)
        | ("tool", "reads")
        | ("session", "read_classes") => "Set<String>",
        _ => "String",
    }
}

/// The Cedar type of a configured actor attribute's value, if Cedar has one for it.
fn value_type(value: &Value) -> Option<String> {
    Some(match value {
        Value::Bool(_) => "Bool".to_owned(),
        Value::Number(n) if n.is_i64() => "Long".to_owned(),
        Value::Number(_) | Value::String(_) => "String".to_owned(),
        Value::Array(items) => format!("Set<{}>", value_type(items.first()?)?),
        Value::Null | Value::Object(_) => return None,
    })
}

/// A Cedar string literal.
fn quoted(text: &str) -> String {
    format!("\"{}\"", text.escape_default())
}

/// An actor attribute with values of two types: a Cedar schema gives each attribute one.
#[derive(Debug, thiserror::Error)]
#[error(
    "[actors] attribute `{0}` has values of two types, {1} and {2}: a Cedar schema gives it one"
)]
pub struct AttributeTypes(String, String, String);

/// The schema for `config` and its tool registry.
pub fn cedar_schema(config: &Config, registry: &ToolRegistry) -> Result<String, AttributeTypes> {
    let mut out = String::from(
        "// toolgate's policy schema (`toolgate policy schema`), for Cedar's validator.\n\
         // context.args (the call's arguments) and context.harness (the harness's context) are\n\
         // free-form: a Cedar schema cannot declare them, so a policy that reads them does not\n\
         // validate against this schema (toolgate checks the rest of `context` at load).\n\n",
    );
    // The actors' attributes, optional: each actor has only its own. (A record-valued one is
    // left out: its shape is each actor's own.)
    let mut attributes: BTreeMap<&str, String> = BTreeMap::new();
    for spec in config.actors.values() {
        for (name, value) in &spec.attributes {
            let Some(kind) = value_type(value) else { continue };
            match attributes.get(name.as_str()) {
                Some(known) if *known != kind => {
                    return Err(AttributeTypes(name.clone(), known.clone(), kind));
                }
                Some(_) => {}
                None => {
                    attributes.insert(name, kind);
                }
            }
        }
    }
    let fields: Vec<String> =
        attributes.iter().map(|(name, kind)| format!("{}?: {kind}", quoted(name))).collect();
    out.push_str("entity Role;\n");
    let _ = writeln!(out, "entity Actor in [Role] {{ {} }};", fields.join(", "));
    out.push_str("entity Resource;\n\n");

    out.push_str("type Context = {\n");
    for (record, attributes) in CONTEXT {
        if FREE_FORM.contains(&record) {
            continue;
        }
        let kind = match attributes.is_empty() {
            true => attribute_type(record, "").to_owned(),
            false => {
                let fields: Vec<String> = attributes
                    .iter()
                    .map(|a| format!("{a}: {}", attribute_type(record, a)))
                    .collect();
                format!("{{ {} }}", fields.join(", "))
            }
        };
        let _ = writeln!(out, "  {record}: {kind},");
    }
    out.push_str("};\n\n");

    // The groups are actions too (a group may be in a group); each action is in the groups
    // that list it, as `directory::entities` makes them.
    let groups = &config.action_groups;
    let within = |action: &str| {
        let parents: Vec<String> = groups
            .iter()
            .filter(|(_, members)| members.iter().any(|m| m == action))
            .map(|(group, _)| quoted(group))
            .collect();
        match parents.is_empty() {
            true => String::new(),
            false => format!(" in [{}]", parents.join(", ")),
        }
    };
    let mut actions: BTreeSet<&str> = registry.actions().collect();
    actions.extend(groups.values().flatten().map(String::as_str));
    for group in groups.keys() {
        actions.remove(group.as_str());
        let _ = writeln!(out, "action {}{};", quoted(group), within(group));
    }
    for action in actions {
        let _ = writeln!(
            out,
            "action {}{} appliesTo {{ principal: [Actor], resource: [Resource], context: Context }};",
            quoted(action),
            within(action)
        );
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use cedar_policy::{PolicySet, Schema, ValidationMode, Validator};

    use super::*;

    fn schema(config: &Config) -> Schema {
        let text = cedar_schema(config, &config.registry().unwrap()).unwrap();
        Schema::from_cedarschema_str(&text).map(|(schema, _)| schema).unwrap_or_else(|e| {
            panic!("{e:?}\n{text}");
        })
    }

    #[test]
    fn the_default_policy_validates_strictly_against_the_default_schema() {
        let schema = schema(&Config::default());
        let policies: PolicySet = include_str!("default.cedar").parse().unwrap();
        let result = Validator::new(schema).validate(&policies, ValidationMode::Strict);
        let errors: Vec<String> = result.validation_errors().map(|e| e.to_string()).collect();
        assert!(errors.is_empty(), "{errors:#?}");
    }

    #[test]
    fn an_attribute_of_two_types_is_refused() {
        let config: Config = toml::from_str(
            "[actors.alice]\nattributes = { level = 3 }\n[actors.bob]\nattributes = { level = \"high\" }\n",
        )
        .unwrap();
        let refused = cedar_schema(&config, &config.registry().unwrap()).unwrap_err();
        assert!(refused.to_string().contains("`level` has values of two types"), "{refused}");
    }

    #[test]
    fn configured_actions_groups_and_attributes_are_in_it_and_a_typo_is_caught() {
        let config: Config = toml::from_str(
            "[tools.deploy]\nsafety = \"bash\"\naction = \"release.deploy\"\n\
             [action_groups]\nreleases = [\"ops\"]\nops = [\"release.deploy\"]\n\
             [actors.alice]\nroles = [\"admin\"]\nattributes = { team = \"payments\", level = 3 }\n",
        )
        .unwrap();
        let policies: PolicySet = "permit(principal in Role::\"admin\", action in Action::\"releases\", resource) \
             when { principal has level && principal.level > 2 && context.facts.session_calls < 5 };\n\
             forbid(principal, action, resource) when { context.tool.safty == \"bash\" };"
            .parse()
            .unwrap();
        let result = Validator::new(schema(&config)).validate(&policies, ValidationMode::Strict);
        let errors: Vec<String> = result.validation_errors().map(|e| e.to_string()).collect();
        // Only the typo, once per action it could apply to.
        assert!(!errors.is_empty());
        assert!(
            errors.iter().all(|e| e.contains("`tool.safty`") && e.contains("policy1")),
            "{errors:#?}"
        );
    }
}
