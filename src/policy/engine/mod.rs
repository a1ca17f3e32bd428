//! A loaded policy set and its evaluation.

use std::collections::HashMap;
use std::path::Path;
use std::str::FromStr;
use std::sync::Arc;

use cedar_policy::{
    Authorizer, Decision, Effect, Entities, EntityId, EntityTypeName, EntityUid, Policy, PolicyId,
    PolicySet, Request, RequestBuilder,
};
use sha2::{Digest, Sha256};

use super::annotations::{outcome_annotations, render};
use super::diagnostic;
use super::shape::Used;
use super::slice::Slices;
use super::{Grant, context};
use crate::registry::{Safety, ToolRegistry};
use crate::request::{ActionRequest, Actor, RunOptions};
use crate::state::facts::Observed;
use crate::trail::Outcome;

/// The embedded default policy.
const DEFAULT_POLICY: &str = include_str!("../default.cedar");

/// Why a policy set could not be loaded.
#[derive(Debug, thiserror::Error)]
pub enum PolicyError {
    #[error("cannot read policy file `{path}`: {source}")]
    Read { path: String, source: std::io::Error },
    /// Cedar refused the text: each of its diagnostics rendered (see `diagnostic`).
    #[error("{rendered}")]
    Parse { source_name: String, rendered: String },
    #[error("duplicate policy id `{id}` in `{source_name}`")]
    DuplicateId { source_name: String, id: String },
    /// A policy Cedar took and toolgate refuses (an attribute it does not provide, an
    /// annotation it cannot follow), rendered at its place.
    #[error("{rendered}")]
    Annotation { source_name: String, id: String, rendered: String },
    #[error("invalid actors or action groups in the configuration: {0}")]
    Directory(String),
    /// A tool's input schema, which loads and reloads with the policy.
    #[error(transparent)]
    Schema(#[from] crate::registry::SchemaError),
}

/// The answer of a policy set to one request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Verdict {
    pub outcome: Outcome,
    /// Why, in words fit for the model and the auditor.
    pub reason: String,
    /// The authors' ids of the policies that determined the outcome.
    pub policy_ids: Vec<String>,
    /// With [`Outcome::Rewrite`]: the JSON merge patches (RFC 7386) to apply to the arguments,
    /// in policy order.
    pub patches: Vec<serde_json::Value>,
}

/// What toolgate keeps of each policy besides Cedar's own form.
#[derive(Debug)]
struct Meta {
    /// Position in the source, to report several policies in the order they were written.
    position: usize,
    /// The `@reason` annotation, a template (see [`render`]).
    reason: Option<String>,
    /// The `@outcome` annotation of a forbid: what a match turns the denial into.
    outcome: Option<Outcome>,
    /// The `@rewrite` annotation: a JSON merge patch over the arguments.
    patch: Option<serde_json::Value>,
}

/// A policy set ready to evaluate requests.
#[derive(Debug)]
pub struct PolicyEngine {
    set: PolicySet,
    meta: HashMap<PolicyId, Meta>,
    version: String,
    source_name: String,
    /// Configured actors and action groups (see [`super::entities`]); empty by default.
    entities: Arc<Entities>,
    authorizer: Authorizer,
    /// The context records the policies read: only these are built.
    used: Used,
    /// The policies that can match each (actor, action) seen so far.
    slices: Slices,
    actor_type: EntityTypeName,
    action_type: EntityTypeName,
    resource_type: EntityTypeName,
}

impl PolicyEngine {
    /// The embedded default policy.
    #[allow(clippy::expect_used)] // see the INVARIANT inside
    pub fn embedded() -> Self {
        // INVARIANT: the embedded policy is parsed by the unit tests below.
        Self::parse("embedded:default.cedar", DEFAULT_POLICY).expect("the default policy parses")
    }

    /// The policy a server runs with: the file at `path` (the embedded default when `None`),
    /// evaluating with the configured actors and action groups.
    pub fn load(path: Option<&Path>, entities: Arc<Entities>) -> Result<Self, PolicyError> {
        let engine = match path {
            Some(path) => Self::from_file(path)?,
            None => Self::embedded(),
        };
        Ok(engine.with_entities(entities))
    }

    /// Loads a policy file.
    pub fn from_file(path: &Path) -> Result<Self, PolicyError> {
        let text = std::fs::read_to_string(path)
            .map_err(|source| PolicyError::Read { path: path.display().to_string(), source })?;
        Self::parse(&path.display().to_string(), &text)
    }

    /// Parses a policy set. Each policy's id is its `@id` annotation, or else
    /// `<source_name>#<n>` for the n-th policy of the source (from 0).
    #[allow(clippy::expect_used)] // see the INVARIANT inside
    pub fn parse(source_name: &str, text: &str) -> Result<Self, PolicyError> {
        let parse_error = |message: String| PolicyError::Parse {
            source_name: source_name.to_owned(),
            rendered: diagnostic::render(source_name, text, &message, None, None, None),
        };
        let parsed = PolicySet::from_str(text).map_err(|errors| {
            let rendered: Vec<String> =
                errors.iter().map(|e| diagnostic::cedar(source_name, text, e)).collect();
            PolicyError::Parse {
                source_name: source_name.to_owned(),
                rendered: rendered.join("\n\n"),
            }
        })?;
        if parsed.templates().next().is_some() {
            return Err(parse_error("policy templates are not supported".to_owned()));
        }
        // Cedar names the policies of a text `policy0`, `policy1`… in the order written.
        let mut policies: Vec<_> = parsed
            .policies()
            .map(|p| {
                let n = p.id().to_string().trim_start_matches("policy").parse::<usize>();
                (n.unwrap_or(usize::MAX), p)
            })
            .collect();
        policies.sort_by_key(|(n, _)| *n);

        let mut set = PolicySet::new();
        let mut meta = HashMap::new();
        let mut used = Used::NONE;
        for (position, (_, policy)) in policies.into_iter().enumerate() {
            let id = match policy.annotation("id") {
                Some(id) => id.to_owned(),
                None => format!("{source_name}#{position}"),
            };
            let policy_id = PolicyId::new(&id);
            if meta.contains_key(&policy_id) {
                return Err(PolicyError::DuplicateId { source_name: source_name.to_owned(), id });
            }
            let (reads, read) = read(source_name, text, (&id, position), policy)?;
            used = used.or(reads);
            set.add(policy.new_id(policy_id.clone())).map_err(|e| parse_error(e.to_string()))?;
            meta.insert(policy_id, read);
        }
        let type_name = |name: &str| {
            // INVARIANT: the three names are valid Cedar identifiers.
            EntityTypeName::from_str(name).expect("valid entity type name")
        };
        Ok(Self {
            set,
            meta,
            version: hex::encode(Sha256::digest(text.as_bytes())),
            source_name: source_name.to_owned(),
            entities: Arc::new(Entities::empty()),
            authorizer: Authorizer::new(),
            used,
            slices: Slices::default(),
            actor_type: type_name("Actor"),
            action_type: type_name("Action"),
            resource_type: type_name("Resource"),
        })
    }

    /// The engine, evaluating with these configured actors and action groups.
    pub fn with_entities(mut self, entities: Arc<Entities>) -> Self {
        self.entities = entities;
        self.slices.clear();
        self
    }

    /// Hex SHA-256 of the policy text: the version recorded with every decision.
    pub fn version(&self) -> &str {
        &self.version
    }

    /// Where the policy came from: a file path or `embedded:default.cedar`.
    pub fn source_name(&self) -> &str {
        &self.source_name
    }

    /// How many policies the set holds.
    pub fn len(&self) -> usize {
        self.meta.len()
    }

    /// Whether no call of `tool` by `actor` with `options`, taking `action`, could be allowed,
    /// whatever its resource, arguments, plan, session, counts, time or approval: Cedar's
    /// partial evaluation with all of those unknown. Only a denial no unknown can change
    /// counts: one where no permit can match, or where a plain forbid always matches (not one
    /// whose `@outcome` lets the call run another way, after an approval, say).
    pub fn never_allows(
        &self,
        actor: &Actor,
        tool: &str,
        action: &str,
        options: &RunOptions,
        registry: &ToolRegistry,
    ) -> bool {
        let uid = |kind: &EntityTypeName, id: &str| {
            EntityUid::from_type_name_and_id(kind.clone(), EntityId::new(id))
        };
        let Ok(context) = context::partial(actor, tool, registry, options) else {
            return false;
        };
        let request = RequestBuilder::default()
            .principal(uid(&self.actor_type, &actor.id))
            .action(uid(&self.action_type, action))
            .unknown_resource_with_type(self.resource_type.clone())
            .context(context)
            .build();
        let response = self.authorizer.is_authorized_partial(&request, &self.set, &self.entities);
        if response.decision() != Some(Decision::Deny) {
            return false;
        }
        let forbids: Vec<_> =
            response.definitely_satisfied().filter(|p| p.effect() == Effect::Forbid).collect();
        forbids.is_empty()
            || forbids.iter().any(|p| self.meta.get(p.id()).is_none_or(|m| m.outcome.is_none()))
    }

    /// Evaluates a request. Never fails: an evaluation error denies, with the error as reason.
    pub fn evaluate(
        &self,
        req: &ActionRequest,
        registry: &ToolRegistry,
        facts: &Observed,
    ) -> Verdict {
        self.evaluate_with(req, registry, facts, None)
    }

    /// Evaluates a request that an approver approved, with the approval in `context.approval`.
    pub fn evaluate_approved(
        &self,
        req: &ActionRequest,
        registry: &ToolRegistry,
        facts: &Observed,
        grant: &Grant,
    ) -> Verdict {
        self.evaluate_with(req, registry, facts, Some(grant))
    }

    fn evaluate_with(
        &self,
        req: &ActionRequest,
        registry: &ToolRegistry,
        facts: &Observed,
        grant: Option<&Grant>,
    ) -> Verdict {
        if let Some(refused) = self.refused_before(req) {
            return refused;
        }
        let safety = registry.safety(&req.tool);
        let uid = |kind: &EntityTypeName, id: &str| {
            EntityUid::from_type_name_and_id(kind.clone(), EntityId::new(id))
        };
        let principal = uid(&self.actor_type, &req.actor.id);
        let action = uid(&self.action_type, &req.action);
        let slice = self.slices.get(&self.set, &self.entities, &principal, &action);
        let request = context::build(req, registry, facts, grant, self.used)
            .map_err(|e| e.to_string())
            .and_then(|context| {
                Request::new(
                    principal,
                    action,
                    uid(&self.resource_type, &req.resource.id),
                    context,
                    None,
                )
                .map_err(|e| e.to_string())
            });
        let request = match request {
            Ok(request) => request,
            Err(error) => return error_verdict(vec![], &error),
        };
        let response = self.authorizer.is_authorized(&request, &slice, &self.entities);
        self.verdict(&response, req, safety, facts)
    }

    /// The denial of a call no policy may judge: arguments the tool's normalizations cannot
    /// place (they would be judged in a form the tool does not run), or, unless the policy set
    /// reads `context.args_valid` (then it has taken such calls in hand), arguments that break
    /// the tool's schema.
    fn refused_before(&self, req: &ActionRequest) -> Option<Verdict> {
        let reason = if !req.unnormalized.is_empty() {
            let why = req.unnormalized.join("; ");
            format!("the arguments of `{}` cannot be normalized: {why}", req.tool)
        } else if !req.args_errors.is_empty() && !self.used.contains("args_valid") {
            format!(
                "the arguments do not match the input_schema of `{}`: {}",
                req.tool,
                req.args_errors.join("; ")
            )
        } else {
            return None;
        };
        Some(Verdict {
            outcome: Outcome::Deny,
            reason,
            policy_ids: Vec::new(),
            patches: Vec::new(),
        })
    }

    /// Cedar's answer as a verdict: its determining policies in the file's order, their
    /// reasons rendered, a forbid's softening; any error denies.
    fn verdict(
        &self,
        response: &cedar_policy::Response,
        req: &ActionRequest,
        safety: Safety,
        facts: &Observed,
    ) -> Verdict {
        let diagnostics = response.diagnostics();

        let errors: Vec<_> = diagnostics.errors().collect();
        if !errors.is_empty() {
            // Cedar skips a policy that errs; a skipped forbid could let through what it
            // should stop, so any error denies.
            let ids = errors
                .iter()
                .map(|cedar_policy::AuthorizationError::PolicyEvaluationError(e)| {
                    e.policy_id().to_string()
                })
                .collect();
            let messages: Vec<_> = errors.iter().map(|e| e.to_string()).collect();
            return error_verdict(ids, &messages.join("; "));
        }
        let mut determining: Vec<_> = diagnostics.reason().collect();
        determining.sort_by_key(|id| self.meta.get(*id).map(|m| m.position));
        let policy_ids: Vec<String> = determining.iter().map(|id| id.to_string()).collect();
        let reasons: Vec<String> = determining
            .iter()
            .filter_map(|id| self.meta.get(*id)?.reason.as_deref())
            .map(|template| render(template, req, safety, facts))
            .collect();

        match response.decision() {
            Decision::Allow => Verdict {
                outcome: Outcome::Allow,
                reason: joined(reasons, || format!("permitted by {}", policy_ids.join(", "))),
                policy_ids,
                patches: Vec::new(),
            },
            Decision::Deny if policy_ids.is_empty() => Verdict {
                outcome: Outcome::Deny,
                reason: format!(
                    "not permitted: no policy permits action `{}` with tool `{}`",
                    req.action, req.tool
                ),
                policy_ids,
                patches: Vec::new(),
            },
            Decision::Deny => {
                let forbids: Vec<&Meta> =
                    determining.iter().filter_map(|id| self.meta.get(*id)).collect();
                let (outcome, patches) = softened(&forbids);
                Verdict {
                    outcome,
                    reason: joined(reasons, || format!("forbidden by {}", policy_ids.join(", "))),
                    policy_ids,
                    patches,
                }
            }
        }
    }
}

/// What the forbids that denied a request turn the denial into: a plain deny unless every one
/// of them carries an `@outcome`; then the most restrictive of those (require_approval, then
/// dry_run, then rewrite), with the rewrites' patches in policy order.
fn softened(forbids: &[&Meta]) -> (Outcome, Vec<serde_json::Value>) {
    let rank = |outcome: Outcome| match outcome {
        Outcome::RequireApproval => 3,
        Outcome::DryRun => 2,
        Outcome::Rewrite => 1,
        Outcome::Allow | Outcome::Deny => 0,
    };
    let Some(outcomes) = forbids.iter().map(|m| m.outcome).collect::<Option<Vec<_>>>() else {
        return (Outcome::Deny, Vec::new());
    };
    match outcomes.into_iter().max_by_key(|o| rank(*o)) {
        Some(Outcome::Rewrite) => {
            (Outcome::Rewrite, forbids.iter().filter_map(|m| m.patch.clone()).collect())
        }
        Some(outcome) => (outcome, Vec::new()),
        None => (Outcome::Deny, Vec::new()),
    }
}

fn error_verdict(policy_ids: Vec<String>, error: &str) -> Verdict {
    Verdict {
        outcome: Outcome::Deny,
        reason: format!("policy evaluation error: {error}"),
        policy_ids,
        patches: Vec::new(),
    }
}

fn joined(reasons: Vec<String>, fallback: impl FnOnce() -> String) -> String {
    if reasons.is_empty() { fallback() } else { reasons.join("; ") }
}

/// One policy read, the `position`th of the file: what it reads of the context, and its
/// `@reason`, `@outcome` and `@rewrite`; refused, pointing at the policy's text, when it names
/// an attribute toolgate does not provide or its annotations do not read.
fn read(
    source_name: &str,
    text: &str,
    (id, position): (&str, usize),
    policy: &Policy,
) -> Result<(Used, Meta), PolicyError> {
    // Where the policy is in the file: Cedar keeps each policy's own text.
    let source = policy.to_string();
    let at = text.find(&source).map(|at| (at, at + source.len()));
    let refused = |message: String, what: &str| {
        let span = at.and_then(|at| diagnostic::find_path(text, at, what));
        let span = span.or(at.map(|(offset, end)| diagnostic::Span { offset, len: end - offset }));
        let message = format!("policy `{id}`: {message}");
        PolicyError::Annotation {
            source_name: source_name.to_owned(),
            id: id.to_owned(),
            rendered: diagnostic::render(source_name, text, &message, span, None, None),
        }
    };
    // A policy Cedar cannot show as JSON is read as reading every record.
    let json = policy.to_json().ok();
    let reads = json.as_ref().map_or(Used::ALL, Used::by);
    let unknown = json.map(|json| super::shape::unknown_attributes(&json)).unwrap_or_default();
    if let Some(first) = unknown.first() {
        let named = unknown.iter().map(|u| format!("`{u}`")).collect::<Vec<_>>();
        let message = format!(
            "toolgate provides no {} (`toolgate policy schema` lists what it provides)",
            named.join(", ")
        );
        return Err(refused(message, first));
    }
    let reason = policy.annotation("reason").map(str::to_owned);
    let (outcome, patch) =
        outcome_annotations(policy).map_err(|message| refused(message, "@outcome"))?;
    Ok((reads, Meta { position, reason, outcome, patch }))
}

#[cfg(test)]
mod tests;
