//! The Decide/Execute logic: validate, evaluate the policy, pair executions with their
//! decisions, process output, and record every step on the trail before answering. It takes
//! the API's request messages (`proto`, plain prost structs) and answers with domain results
//! and [`Error`]; it knows nothing of tonic, so the gRPC services (and through them the hook adapter) and the
//! CLI's `decide` all drive the same code. The RPC it records a refusal under is an
//! [`Rpc`](crate::auth::Rpc).
//!
//! INVARIANT (fail closed): no method returns a result before the events it describes are
//! committed; when the trail cannot commit them the caller gets [`Error::Unavailable`].

mod approve;
mod output;
mod pairing;
mod pinning;
pub mod refusal;

use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;
use std::sync::Arc;

use arc_swap::{ArcSwap, ArcSwapOption};

use crate::auth::{Caller, Rpc};
use crate::config::{Config, Defaults, Limits};
use crate::error::{Error, FieldError};
use crate::state::approvals::{Approval, Approvals, Ticket};
use crate::state::facts::{Call, Facts, Observed};
use cedar_policy::Entities;

use crate::policy::{PolicyEngine, PolicyError, Verdict, entities};
use crate::proto;
use crate::registry::{ToolRegistry, ToolSpec};
use crate::request::{
    ActionRequest, ArgsError, ArgsHasher, CanonicalArgs, ExecutionReport, NeverAllowed, PeerRefusal,
};
use crate::state::State;
use crate::state::pins::Pins;
use crate::store::Writer;
use crate::trail::Outcome;
use crate::trail::{Event, Kind, Record};
use pairing::Pairing;

/// The answer to a Decide call.
#[derive(Debug, Clone)]
pub struct Decision {
    pub decision_id: String,
    pub verdict: Verdict,
    pub args_hash: String,
    pub max_output_chars: u32,
    pub timeout_ms: u32,
    /// With a rewrite: the arguments to run instead. Empty otherwise.
    pub rewritten_args_json: String,
    pub seq: i64,
    pub policy_version: String,
}

/// The answer to an Execute call.
#[derive(Debug, Clone)]
pub struct Execution {
    pub output: String,
    pub truncated: bool,
    pub result_bytes: i64,
    pub seq: i64,
    /// Why the execution broke its decision, if it did.
    pub violation: Option<String>,
}

/// Why a reload did not put a new policy in force.
#[derive(Debug, thiserror::Error)]
pub enum ReloadError {
    /// The policy does not load; the one in force stays.
    #[error(transparent)]
    Policy(#[from] PolicyError),
    /// The load could not be recorded; the one in force stays.
    #[error(transparent)]
    Record(#[from] Error),
}

/// The decision point: cheap to clone, shared by every request.
#[derive(Debug, Clone)]
pub struct Gatekeeper {
    writer: Writer,
    facts: Arc<Facts>,
    /// The policy in force; swapped whole by a reload, so a decision sees one version.
    policy: Arc<ArcSwap<PolicyEngine>>,
    /// Where a reload reads the policy from (`None`: the embedded default).
    policy_path: Option<PathBuf>,
    /// The candidate policy of shadow mode, if any: evaluated and recorded, never enforced.
    shadow: Arc<ArcSwapOption<PolicyEngine>>,
    shadow_path: Option<PathBuf>,
    /// Configured actors and action groups, for the policies a reload loads.
    entities: Arc<Entities>,
    /// The tool registry; built again, its schema files read again, at a reload.
    registry: Arc<ArcSwap<ToolRegistry>>,
    tools: Arc<BTreeMap<String, ToolSpec>>,
    /// The calls waiting for an approver.
    approvals: Arc<Approvals>,
    /// Configured actors' roles, which policies see of an approver.
    roles: Arc<HashMap<String, Vec<String>>>,
    limits: Limits,
    defaults: Defaults,
    /// How argument hashes are made (keyed when configured).
    hasher: ArgsHasher,
    /// The tool definitions in force.
    pins: Arc<Pins>,
    /// Whether a decision keeps the hash of the arguments as sent (`[args_hash] raw`).
    keep_raw: bool,
}

impl Gatekeeper {
    /// A gate for `config`: it decides with the configured policy (and shadow policy), counts
    /// with `facts`, keeps calls that require approval in `approvals`, holds calls to tools
    /// whose definition is not the one in `pins`, and records through `writer`.
    pub fn new(
        config: &Config,
        state: State,
        writer: Writer,
        hasher: ArgsHasher,
    ) -> Result<Self, PolicyError> {
        let State { facts, approvals, pins } = state;
        let entities = entities(config)?;
        let policy = PolicyEngine::load(config.policy.as_deref(), entities.clone())?;
        let shadow = match &config.shadow_policy {
            Some(path) => Some(PolicyEngine::load(Some(path), entities.clone())?),
            None => None,
        };
        Ok(Self {
            entities,
            writer,
            facts,
            policy: Arc::new(ArcSwap::from_pointee(policy)),
            policy_path: config.policy.clone(),
            shadow: Arc::new(ArcSwapOption::from(shadow.map(Arc::new))),
            shadow_path: config.shadow_policy.clone(),
            registry: Arc::new(ArcSwap::from_pointee(config.registry()?)),
            tools: Arc::new(config.tools.clone()),
            approvals,
            roles: Arc::new(
                config.actors.iter().map(|(id, spec)| (id.clone(), spec.roles.clone())).collect(),
            ),
            limits: config.limits.clone(),
            defaults: config.defaults.clone(),
            hasher,
            pins,
            keep_raw: config.args_hash.raw,
        })
    }

    /// The configured input limits.
    pub fn limits(&self) -> &Limits {
        &self.limits
    }

    /// Records that the gate's policy set (and its shadow, if any) is in force.
    pub async fn record_policy_loaded(&self) -> Result<Event, Error> {
        self.record_loaded(&self.policy.load(), self.shadow.load().as_deref()).await
    }

    /// Records a policy put in force, and its shadow; returns the enforced one's event.
    async fn record_loaded(
        &self,
        policy: &PolicyEngine,
        shadow: Option<&PolicyEngine>,
    ) -> Result<Event, Error> {
        let loaded = |policy: &PolicyEngine, role: &str| Record {
            policy_version: Some(policy.version().to_owned()),
            reason: Some(format!(
                "{role}loaded {} policies from {}",
                policy.len(),
                policy.source_name()
            )),
            ..Record::new(Kind::PolicyLoaded)
        };
        let mut records = vec![loaded(policy, "")];
        records.extend(shadow.map(|shadow| loaded(shadow, "shadow: ")));
        // No agent waits on this append: a slow disk may delay it, up to a minute.
        let writer = self.writer.with_timeout(std::time::Duration::from_secs(60));
        let mut events = writer.append(records).await?;
        // INVARIANT: the writer returns one event per record appended, in order.
        Ok(events.remove(0))
    }

    /// Loads the configured policy (and shadow policy) again and puts them in force once their
    /// `policy_loaded` events are committed. If either does not load, both stay as they were.
    pub async fn reload_policy(&self) -> Result<(Arc<PolicyEngine>, Event), ReloadError> {
        let registry = ToolRegistry::with(&self.tools).map_err(PolicyError::from)?;
        let policy = PolicyEngine::load(self.policy_path.as_deref(), self.entities.clone())?;
        let shadow = match &self.shadow_path {
            Some(path) => Some(PolicyEngine::load(Some(path), self.entities.clone())?),
            None => None,
        };
        let event = self.record_loaded(&policy, shadow.as_ref()).await?;
        let policy = Arc::new(policy);
        self.registry.store(Arc::new(registry));
        self.policy.store(policy.clone());
        self.shadow.store(shadow.map(Arc::new));
        tracing::info!(policy_version = policy.version(), seq = event.seq, "policy reloaded");
        Ok((policy, event))
    }

    /// Records a malformed request about a call or a decision; the error to answer with.
    async fn invalid(&self, rpc: Rpc, error: FieldError, about: refusal::About) -> Error {
        let max_name = self.limits.max_name_bytes;
        refusal::invalid_about(&self.writer, rpc, error, about, max_name).await
    }

    /// The tools of a `NeverAllowed` request that no call could make allowed under the policy
    /// in force, in its order. Nothing is decided, so only a malformed request is recorded.
    pub async fn never_allowed(
        &self,
        raw: proto::NeverAllowedRequest,
    ) -> Result<Vec<String>, Error> {
        let about = refusal::About {
            actor_id: raw.actor.as_ref().map(|a| a.id.clone()).unwrap_or_default(),
            ..refusal::About::default()
        };
        let registry = self.registry.load();
        let question = match NeverAllowed::from_proto(raw, &self.limits, &registry) {
            Ok(question) => question,
            Err(e) => return Err(self.invalid(Rpc::NeverAllowed, e, about).await),
        };
        let policy = self.policy.load();
        let (actor, options) = (&question.actor, &question.options);
        Ok(question
            .tools
            .into_iter()
            .filter(|(tool, action)| policy.never_allows(actor, tool, action, options, &registry))
            .map(|(tool, _)| tool)
            .collect())
    }

    /// Records what an adapter refused from a peer it relays; the event's seq.
    pub async fn record_refusal(&self, raw: proto::RecordRefusalRequest) -> Result<i64, Error> {
        let about = refusal::About {
            actor_id: raw.actor.as_ref().map(|a| a.id.clone()).unwrap_or_default(),
            session_id: raw.session_id.clone(),
            ..refusal::About::default()
        };
        match PeerRefusal::from_proto(raw, &self.limits) {
            Ok(refused) => refusal::peer(&self.writer, refused).await,
            Err(e) => Err(self.invalid(Rpc::RecordRefusal, e, about).await),
        }
    }

    /// Decides a proposed tool call, asked by `identity` (with auth on), and records the
    /// decision.
    #[allow(clippy::expect_used)] // see the INVARIANT inside
    pub async fn decide(
        &self,
        raw: proto::DecideRequest,
        identity: Option<String>,
    ) -> Result<Decision, Error> {
        let about = refusal::About::call(&raw);
        let registry = self.registry.load();
        let mut req = match ActionRequest::from_proto(raw, &self.limits, &registry) {
            Ok(req) => req,
            Err(e) => return Err(self.invalid(Rpc::Decide, e, about).await),
        };
        req.identity = identity;
        if self.hasher.is_keyed() {
            // INVARIANT: the arguments were canonicalized once already by `from_proto`.
            req.args_hash = self.hasher.hash(&req.args).expect("canonicalized before").hash;
        }
        if self.keep_raw {
            let raw = req.raw_args.as_ref().and_then(|raw| self.hasher.hash(raw).ok());
            req.raw_args_hash = raw.map(|raw| raw.hash);
        }
        let safety = registry.safety(&req.tool);
        let observed = self.facts.observe(Call::of(&req, chrono::Utc::now().timestamp_micros()));
        let policy = self.policy.load();
        let verdict = self.held_for_definition(&req, policy.evaluate(&req, &registry, &observed));
        let shadow =
            self.shadow.load().as_ref().map(|shadow| shadow.evaluate(&req, &registry, &observed));
        let (verdict, ticket) = self.room_for_approval(&req, verdict);
        if verdict.outcome == Outcome::Deny {
            self.facts.denied(&req.actor.id, &req.session_id);
        }
        let (verdict, rewritten) = rewritten(&req, verdict, &registry, &self.hasher);
        let max_output_chars =
            req.options.max_output_chars.map_or(self.defaults.max_output_chars, |asked| {
                asked.min(self.defaults.max_output_chars)
            });
        let timeout_default = self.defaults.timeout_ms(safety);
        let timeout_ms = req.plan.timeout_ms.map_or(timeout_default, |t| t.min(timeout_default));
        let decision_id = uuid::Uuid::now_v7().to_string();
        let record = Record {
            rewritten_args_hash: rewritten.as_ref().map(|args| args.hash.clone()),
            outcome: Some(verdict.outcome),
            reason: Some(verdict.reason.clone()),
            policy_ids: Some(serde_json::json!(verdict.policy_ids).to_string()),
            policy_version: Some(policy.version().to_owned()),
            shadow_outcome: shadow.as_ref().map(|s| s.outcome),
            shadow_reason: shadow.map(|s| s.reason),
            max_output_chars: Some(i64::from(max_output_chars)),
            timeout_ms: Some(i64::from(timeout_ms)),
            request: Some(req.stored()),
            ..req.record(Kind::Decision, &decision_id)
        };
        let approval = (verdict.outcome == Outcome::RequireApproval)
            .then(|| self.approval(&req, &verdict, &decision_id, observed));
        let mut records = vec![record];
        if let Some(approval) = &approval {
            records.push(approval.requested_record(self.approvals.ttl()));
        }
        let events = self.writer.append(records).await?;
        if let (Some(approval), Some(requested), Some(ticket)) = (approval, events.get(1), ticket) {
            // The approval's clock starts with its event, as a rebuild from the trail sees it.
            let approval = approval.requested_at(&requested.ts, self.approvals.ttl());
            self.approvals.open(approval, ticket);
        }
        Ok(Decision {
            decision_id,
            verdict,
            args_hash: req.args_hash,
            max_output_chars,
            timeout_ms,
            rewritten_args_json: rewritten.map(|args| args.json).unwrap_or_default(),
            seq: events[0].seq,
            policy_version: policy.version().to_owned(),
        })
    }

    /// A call that requires approval needs room among the pending ones; without it, it is
    /// denied, saying why (and no approval is requested).
    fn room_for_approval(
        &self,
        req: &ActionRequest,
        verdict: Verdict,
    ) -> (Verdict, Option<Ticket<'_>>) {
        match verdict.outcome {
            Outcome::RequireApproval => match self.approvals.reserve(req) {
                Ok(ticket) => (verdict, Some(ticket)),
                Err(why) => {
                    let reason = format!("{}; not sent for approval: {why}", verdict.reason);
                    (Verdict { outcome: Outcome::Deny, reason, ..verdict }, None)
                }
            },
            Outcome::Allow | Outcome::Deny | Outcome::DryRun | Outcome::Rewrite => (verdict, None),
        }
    }

    /// The pending approval a call that requires one opens, with what an approver is shown.
    fn approval(
        &self,
        req: &ActionRequest,
        verdict: &Verdict,
        decision_id: &str,
        observed: Observed,
    ) -> Approval {
        Approval {
            decision_id: decision_id.to_owned(),
            args_json: self
                .approvals
                .show_args()
                .then(|| serde_json::Value::Object(req.args.clone()).to_string())
                .filter(|args| args.len() <= self.approvals.max_shown_args_bytes()),
            request: req.clone(),
            reason: verdict.reason.clone(),
            policy_ids: verdict.policy_ids.clone(),
            requested_at: chrono::Utc::now(),
            expires_at: chrono::Utc::now(),
            observed,
            verdict: None,
        }
    }

    /// Records a tool run, pairing it with its decision, and returns the processed output.
    /// With auth on, the decision's actor must be one the `caller` may act as; otherwise the
    /// report is refused and an `access_denied` event recorded in its place.
    pub async fn execute(
        &self,
        raw: proto::ExecuteRequest,
        caller: Option<Caller>,
    ) -> Result<Execution, Error> {
        let about = refusal::About::decision(&raw.decision_id);
        let mut report = match ExecutionReport::from_proto(raw, &self.limits) {
            Ok(report) => report,
            Err(e) => return Err(self.invalid(Rpc::Execute, e, about).await),
        };
        if self.hasher.is_keyed() {
            report.args_hash = self.hasher.hash_canonical(&report.args_canonical);
        }
        if let Some(approver) = report.approved_in_harness.clone() {
            self.approve_in_harness(&report, &approver, caller.as_ref()).await;
        }
        let output_chars = report.output.as_deref().map(|o| o.chars().count());
        let default_max = i64::from(self.defaults.max_output_chars);
        // The decision is looked up inside the writer's transaction, so two executions of one
        // decision cannot both pass as the first.
        let pairing = Pairing {
            report: report.clone(),
            caller,
            registry: self.registry.load_full(),
            hasher: self.hasher.clone(),
            facts: self.facts.clone(),
            default_max,
            output_chars,
            repeated: Arc::default(),
        };
        let repeat = pairing.repeated.clone();
        let events = self.writer.append_with(move |lookup| pairing.records(lookup)).await?;
        let Some(execution) = events.first().or_else(|| repeat.get()) else {
            return Err(Error::Unavailable("an Execute that appended nothing".to_owned()));
        };
        if execution.record.kind == Kind::AccessDenied {
            return Err(Error::PermissionDenied(
                execution.record.reason.clone().unwrap_or_default(),
            ));
        }
        let max_chars = execution.record.max_output_chars.unwrap_or(default_max);
        let processed = report.output.as_deref().map(|o| {
            output::process(o, usize::try_from(max_chars).unwrap_or(usize::MAX), report.wrap_output)
        });
        Ok(Execution {
            truncated: processed.as_ref().is_some_and(|p| p.truncated),
            output: processed.map(|p| p.text).unwrap_or_default(),
            result_bytes: report.result_bytes,
            seq: execution.seq,
            violation: events.get(1).and_then(|v| v.record.reason.clone()),
        })
    }
}

/// Why a rewrite's arguments cannot be run.
#[derive(Debug, thiserror::Error)]
pub enum RewriteError {
    #[error(transparent)]
    Args(#[from] ArgsError),
    /// The patched arguments do not normalize (`args.<path>: <why>`).
    #[error("{}", .0.join("; "))]
    Normal(Vec<String>),
}

/// A rewrite's arguments, or, when they cannot be run, a denial saying why.
fn rewritten(
    req: &ActionRequest,
    verdict: Verdict,
    registry: &ToolRegistry,
    hasher: &ArgsHasher,
) -> (Verdict, Option<CanonicalArgs>) {
    match verdict.outcome {
        Outcome::Rewrite => match rewrite(req, &verdict.patches, registry, hasher) {
            Ok(args) => (verdict, Some(args)),
            Err(e) => {
                let reason = format!("{}; the rewrite failed: {e}", verdict.reason);
                (Verdict { outcome: Outcome::Deny, reason, ..verdict }, None)
            }
        },
        Outcome::Allow | Outcome::Deny | Outcome::RequireApproval | Outcome::DryRun => {
            (verdict, None)
        }
    }
}

/// The arguments as the harness sent them with the rewrite policies' merge patches (RFC 7386)
/// applied, in order: what the tool is to run, in canonical form. Their hash is that of their
/// normal form for the tool (a patch may bring in any spelling), as Execute will compare it.
pub fn rewrite(
    req: &ActionRequest,
    patches: &[serde_json::Value],
    registry: &ToolRegistry,
    hasher: &ArgsHasher,
) -> Result<CanonicalArgs, RewriteError> {
    let sent = req.raw_args.as_ref().unwrap_or(&req.args);
    let mut value = serde_json::Value::Object(sent.clone());
    for patch in patches {
        json_patch::merge(&mut value, patch);
    }
    // INVARIANT: patches are JSON objects (checked when the policy loads), and merging an
    // object into an object leaves an object, which normalizing keeps one.
    let serde_json::Value::Object(rewritten) = &value else { unreachable!("merge kept an object") };
    let run = hasher.hash(rewritten)?;
    if !registry.normalizes(&req.tool) {
        return Ok(run);
    }
    let mut normal = value.clone();
    let errors = registry.normalize(&req.tool, &mut normal);
    if !errors.is_empty() {
        return Err(RewriteError::Normal(errors));
    }
    let serde_json::Value::Object(normal) = normal else {
        unreachable!("normalizing kept an object")
    };
    Ok(CanonicalArgs { hash: hasher.hash(&normal)?.hash, ..run })
}
