//! `toolgate decide`: try one request from the command line — offline against a policy file
//! (nothing is recorded), or against a running server (recorded like any Decide).

use std::path::PathBuf;

use anyhow::Context;
use clap::Args;

use super::Exit;
use super::policy::{Case, config};
use super::remote::{TOKEN_ENV, connect};
use crate::gate::rewrite;
use crate::policy::{PolicyEngine, entities};
use crate::proto::gate_client::GateClient;
use crate::request::{ActionRequest, ArgsHasher};
use crate::trail::Outcome;

/// Arguments of `toolgate decide`.
#[derive(Debug, Args)]
pub struct DecideArgs {
    /// The tool, for example `read` or `bash`.
    #[arg(long)]
    pub tool: String,
    /// The action; the registry's default for the tool when absent.
    #[arg(long, default_value = "")]
    pub action: String,
    #[arg(long, default_value = "cli")]
    pub actor: String,
    /// `user`, `agent` or `subagent`.
    #[arg(long, default_value = "")]
    pub actor_kind: String,
    #[arg(long, default_value = "cli")]
    pub session: String,
    #[arg(long, default_value = "")]
    pub resource_type: String,
    #[arg(long, default_value = "")]
    pub resource_id: String,
    #[arg(long, default_value = "")]
    pub classification: String,
    /// The arguments, a JSON object.
    #[arg(long, default_value = "{}")]
    pub args: String,
    /// The harness's context, a JSON object.
    #[arg(long, default_value = "{}")]
    pub context: String,
    #[arg(long)]
    pub allow_write: bool,
    #[arg(long)]
    pub allow_bash: bool,
    /// Decide offline with this policy file (the embedded default when neither this nor
    /// `--server` is given).
    #[arg(long, conflicts_with = "server")]
    pub policy: Option<PathBuf>,
    /// A configuration file whose `[tools]` extend the registry (offline only).
    #[arg(long, conflicts_with = "server")]
    pub config: Option<PathBuf>,
    /// Ask this running server instead; the decision is then recorded on its trail.
    #[arg(long)]
    pub server: Option<String>,
}

/// Decides and prints the answer.
pub async fn decide(args: DecideArgs) -> anyhow::Result<Exit> {
    let json =
        |flag: &str, text: &str| -> anyhow::Result<serde_json::Map<String, serde_json::Value>> {
            crate::request::json::object(flag, text)
                .with_context(|| format!("--{flag} must be a JSON object, read as Decide reads it"))
        };
    let case = Case {
        tool: args.tool.clone(),
        action: args.action.clone(),
        actor: args.actor.clone(),
        actor_kind: args.actor_kind.clone(),
        session: args.session.clone(),
        resource_type: args.resource_type.clone(),
        resource_id: args.resource_id.clone(),
        classification: args.classification.clone(),
        args: json("args", &args.args)?,
        context: json("context", &args.context)?,
        allow_write: args.allow_write,
        allow_bash: args.allow_bash,
        ..Case::default()
    };
    if let Some(url) = &args.server {
        let (channel, bearer) = connect(url, TOKEN_ENV).await?;
        let mut client = GateClient::with_interceptor(channel, bearer);
        let answer = client.decide(case.request()).await?.into_inner();
        // The trail's name of the outcome, as offline (`require_approval`, not the wire's).
        let outcome: Outcome = answer
            .outcome()
            .as_str_name()
            .to_ascii_lowercase()
            .parse()
            .map_err(|()| anyhow::anyhow!("the server answered no outcome"))?;
        println!("outcome: {outcome}");
        println!("reason: {}", answer.reason);
        println!("policies: {}", answer.policy_ids.join(", "));
        println!("args_hash: {}", answer.args_hash);
        if !answer.rewritten_args_json.is_empty() {
            println!("rewritten_args: {}", answer.rewritten_args_json);
        }
        println!("recorded: decision {} at seq {}", answer.decision_id, answer.seq);
        return Ok(Exit::Decided(outcome));
    }
    let config = config(args.config.as_deref())?;
    let engine = PolicyEngine::load(args.policy.as_deref(), entities(&config)?)?;
    let registry = config.registry()?;
    let req = ActionRequest::from_proto(case.request(), &config.limits, &registry)?;
    let verdict = engine.evaluate(&req, &registry, &case.facts);
    println!("outcome: {}", verdict.outcome);
    println!("reason: {}", verdict.reason);
    println!("policies: {}", verdict.policy_ids.join(", "));
    println!("args_hash: {}", req.args_hash);
    if verdict.outcome == Outcome::Rewrite {
        println!(
            "rewritten_args: {}",
            rewrite(
                &req,
                &verdict.patches,
                &registry,
                &ArgsHasher::from_config(&config.args_hash)?
            )?
            .json
        );
    }
    Ok(Exit::Decided(verdict.outcome))
}
