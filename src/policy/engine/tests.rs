use super::*;
use crate::config::Limits;
use crate::proto;

fn request(tool: &str, allow_write: bool) -> ActionRequest {
    let req = proto::DecideRequest {
        session_id: "s".into(),
        actor: Some(proto::Actor { id: "alice".into(), ..Default::default() }),
        tool: tool.into(),
        options: Some(proto::RunOptions { allow_write, ..Default::default() }),
        ..Default::default()
    };
    ActionRequest::from_proto(req, &Limits::default(), &ToolRegistry::default()).unwrap()
}

fn evaluate(engine: &PolicyEngine, tool: &str, allow_write: bool) -> Verdict {
    engine.evaluate(&request(tool, allow_write), &ToolRegistry::default(), &Observed::default())
}

#[test]
fn the_embedded_policy_allows_reads_and_names_itself() {
    let verdict = evaluate(&PolicyEngine::embedded(), "read", false);
    assert_eq!(verdict.outcome, Outcome::Allow);
    assert_eq!(verdict.policy_ids, ["default.permit_registered_tools"]);
    assert_eq!(verdict.reason, "registered read_only tool: read");
}

#[test]
fn a_forbid_gives_its_reason() {
    let verdict = evaluate(&PolicyEngine::embedded(), "write", false);
    assert_eq!(verdict.outcome, Outcome::Deny);
    assert_eq!(verdict.reason, "tool requires allow_write=true: write");
    assert_eq!(verdict.policy_ids, ["default.write_requires_allow_write"]);
}

#[test]
fn a_reason_never_has_a_hole_where_a_value_is_empty() {
    let engine = PolicyEngine::parse(
        "t",
        "@id(\"p\") @reason(\"a deploy to {resource} in {task_type}\") forbid(principal, action, resource);",
    )
    .unwrap();
    let verdict = evaluate(&engine, "read", false);
    assert_eq!(verdict.reason, "a deploy to (none) in default");
}

#[test]
fn nothing_permitted_is_told_apart_from_forbidden() {
    let engine =
        PolicyEngine::parse("t", "permit(principal, action, resource) when { false };").unwrap();
    let verdict = evaluate(&engine, "read", false);
    assert_eq!(verdict.outcome, Outcome::Deny);
    assert!(verdict.reason.starts_with("not permitted:"), "{}", verdict.reason);
    assert!(verdict.policy_ids.is_empty());
}

#[test]
fn policies_without_id_are_named_by_source_and_position() {
    let engine = PolicyEngine::parse(
        "team.cedar",
        "permit(principal, action, resource) when { false };\n\
         forbid(principal, action, resource);",
    )
    .unwrap();
    assert_eq!(evaluate(&engine, "read", false).policy_ids, ["team.cedar#1"]);
}

#[test]
fn an_evaluation_error_denies_with_the_error() {
    let engine = PolicyEngine::parse(
        "t",
        "@id(\"p\") permit(principal, action, resource) when { context.harness.missing == 1 };",
    )
    .unwrap();
    let verdict = evaluate(&engine, "read", false);
    assert_eq!(verdict.outcome, Outcome::Deny);
    assert!(verdict.reason.starts_with("policy evaluation error:"), "{}", verdict.reason);
    assert_eq!(verdict.policy_ids, ["p"]);
}

#[test]
fn duplicate_ids_and_syntax_errors_are_refused() {
    let dup = "@id(\"a\") permit(principal, action, resource);\n\
               @id(\"a\") forbid(principal, action, resource);";
    assert!(matches!(PolicyEngine::parse("t", dup), Err(PolicyError::DuplicateId { .. })));
    assert!(matches!(PolicyEngine::parse("t", "permit("), Err(PolicyError::Parse { .. })));
}

#[test]
fn outcome_annotations_are_checked_when_the_policy_loads() {
    let bad = [
        "@outcome(\"maybe\") forbid(principal, action, resource);",
        "@outcome(\"dry_run\") permit(principal, action, resource);",
        "@outcome(\"rewrite\") forbid(principal, action, resource);",
        "@outcome(\"rewrite\") @rewrite(\"[1]\") forbid(principal, action, resource);",
        "@rewrite(\"{}\") forbid(principal, action, resource);",
    ];
    for text in bad {
        let result = PolicyEngine::parse("t", text);
        assert!(matches!(result, Err(PolicyError::Annotation { .. })), "{text}: {result:?}");
    }
}

#[test]
fn the_most_restrictive_annotated_outcome_wins() {
    let engine = PolicyEngine::parse(
        "t",
        "permit(principal, action, resource);\n\
         @id(\"r\") @outcome(\"rewrite\") @rewrite(\"{\\\"a\\\":1}\") forbid(principal, action, resource);\n\
         @id(\"d\") @outcome(\"dry_run\") forbid(principal, action, resource);",
    )
    .unwrap();
    let verdict = evaluate(&engine, "read", false);
    assert_eq!(verdict.outcome, Outcome::DryRun);
    assert_eq!(verdict.policy_ids, ["r", "d"]);
    assert!(verdict.patches.is_empty());
}

#[test]
fn configured_roles_attributes_and_action_groups_are_visible_to_policies() {
    let config: crate::config::Config = toml::from_str(
        "[actors.alice]\nroles = [\"admin\"]\nattributes = { team = \"payments\", level = 3 }\n\
         [action_groups]\nreads = [\"fs.read\", \"fs.list\"]\n",
    )
    .unwrap();
    let text = "@id(\"admins\") permit (principal in Role::\"admin\", action in Action::\"reads\", resource)\n\
                when { principal.team == \"payments\" && principal.level > 2 };";
    let engine = PolicyEngine::parse("t", text)
        .unwrap()
        .with_entities(crate::policy::entities(&config).unwrap());
    let read = evaluate(&engine, "read", false);
    let grep = evaluate(&engine, "grep", false);
    assert_eq!(
        (read.outcome, read.policy_ids.as_slice()),
        (Outcome::Allow, &["admins".to_owned()][..])
    );
    assert_eq!(grep.outcome, Outcome::Deny, "fs.search is not in the group");
    let mut bob = request("read", false);
    bob.actor.id = "bob".into();
    let bob = engine.evaluate(&bob, &ToolRegistry::default(), &Observed::default());
    assert_eq!(bob.outcome, Outcome::Deny, "an unconfigured actor has no role");
}

#[test]
fn the_time_of_the_call_is_in_the_context() {
    let engine = PolicyEngine::parse(
        "t",
        "@id(\"weekdays\") permit (principal, action, resource) when { context.time.weekday < 5 && context.time.hour >= 8 };",
    )
    .unwrap();
    let at = |rfc3339: &str| Observed {
        at_us: chrono::DateTime::parse_from_rfc3339(rfc3339).unwrap().timestamp_micros(),
        ..Observed::default()
    };
    let req = request("read", false);
    let registry = ToolRegistry::default();
    // 2026-11-30 is a Monday.
    let monday = engine.evaluate(&req, &registry, &at("2026-11-30T09:00:00Z"));
    let sunday = engine.evaluate(&req, &registry, &at("2026-11-29T09:00:00Z"));
    let early = engine.evaluate(&req, &registry, &at("2026-11-30T07:59:59Z"));
    assert_eq!(
        (monday.outcome, sunday.outcome, early.outcome),
        (Outcome::Allow, Outcome::Deny, Outcome::Deny)
    );
}

#[test]
fn the_registry_entry_of_the_tool_is_visible() {
    let engine = PolicyEngine::parse(
        "t",
        "@id(\"p\") permit (principal, action, resource) when { context.tool.default_action == \"fs.edit\" && context.tool.safety == \"write\" };",
    )
    .unwrap();
    assert_eq!(evaluate(&engine, "edit", false).outcome, Outcome::Allow);
    assert_eq!(evaluate(&engine, "write", false).outcome, Outcome::Deny);
}

#[test]
fn a_misspelled_context_attribute_fails_when_the_policy_loads() {
    let typo =
        "@id(\"p\") forbid (principal, action, resource) when { context.tool.safty == \"bash\" };";
    let bad_record = "@id(\"q\") forbid (principal, action, resource) when { context has tools };";
    let free_form = "@id(\"r\") forbid (principal, action, resource) when { context.harness has anything && context.harness.anything == 1 };";
    let err =
        PolicyEngine::parse("t.cedar", &format!("permit (principal, action, resource);\n\n{typo}"))
            .unwrap_err()
            .to_string();
    assert!(err.contains("policy `p`: toolgate provides no"), "{err}");
    // The place of the typo itself, not the policy's first line.
    assert!(err.contains("--> t.cedar:3:54"), "{err}");
    assert!(err.contains("`context.tool.safty`"), "{err}");
    assert!(
        PolicyEngine::parse("t", bad_record).unwrap_err().to_string().contains("`context.tools`")
    );
    assert!(PolicyEngine::parse("t", free_form).is_ok());
}

#[test]
fn the_shape_lists_exactly_what_the_context_holds() {
    let req = request("read", false);
    let registry = ToolRegistry::default();
    let context =
        super::super::context::build(&req, &registry, &Observed::default(), None, Used::ALL)
            .unwrap();
    for (record, attributes) in super::super::shape::CONTEXT {
        if record.starts_with("args_") {
            assert!(context.get(record).is_some(), "context.{record}");
            continue;
        }
        let Some(cedar_policy::EvalResult::Record(value)) = context.get(record) else {
            panic!("context.{record} is not a record")
        };
        if !matches!(record, "harness" | "args") {
            let mut keys: Vec<_> = value.iter().map(|(k, _)| k.as_str()).collect();
            let mut expected = attributes.to_vec();
            keys.sort_unstable();
            expected.sort_unstable();
            assert_eq!(keys, expected, "context.{record}");
        }
    }
}

#[test]
fn the_version_is_the_sha256_of_the_text() {
    let engine = PolicyEngine::parse("t", "").unwrap();
    assert_eq!(
        engine.version(),
        "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
    );
}
