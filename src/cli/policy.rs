//! `toolgate policy check`, `test` and `replay`: tools for policy authors, run offline against
//! policy files (and, for replay, a trail read-only) — no server.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

use anyhow::Context;
use clap::{Args, Subcommand};
use serde::Deserialize;

use super::Exit;
use crate::config::Config;
use crate::policy::{PolicyEngine, entities};
use crate::proto;
use crate::request::ActionRequest;
use crate::state::facts::{Call, Facts, Observed, Reads};
use crate::store::{PAGE, Reader};
use crate::trail::Kind;
use crate::trail::Outcome;

/// Arguments of `toolgate policy`.
#[derive(Debug, Args)]
pub struct PolicyArgs {
    #[command(subcommand)]
    pub command: PolicyCommand,
}

/// The policy authors' commands.
#[derive(Debug, Subcommand)]
pub enum PolicyCommand {
    /// Parse each policy file and check its annotations; exit 1 if any is invalid.
    Check(CheckArgs),
    /// Evaluate a table of requests against a policy file and compare the outcomes.
    Test(TestArgs),
    /// Re-evaluate the decisions recorded on a trail under another policy; print what changes.
    Replay(ReplayArgs),
    /// Print what toolgate hands a policy as a Cedar schema (principal, actions, resource and
    /// every context record, typed), for Cedar's validator; `--format text` for prose.
    Schema(SchemaArgs),
}

/// Arguments of `toolgate policy schema`.
#[derive(Debug, Args)]
pub struct SchemaArgs {
    /// `cedar`: a Cedar schema (the configuration's actions, groups and actor attributes);
    /// `text`: the same in words.
    #[arg(long, value_enum, default_value = "cedar")]
    pub format: SchemaFormat,
    /// A configuration file whose `[tools]`, `[action_groups]` and `[actors]` apply.
    #[arg(long)]
    pub config: Option<PathBuf>,
}

/// The forms of `toolgate policy schema`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum SchemaFormat {
    Cedar,
    Text,
}

/// Arguments of `toolgate policy replay`.
#[derive(Debug, Args)]
pub struct ReplayArgs {
    /// The trail whose decisions are replayed (read-only).
    #[arg(long)]
    pub db: PathBuf,
    /// The policy to replay them under.
    #[arg(long)]
    pub policy: PathBuf,
    /// A configuration file whose `[tools]` and `[session_caps]` apply, as the server's did.
    #[arg(long)]
    pub config: Option<PathBuf>,
}

/// Arguments of `toolgate policy check`.
#[derive(Debug, Args)]
pub struct CheckArgs {
    /// Cedar policy files.
    #[arg(required = true)]
    pub files: Vec<PathBuf>,
}

/// Arguments of `toolgate policy test`.
#[derive(Debug, Args)]
pub struct TestArgs {
    /// The Cedar policy file under test.
    pub file: PathBuf,
    /// A TOML file of `[[case]]` tables (docs/policy.md shows the form).
    #[arg(long)]
    pub cases: PathBuf,
    /// A configuration file whose `[tools]` extend the registry, as the server would load it.
    #[arg(long)]
    pub config: Option<PathBuf>,
    /// Run only the cases whose name contains this text (exit 2 when none does: a filter that matches nothing is a mistake).
    #[arg(long)]
    pub case: Option<String>,
    /// One JSON object per case (name, ok, outcome, reason, policies, problems), then one with
    /// the totals.
    #[arg(long)]
    pub json: bool,
}

/// Runs a policy subcommand.
pub async fn policy(args: PolicyArgs) -> anyhow::Result<Exit> {
    match args.command {
        PolicyCommand::Check(args) => Ok(check(&args)),
        PolicyCommand::Test(args) => test(&args),
        PolicyCommand::Replay(args) => replay(&args).await,
        PolicyCommand::Schema(args) => {
            match args.format {
                SchemaFormat::Text => print!("{}", crate::policy::describe_shape()),
                SchemaFormat::Cedar => {
                    let config = config(args.config.as_deref())?;
                    print!("{}", crate::policy::cedar_schema(&config, &config.registry()?)?);
                }
            }
            Ok(Exit::Ok)
        }
    }
}

/// Checks each file: exit 1 when one does not check, 2 when one does not read (trouble, not
/// a finding).
fn check(args: &CheckArgs) -> Exit {
    let (mut failed, mut unread) = (false, false);
    for file in &args.files {
        match PolicyEngine::from_file(file) {
            Ok(engine) => println!(
                "ok {}: {} policies, version {}",
                file.display(),
                engine.len(),
                engine.version()
            ),
            Err(e @ crate::policy::PolicyError::Read { .. }) => {
                unread = true;
                eprintln!("error: {e}");
            }
            Err(e) => {
                failed = true;
                println!("FAILED {}\n{e}", file.display());
            }
        }
    }
    match (unread, failed) {
        (true, _) => Exit::Trouble,
        (false, true) => Exit::Found,
        (false, false) => Exit::Ok,
    }
}

/// One request of a test table, and what the policy should answer.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Case {
    /// A name for the report.
    #[serde(default)]
    pub name: String,
    pub tool: String,
    #[serde(default)]
    pub action: String,
    #[serde(default = "default_actor")]
    pub actor: String,
    #[serde(default)]
    pub actor_kind: String,
    #[serde(default)]
    pub delegation_chain: Vec<String>,
    #[serde(default = "default_session")]
    pub session: String,
    #[serde(default)]
    pub task_type: String,
    #[serde(default)]
    pub resource_type: String,
    #[serde(default)]
    pub resource_id: String,
    #[serde(default)]
    pub classification: String,
    /// The tool's arguments.
    #[serde(default)]
    pub args: serde_json::Map<String, serde_json::Value>,
    /// The harness's context.
    #[serde(default)]
    pub context: serde_json::Map<String, serde_json::Value>,
    #[serde(default)]
    pub allow_write: bool,
    #[serde(default)]
    pub allow_bash: bool,
    /// The expected outcome: allow, deny, require_approval, dry_run or rewrite.
    #[serde(default)]
    pub expect: String,
    /// The expected reason, exactly.
    pub reason: Option<String>,
    /// The expected policy ids, exactly and in order.
    pub policies: Option<Vec<String>>,
    /// The session facts the policy sees (those of a first call when absent).
    #[serde(default)]
    pub facts: Observed,
    /// When the call is made (RFC 3339); now when absent.
    pub time: Option<String>,
}

fn default_actor() -> String {
    "test-actor".to_owned()
}

fn default_session() -> String {
    "test-session".to_owned()
}

impl Case {
    /// The Decide request this case describes.
    pub fn request(&self) -> proto::DecideRequest {
        proto::DecideRequest {
            session_id: self.session.clone(),
            task_type: self.task_type.clone(),
            actor: Some(proto::Actor {
                id: self.actor.clone(),
                kind: self.actor_kind.clone(),
                delegation_chain: self.delegation_chain.clone(),
            }),
            tool: self.tool.clone(),
            action: self.action.clone(),
            resource: Some(proto::Resource {
                r#type: self.resource_type.clone(),
                id: self.resource_id.clone(),
                classification: self.classification.clone(),
            }),
            args_json: serde_json::Value::Object(self.args.clone()).to_string(),
            context_json: serde_json::Value::Object(self.context.clone()).to_string(),
            options: Some(proto::RunOptions {
                allow_write: self.allow_write,
                allow_bash: self.allow_bash,
                max_output_chars: 0,
            }),
            plan: None,
            args_errors: Vec::new(),
            tool_definition: String::new(),
        }
    }
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Cases {
    case: Vec<Case>,
}

/// The configuration a file describes (the defaults without one), as the server would load it.
pub fn config(path: Option<&Path>) -> anyhow::Result<Config> {
    Ok(match path {
        Some(path) => Config::load(path)?,
        None => Config::default(),
    })
}

fn test(args: &TestArgs) -> anyhow::Result<Exit> {
    let config = config(args.config.as_deref())?;
    let engine = PolicyEngine::load(Some(&args.file), entities(&config)?)?;
    let registry = config.registry()?;
    let text = std::fs::read_to_string(&args.cases)
        .with_context(|| format!("cannot read `{}`", args.cases.display()))?;
    let cases: Cases = toml::from_str(&text)
        .with_context(|| format!("`{}` is not a table of [[case]]", args.cases.display()))?;
    let limits = config.limits;
    let (mut passed, mut failed) = (0, 0);
    for (i, case) in cases.case.iter().enumerate() {
        let name = if case.name.is_empty() { format!("case {}", i + 1) } else { case.name.clone() };
        if args.case.as_ref().is_some_and(|wanted| !name.contains(wanted.as_str())) {
            continue;
        }
        let mut answered = None;
        let problems = match ActionRequest::from_proto(case.request(), &limits, &registry) {
            Err(e) => vec![format!("the request is invalid: {e}")],
            Ok(req) => {
                let mut facts = case.facts.clone();
                if let Some(time) = &case.time {
                    facts.at_us = chrono::DateTime::parse_from_rfc3339(time)
                        .with_context(|| format!("{name}: `{time}` is not an RFC 3339 time"))?
                        .timestamp_micros();
                }
                let verdict = engine.evaluate(&req, &registry, &facts);
                let mut problems = Vec::new();
                if verdict.outcome.as_str() != case.expect {
                    problems.push(format!("outcome {}, expected {}", verdict.outcome, case.expect));
                }
                if let Some(reason) = case.reason.as_ref().filter(|r| **r != verdict.reason) {
                    problems.push(format!("reason `{}`, expected `{reason}`", verdict.reason));
                }
                if let Some(ids) = case.policies.as_ref().filter(|ids| **ids != verdict.policy_ids)
                {
                    problems.push(format!("policies {:?}, expected {ids:?}", verdict.policy_ids));
                }
                answered = Some(verdict);
                problems
            }
        };
        let ok = problems.is_empty();
        if ok {
            passed += 1
        } else {
            failed += 1
        }
        if args.json {
            let line = serde_json::json!({
                "name": name,
                "ok": ok,
                "outcome": answered.as_ref().map(|v| v.outcome.as_str()),
                "reason": answered.as_ref().map(|v| v.reason.as_str()),
                "policies": answered.as_ref().map(|v| &v.policy_ids),
                "problems": problems,
            });
            println!("{}", crate::text::json_escaped(&line.to_string()));
        } else if ok {
            println!("ok {name}");
        } else {
            println!("FAILED {name}: {}", problems.join("; "));
        }
    }
    if let Some(wanted) = args.case.as_ref().filter(|_| passed + failed == 0) {
        anyhow::bail!("no case's name contains {wanted:?}");
    }
    match args.json {
        true => println!("{}", serde_json::json!({ "passed": passed, "failed": failed })),
        false => println!("{passed} passed, {failed} failed"),
    }
    Ok(if failed > 0 { Exit::Found } else { Exit::Ok })
}

/// Replays every decision after the last prune's cut, in order, under another policy: the
/// stored normalized request (arguments by hash only) and facts recounted as the server
/// counted them (from what the last prune carried), with the data classes each execution read
/// under this configuration's registry (and those the trail records it read).
async fn replay(args: &ReplayArgs) -> anyhow::Result<Exit> {
    let config = config(args.config.as_deref())?;
    let engine = PolicyEngine::load(Some(&args.policy), entities(&config)?)?;
    let registry = config.registry()?;
    let facts = Facts::new(config.session_caps.clone().into_iter().collect());
    let reader = Reader::open(&args.db).await?;
    let mut changes: BTreeMap<(String, String), u64> = BTreeMap::new();
    // The classification of each decision on a classified resource not yet executed.
    let mut classified: HashMap<String, String> = HashMap::new();
    // A pruned trail starts where its last prune left the facts, as the server's did.
    let (mut replayed, mut after) = (0u64, facts.carried(&reader).await?);
    loop {
        let events = reader.of_kinds(&[Kind::Decision, Kind::Execution], after, PAGE).await?;
        for event in &events {
            let at_us =
                chrono::DateTime::parse_from_rfc3339(&event.ts).map_or(0, |t| t.timestamp_micros());
            let r = &event.record;
            if r.kind == Kind::Execution {
                let decided = r.decision_id.as_ref().and_then(|id| classified.remove(id));
                let tool = r.tool.as_deref().unwrap_or_default();
                let mut read = registry.classes_read(tool, &decided.unwrap_or_default());
                read.extend(Reads::of(r));
                let (actor, session) = (r.actor_id.as_deref(), r.session_id.as_deref());
                let (actor, session) = (actor.unwrap_or_default(), session.unwrap_or_default());
                facts.read(actor, session, &read, event.seq, at_us);
                continue;
            }
            if r.request.is_none() {
                continue;
            }
            let req = ActionRequest::from_trail(r).with_context(|| {
                format!("seq {}: the stored request does not read back", event.seq)
            })?;
            if let Some(id) = r.decision_id.clone()
                && !req.resource.classification.is_empty()
            {
                classified.insert(id, req.resource.classification.clone());
            }
            let observed = facts.observe(Call::of(&req, at_us));
            let recorded = r.outcome.map_or("", Outcome::as_str);
            if r.outcome == Some(Outcome::Deny) {
                facts.denied(&req.actor.id, &req.session_id);
            }
            let verdict = engine.evaluate(&req, &registry, &observed);
            replayed += 1;
            if verdict.outcome.as_str() != recorded {
                println!(
                    "seq {}: {recorded} -> {} ({}) {}",
                    event.seq,
                    verdict.outcome,
                    verdict.policy_ids.join(", "),
                    verdict.reason
                );
                *changes.entry((recorded.to_owned(), verdict.outcome.to_string())).or_default() +=
                    1;
            }
        }
        match events.last() {
            Some(last) if events.len() == PAGE as usize => after = last.seq,
            _ => break,
        }
    }
    let changed: u64 = changes.values().sum();
    println!(
        "replayed {replayed} decisions under {}: {changed} would change",
        args.policy.display()
    );
    for ((from, to), n) in &changes {
        println!("  {from} -> {to}: {n}");
    }
    Ok(Exit::Ok)
}
