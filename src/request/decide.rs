//! The normalized action request of a Decide call: who acts, with which tool and verb, on what,
//! with which arguments (kept only as their hash once it leaves toolgate), options and plan.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::{canonicalize, json_object, required, within};

use crate::config::Limits;
use crate::error::FieldError;
use crate::proto;
use crate::registry::{ToolRegistry, ToolSpec};
use crate::trail::{Kind, Record};

/// The most actors a delegation chain may name.
const MAX_DELEGATION_DEPTH: usize = 32;

/// The most mismatches a harness may report, and the longest.
const MAX_ARGS_ERRORS: usize = 64;
const MAX_ARGS_ERROR_BYTES: usize = 1024;

/// A validated Decide request. Its decision event holds it whole but for the raw arguments,
/// which are replaced by their hash: in the event's columns and its `request` cell
/// ([`ActionRequest::stored`]), from which `policy replay` and the approvals' rebuild read it
/// back ([`ActionRequest::from_trail`]).
#[derive(Debug, Clone, PartialEq)]
pub struct ActionRequest {
    pub session_id: String,
    /// `default` when the caller named none.
    pub task_type: String,
    pub actor: Actor,
    pub tool: String,
    /// The registry's default action for the tool when the caller named none.
    pub action: String,
    pub resource: Resource,
    /// The arguments, parsed and normalized by the registry; never stored.
    pub args: Map<String, Value>,
    /// Hex SHA-256 of the RFC 8785 canonical arguments.
    pub args_hash: String,
    /// The arguments as sent, when normalizing changed them; never stored.
    pub raw_args: Option<Map<String, Value>>,
    /// The hash of [`Self::raw_args`], when `[args_hash] raw` asks for it: kept in the
    /// decision's `request` cell.
    pub raw_args_hash: Option<String>,
    /// The harness's `context_json`.
    pub context: Map<String, Value>,
    pub options: RunOptions,
    pub plan: ExecutionPlan,
    /// How the arguments break the tool's normalizations or input schema
    /// (`args.<path>: <rule>`); empty when they match, or the tool has neither.
    pub args_errors: Vec<String>,
    /// The values the tool's normalizations could not normalize (also in `args_errors`): a
    /// call with any is denied, whatever the policy says.
    pub unnormalized: Vec<String>,
    /// The hash of the tool's definition the caller was shown (`DefineTools`); empty when none.
    pub tool_definition: String,
    /// Who asked, with auth on (`auth::Caller::id`): a token's id, `cert:<name>`, a SPIFFE ID
    /// or `jwt:<issuer>#<subject>`; kept in the decision's `request` cell.
    pub identity: Option<String>,
}

impl ActionRequest {
    /// A trail record of `kind` about the decision `decision_id`, carrying this call's who,
    /// what and where, so that an auditor filtering by session or actor finds it.
    pub fn record(&self, kind: Kind, decision_id: &str) -> Record {
        Record {
            decision_id: Some(decision_id.to_owned()),
            session_id: Some(self.session_id.clone()),
            task_type: Some(self.task_type.clone()),
            actor_id: Some(self.actor.id.clone()),
            actor_kind: Some(self.actor.kind.as_str().to_owned()),
            tool: Some(self.tool.clone()),
            action: Some(self.action.clone()),
            resource_type: Some(self.resource.kind.clone()),
            resource_id: Some(self.resource.id.clone()),
            args_hash: Some(self.args_hash.clone()),
            ..Record::new(kind)
        }
    }
}

/// Who acts.
#[derive(Debug, Clone, PartialEq)]
pub struct Actor {
    pub id: String,
    pub kind: ActorKind,
    pub delegation_chain: Vec<String>,
}

/// The kinds of actor.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ActorKind {
    User,
    Agent,
    Subagent,
}

impl ActorKind {
    /// The name policies and the trail use.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::User => "user",
            Self::Agent => "agent",
            Self::Subagent => "subagent",
        }
    }

    /// The kind of this name; `None` for a name that is none.
    pub fn named(name: &str) -> Option<Self> {
        [Self::User, Self::Agent, Self::Subagent].into_iter().find(|k| k.as_str() == name)
    }
}

/// What the call acts on; empty strings where the caller said nothing.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Resource {
    pub kind: String,
    pub id: String,
    /// `public`, `internal`, `confidential`, `secret`, or empty.
    pub classification: String,
}

/// Run options granted by the harness. Stored with the fields at their default left out.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct RunOptions {
    #[serde(skip_serializing_if = "is_false")]
    pub allow_write: bool,
    #[serde(skip_serializing_if = "is_false")]
    pub allow_bash: bool,
    /// `None` when the caller left it to the server.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_output_chars: Option<u32>,
}

/// How the harness plans to run the call. Stored with the fields at their default left out.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct ExecutionPlan {
    #[serde(skip_serializing_if = "is_false")]
    pub dry_run: bool,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub idempotency_key: String,
    /// `None` when the caller left it to the server.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub timeout_ms: Option<u32>,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub rollback_hint: String,
}

fn is_false(value: &bool) -> bool {
    !value
}

const CLASSIFICATIONS: [&str; 4] = ["public", "internal", "confidential", "secret"];

impl ActionRequest {
    /// The largest Decide request that can be valid: its arguments, context and every name at
    /// their limits. A bigger message is refused before it is read.
    pub fn max_bytes(limits: &Limits) -> usize {
        limits.max_args_bytes + limits.max_context_bytes + 64 * limits.max_name_bytes
    }
}

impl ActionRequest {
    /// Validates and normalizes a Decide request.
    pub fn from_proto(
        req: proto::DecideRequest,
        limits: &Limits,
        registry: &ToolRegistry,
    ) -> Result<Self, FieldError> {
        let name = limits.max_name_bytes;
        required("session_id", &req.session_id, name)?;
        within("task_type", &req.task_type, name)?;
        let actor = actor(req.actor, name)?;
        required("tool", &req.tool, name)?;
        within("action", &req.action, name)?;
        let mut resource = resource(req.resource.unwrap_or_default(), name)?;
        let mut args =
            Value::Object(json_object("args_json", &req.args_json, limits.max_args_bytes)?);
        let raw = registry.normalizes(&req.tool).then(|| args.clone());
        let (unnormalized, mismatches) = registry.check(&req.tool, &mut args);
        let mut args_errors = unnormalized.clone();
        args_errors.extend(mismatches);
        if req.args_errors.len() > MAX_ARGS_ERRORS {
            return Err(FieldError::new("args_errors", format!("at most {MAX_ARGS_ERRORS}")));
        }
        for (i, error) in req.args_errors.iter().enumerate() {
            within(&format!("args_errors[{i}]"), error, MAX_ARGS_ERROR_BYTES)?;
        }
        args_errors.extend(req.args_errors);
        if let Some(spec) = registry.get(&req.tool) {
            let sent = raw.as_ref().unwrap_or(&args);
            named_by_registry(&mut resource, &req.tool, spec, &args, sent)?;
        }
        let Value::Object(args) = args else {
            return Err(FieldError::new("args_json", "not an object"));
        };
        let args_hash =
            canonicalize(&args).map_err(|e| FieldError::new("args_json", e.to_string()))?.hash;
        let raw_args = match raw {
            Some(Value::Object(raw)) if raw != args => Some(raw),
            _ => None,
        };
        if !req.tool_definition.is_empty() {
            super::hash("tool_definition", &req.tool_definition)?;
        }
        let context = json_object("context_json", &req.context_json, limits.max_context_bytes)?;
        let options = req.options.unwrap_or_default();
        let plan = req.plan.unwrap_or_default();
        within("plan.idempotency_key", &plan.idempotency_key, name)?;
        within("plan.rollback_hint", &plan.rollback_hint, name)?;

        let action = action_of(registry, &req.tool, req.action, "action")?;
        let task_type = if req.task_type.is_empty() { "default".to_owned() } else { req.task_type };
        Ok(Self {
            session_id: req.session_id,
            task_type,
            actor,
            tool: req.tool,
            action,
            resource,
            args,
            args_hash,
            raw_args,
            raw_args_hash: None,
            context,
            options: RunOptions {
                allow_write: options.allow_write,
                allow_bash: options.allow_bash,
                max_output_chars: nonzero(options.max_output_chars),
            },
            plan: ExecutionPlan {
                dry_run: plan.dry_run,
                idempotency_key: plan.idempotency_key,
                timeout_ms: nonzero(plan.timeout_ms),
                rollback_hint: plan.rollback_hint,
            },
            args_errors,
            unnormalized,
            tool_definition: req.tool_definition,
            identity: None,
        })
    }
}

pub(super) fn actor(actor: Option<proto::Actor>, limit: usize) -> Result<Actor, FieldError> {
    let Some(actor) = actor else {
        return Err(FieldError::required("actor.id"));
    };
    required("actor.id", &actor.id, limit)?;
    let kind = match actor.kind.as_str() {
        "" => ActorKind::Agent,
        name => ActorKind::named(name).ok_or_else(|| {
            FieldError::new(
                "actor.kind",
                format!("must be `user`, `agent` or `subagent`, not `{}`", truncated(name)),
            )
        })?,
    };
    if actor.delegation_chain.len() > MAX_DELEGATION_DEPTH {
        return Err(FieldError::new(
            "actor.delegation_chain",
            format!(
                "{} actors, over the limit of {MAX_DELEGATION_DEPTH}",
                actor.delegation_chain.len()
            ),
        ));
    }
    for (i, link) in actor.delegation_chain.iter().enumerate() {
        required(&format!("actor.delegation_chain[{i}]"), link, limit)?;
    }
    Ok(Actor { id: actor.id, kind, delegation_chain: actor.delegation_chain })
}

/// The action of a call of `tool`: the registry's for a registered tool, which a request may
/// name but not contradict (the policy is written against it, so the caller must not choose
/// it); the request's own, or the tool's name, for any other.
pub(super) fn action_of(
    registry: &ToolRegistry,
    tool: &str,
    named: String,
    field: &str,
) -> Result<String, FieldError> {
    match registry.get(tool) {
        Some(spec) if named.is_empty() || named == spec.action => Ok(spec.action.clone()),
        Some(spec) => Err(FieldError::new(
            field,
            format!(
                "the registry's action for `{}` is `{}`, not `{}`: leave it empty or name that one",
                truncated(tool),
                spec.action,
                truncated(&named)
            ),
        )),
        None if named.is_empty() => Ok(tool.to_owned()),
        None => Ok(named),
    }
}

/// The resource as the registry says a tool's calls name it (`resource_type`, `resource_from`),
/// over the harness's word. A resource id the harness sent for the same kind of resource that
/// is neither the argument `resource_from` points at (as sent, or as normalized) is refused:
/// the harness may not say the call acts on something other than what its arguments name.
fn named_by_registry(
    resource: &mut Resource,
    tool: &str,
    spec: &ToolSpec,
    args: &Value,
    sent: &Value,
) -> Result<(), FieldError> {
    let id = |value: Option<&Value>| match value {
        Some(Value::String(id)) => id.clone(),
        Some(Value::Number(n)) => n.to_string(),
        _ => String::new(),
    };
    if let Some(pointer) = &spec.resource_from {
        let derived = id(args.pointer(pointer));
        let same_kind = resource.kind.is_empty()
            || spec.resource_type.as_ref().is_none_or(|t| *t == resource.kind);
        let contradicts = same_kind
            && !resource.id.is_empty()
            && resource.id != derived
            && resource.id != id(sent.pointer(pointer));
        if contradicts {
            return Err(FieldError::new(
                "resource.id",
                format!(
                    "contradicts the argument `{pointer}`, which names the resource of `{}` \
                     (resource_from): leave it empty or send that argument's value",
                    truncated(tool)
                ),
            ));
        }
        resource.id = derived;
    }
    if let Some(kind) = &spec.resource_type {
        resource.kind.clone_from(kind);
    }
    Ok(())
}

fn resource(resource: proto::Resource, limit: usize) -> Result<Resource, FieldError> {
    within("resource.type", &resource.r#type, limit)?;
    within("resource.id", &resource.id, limit)?;
    let classification = resource.classification;
    if !classification.is_empty() && !CLASSIFICATIONS.contains(&classification.as_str()) {
        return Err(FieldError::new(
            "resource.classification",
            format!(
                "must be `public`, `internal`, `confidential` or `secret`, not `{}`",
                truncated(&classification)
            ),
        ));
    }
    Ok(Resource { kind: resource.r#type, id: resource.id, classification })
}

fn nonzero(value: u32) -> Option<u32> {
    (value != 0).then_some(value)
}

/// At most 64 characters of an echoed bad value, so an error message stays short.
fn truncated(value: &str) -> String {
    value.chars().take(64).collect()
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;

    /// A plain Decide request: a session, an actor, a registered tool and its arguments.
    pub(in crate::request) fn request() -> proto::DecideRequest {
        proto::DecideRequest {
            session_id: "s1".into(),
            actor: Some(proto::Actor { id: "alice".into(), ..Default::default() }),
            tool: "read".into(),
            args_json: r#"{"path":"README.md"}"#.into(),
            ..Default::default()
        }
    }

    fn normalize(req: proto::DecideRequest) -> Result<ActionRequest, FieldError> {
        ActionRequest::from_proto(req, &Limits::default(), &ToolRegistry::default())
    }

    #[test]
    fn empty_action_takes_the_registry_default() {
        let req = normalize(request()).unwrap();
        assert_eq!(req.action, "fs.read");
        assert_eq!(req.task_type, "default");
        assert_eq!(req.actor.kind, ActorKind::Agent);
    }

    #[test]
    fn mismatches_the_harness_found_are_counted_with_the_registrys() {
        let mut req = request();
        req.args_errors = vec!["args.message: the value is not of type \"string\"".into()];
        assert_eq!(normalize(req).unwrap().args_errors.len(), 1);
    }

    #[test]
    fn the_registry_names_the_resource_over_the_harness() {
        let mut registry = ToolRegistry::default();
        let spec = ToolSpec {
            safety: crate::registry::Safety::Write,
            action: "fs.write".into(),
            resource_type: Some("file".into()),
            resource_from: Some("/target/path".into()),
            input_schema: None,
            normalize: Default::default(),
            root: None,
            reads: Vec::new(),
            sends: None,
        };
        registry.insert("write", spec).unwrap();
        let decide = |args: &str| {
            let mut req = request();
            req.tool = "write".into();
            req.args_json = args.into();
            req.resource = Some(proto::Resource {
                r#type: "x".into(),
                id: "/tmp/harmless".into(),
                ..Default::default()
            });
            ActionRequest::from_proto(req, &Limits::default(), &registry).unwrap().resource
        };
        let named = decide(r#"{"target": {"path": "/etc/passwd"}}"#);
        assert_eq!((named.kind.as_str(), named.id.as_str()), ("file", "/etc/passwd"));
        assert_eq!(decide(r#"{"target": {"path": 7}}"#).id, "7");
        assert_eq!(decide(r#"{"other": 1}"#).id, "", "a missing argument names no resource");
    }

    #[test]
    fn each_rejection_names_its_field() {
        type Mutation = fn(&mut proto::DecideRequest);
        let cases: Vec<(&str, Mutation)> = vec![
            ("session_id", |r| r.session_id.clear()),
            ("actor.id", |r| r.actor = None),
            ("actor.kind", |r| r.actor.as_mut().unwrap().kind = "robot".into()),
            ("tool", |r| r.tool.clear()),
            ("args_json", |r| r.args_json = "[1,2]".into()),
            ("context_json", |r| r.context_json = "not json".into()),
            ("resource.classification", |r| {
                r.resource =
                    Some(proto::Resource { classification: "top".into(), ..Default::default() })
            }),
            ("action", |r| r.action = "x".repeat(1025)),
            ("args_errors", |r| r.args_errors = vec!["e".into(); 65]),
            ("args_errors[1]", |r| r.args_errors = vec!["e".into(), "e".repeat(1025)]),
            ("tool_definition", |r| r.tool_definition = "x".into()),
        ];
        for (field, mutate) in cases {
            let mut req = request();
            mutate(&mut req);
            assert_eq!(normalize(req).unwrap_err().field, field);
        }
    }
}
