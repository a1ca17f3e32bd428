//! `toolgate hook claude`: Claude Code's command hook. Reads the hook's JSON on stdin, asks the
//! sidecar, writes the hook's answer on stdout (docs/claude-code.md).

use std::io::Read;
use std::path::PathBuf;
use std::time::Duration;

use clap::{Args, Subcommand};

use super::Exit;
use super::remote::{Bearer, endpoint};
use crate::config::Config;
use crate::hook::claude::{Payload, handle};
use crate::sidecar::{Sidecar, conn};

/// Arguments of `toolgate hook`.
#[derive(Debug, Args)]
pub struct HookArgs {
    #[command(subcommand)]
    pub harness: Harness,
}

/// The harnesses toolgate has hook adapters for.
#[derive(Debug, Subcommand)]
pub enum Harness {
    /// Claude Code's PreToolUse and PostToolUse hooks.
    Claude(ClaudeArgs),
}

/// Arguments of `toolgate hook claude`.
#[derive(Debug, Args)]
pub struct ClaudeArgs {
    /// The running server: `host:port`, `http(s)://host:port` or `unix:/path`.
    #[arg(long, env = super::remote::SERVER_ENV, default_value = super::remote::DEFAULT_SERVER)]
    pub server: String,
    /// A configuration file whose `[hooks.claude]` section applies.
    #[arg(long, env = "TOOLGATE_CONFIG")]
    pub config: Option<PathBuf>,
    /// Let the call through when the sidecar cannot be reached (blocked by default).
    #[arg(long)]
    pub fail_open: bool,
    /// The bearer token, when the sidecar's auth is on (from the environment, so that it
    /// stays out of process listings).
    #[arg(long = "token-env", default_value = "TOOLGATE_TOKEN")]
    pub token_env: String,
}

/// Answers one hook event. A sidecar that cannot be reached or refuses blocks the call: exit
/// code 2, which Claude Code treats as a block, with the reason on stderr.
pub async fn hook(args: HookArgs) -> anyhow::Result<Exit> {
    let Harness::Claude(args) = args.harness;
    let config = match &args.config {
        Some(path) => Config::load(path)?,
        None => Config::default(),
    };
    let hook = config.hooks.claude;
    let fail_open = args.fail_open || hook.fail_open;
    let mut input = String::new();
    std::io::stdin().read_to_string(&mut input)?;
    let payload: Payload = serde_json::from_str(&input)
        .map_err(|e| anyhow::anyhow!("the hook's input is not Claude Code hook JSON: {e}"))?;
    let answer = async {
        let channel = endpoint(&args.server)?
            .connect_timeout(Duration::from_secs(2))
            .timeout(Duration::from_secs(30))
            .connect()
            .await
            .map_err(|e| anyhow::anyhow!("cannot reach the sidecar at `{}`: {e}", args.server))?;
        let mut sidecar = Sidecar::new(conn(channel.clone()), conn(channel));
        if let Some(header) = Bearer::from_env(&args.token_env)?.header() {
            sidecar = sidecar.authorized(header)?;
        }
        let answer = handle(&payload, &hook, &mut sidecar).await?;
        anyhow::Ok(answer)
    }
    .await;
    match answer {
        Ok(answer) => {
            println!("{answer}");
            Ok(Exit::Ok)
        }
        Err(e) if fail_open => {
            eprintln!("toolgate: {e:#} (fail-open: the call goes ahead unrecorded)");
            println!("{{}}");
            Ok(Exit::Ok)
        }
        Err(e) => {
            eprintln!("toolgate blocked this call: {e:#}");
            Ok(Exit::Blocked)
        }
    }
}
