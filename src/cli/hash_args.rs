//! `toolgate hash-args`: the hash the trail records for an argument object, so that an auditor
//! can ask whether this exact call was ever made (`toolgate query --json | grep HASH`).

use std::path::PathBuf;

use anyhow::Context;
use clap::Args;

use super::Exit;
use super::remote::{TOKEN_ENV, connect};
use crate::config::{ArgsHashConfig, Config};
use crate::proto::HashArgsRequest;
use crate::proto::audit_client::AuditClient;
use crate::request::ArgsHasher;

/// Arguments of `toolgate hash-args`.
#[derive(Debug, Args)]
pub struct HashArgsArgs {
    /// The arguments, a JSON object.
    pub args: String,
    /// A configuration file whose `[args_hash]` key applies.
    #[arg(long)]
    pub config: Option<PathBuf>,
    /// A file holding the key (an old one, to check events made before a rotation).
    #[arg(long, conflicts_with_all = ["key_env", "server"])]
    pub key_file: Option<PathBuf>,
    /// An environment variable holding the key.
    #[arg(long, conflicts_with = "server")]
    pub key_env: Option<String>,
    /// The key's id, as the hashes made with it name it.
    #[arg(long, conflicts_with = "server")]
    pub key_id: Option<String>,
    /// Normalize the arguments first, as the registry of `--config` does for this tool's
    /// calls (the trail hashes them normalized).
    #[arg(long, conflicts_with = "server")]
    pub tool: Option<String>,
    /// Ask this running server, with the key it holds (the auditor role when auth is on;
    /// the token from `TOOLGATE_TOKEN`).
    #[arg(long)]
    pub server: Option<String>,
}

/// Prints the hash.
pub async fn hash_args(args: HashArgsArgs) -> anyhow::Result<Exit> {
    if let Some(url) = &args.server {
        let (channel, bearer) = connect(url, TOKEN_ENV).await?;
        let request = HashArgsRequest { args_json: args.args.clone() };
        let mut client = AuditClient::with_interceptor(channel, bearer);
        println!("{}", client.hash_args(request).await?.into_inner().args_hash);
        return Ok(Exit::Ok);
    }
    let config = args.config.as_deref().map(Config::load).transpose()?.unwrap_or_default();
    let mut key = config.args_hash.clone();
    if args.key_file.is_some() || args.key_env.is_some() {
        key = ArgsHashConfig {
            key_file: args.key_file,
            key_env: args.key_env,
            ..ArgsHashConfig::default()
        };
    }
    if args.key_id.is_some() {
        key.key_id = args.key_id;
    }
    let object = crate::request::json::object("args", &args.args)
        .context("the arguments must be a JSON object, read as Decide reads them")?;
    let mut object = serde_json::Value::Object(object);
    if let Some(tool) = &args.tool {
        let registry = config.registry()?;
        anyhow::ensure!(registry.get(tool).is_some(), "the registry has no tool `{tool}`");
        let errors = registry.normalize(tool, &mut object);
        anyhow::ensure!(errors.is_empty(), "the arguments do not normalize: {}", errors.join("; "));
    }
    let serde_json::Value::Object(object) = object else {
        anyhow::bail!("the arguments must be a JSON object");
    };
    println!("{}", ArgsHasher::from_config(&key)?.hash(&object)?.hash);
    Ok(Exit::Ok)
}
