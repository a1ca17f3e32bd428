//! `toolgate hook <agent>`: a coding agent's command hook. Reads the hook's JSON on stdin, asks
//! the sidecar, writes the agent's answer on stdout (docs/agents.md).

use std::io::Read;
use std::path::PathBuf;
use std::time::Duration;

use clap::{Args, Subcommand};

use super::Exit;
use super::hook_install::{DoctorArgs, InstallArgs, doctor, install};
use super::remote::{Bearer, endpoint};
use crate::config::Config;
use crate::hook::pending::Pending;
use crate::hook::{self, Agent, Phase};
use crate::sidecar::{Sidecar, conn};

/// Arguments of `toolgate hook`.
#[derive(Debug, Args)]
pub struct HookArgs {
    #[command(subcommand)]
    pub command: HookCommand,
}

/// The agents toolgate has hooks for.
#[derive(Debug, Subcommand)]
pub enum HookCommand {
    /// Claude Code's PreToolUse, PostToolUse and PostToolUseFailure hooks.
    Claude(RunArgs),
    /// Codex CLI's PreToolUse and PostToolUse hooks.
    Codex(RunArgs),
    /// Gemini CLI's BeforeTool and AfterTool hooks.
    Gemini(RunArgs),
    /// GitHub Copilot CLI's preToolUse and postToolUse hooks.
    Copilot(RunArgs),
    /// OpenCode's tool.execute.before and tool.execute.after, from toolgate's plugin.
    #[command(name = "opencode")]
    OpenCode(RunArgs),
    /// Qwen Code's PreToolUse, PostToolUse and PostToolUseFailure hooks.
    Qwen(RunArgs),
    /// Writes (or with --uninstall takes out) toolgate's hooks in an agent's own
    /// configuration, with this binary's absolute path.
    Install(InstallArgs),
    /// Checks an agent's configuration, the sidecar, and how a sample call is decided; exit 1
    /// when something is wrong.
    Doctor(DoctorArgs),
}

/// Arguments of `toolgate hook <agent>`.
#[derive(Debug, Args)]
pub struct RunArgs {
    /// The running server: `host:port`, `http(s)://host:port` or `unix:/path`.
    #[arg(long, env = super::remote::SERVER_ENV, default_value = super::remote::DEFAULT_SERVER)]
    pub server: String,
    /// A configuration file whose `[hooks.<agent>]` section applies.
    #[arg(long, env = "TOOLGATE_CONFIG")]
    pub config: Option<PathBuf>,
    /// Let the call through when the sidecar cannot be reached (blocked by default).
    #[arg(long)]
    pub fail_open: bool,
    /// The bearer token, when the sidecar's auth is on (from the environment, so that it
    /// stays out of process listings).
    #[arg(long = "token-env", default_value = "TOOLGATE_TOKEN")]
    pub token_env: String,
    /// The hook's event, for Copilot CLI, whose payload does not name it (`preToolUse`,
    /// `postToolUse`, `postToolUseFailure`).
    #[arg(long)]
    pub event: Option<String>,
}

/// Runs `toolgate hook …`.
pub async fn hook(args: HookArgs) -> anyhow::Result<Exit> {
    let (agent, args) = match args.command {
        HookCommand::Claude(args) => (Agent::Claude, args),
        HookCommand::Codex(args) => (Agent::Codex, args),
        HookCommand::Gemini(args) => (Agent::Gemini, args),
        HookCommand::Copilot(args) => (Agent::Copilot, args),
        HookCommand::OpenCode(args) => (Agent::OpenCode, args),
        HookCommand::Qwen(args) => (Agent::Qwen, args),
        HookCommand::Install(args) => return install(args).await,
        HookCommand::Doctor(args) => return doctor(args).await,
    };
    run(agent, args).await
}

/// Answers one hook event of `agent`. Anything that keeps toolgate from deciding or recording
/// the call blocks it, in the agent's own blocking form, unless the operator chose fail-open.
async fn run(agent: Agent, args: RunArgs) -> anyhow::Result<Exit> {
    let config = match &args.config {
        Some(path) => Config::load(path)?,
        None => Config::default(),
    };
    let section = config.hooks.of(agent).clone();
    let fail_open = args.fail_open || section.fail_open;
    let mut input = String::new();
    let answer = match std::io::stdin().read_to_string(&mut input) {
        Err(e) => Err(anyhow::anyhow!("cannot read the hook's input: {e}")),
        Ok(_) => match hook::parse(agent, &input, args.event.as_deref()) {
            Err(e) => Err(anyhow::anyhow!(e)),
            Ok(call) if call.phase == Phase::Other => Ok(hook::unanswered(agent)),
            Ok(mut call) => {
                call.version = agent
                    .version_variable()
                    .and_then(|name| std::env::var(name).ok())
                    .or_else(|| hook::version::of_ancestors(agent))
                    .unwrap_or_default();
                async {
                    let channel = endpoint(&args.server)?
                        .connect_timeout(Duration::from_secs(2))
                        .connect()
                        .await
                        .map_err(|e| {
                            anyhow::anyhow!("cannot reach the sidecar at `{}`: {e}", args.server)
                        })?;
                    let mut sidecar = Sidecar::new(conn(channel.clone()), conn(channel));
                    if let Some(header) = Bearer::from_env(&args.token_env)?.header() {
                        sidecar = sidecar.authorized(header)?;
                    }
                    // Needed to pair the calls of an agent that names none; only to time the runs
                    // of one that does.
                    let pending = match Pending::open() {
                        Ok(pending) => Some(pending),
                        Err(_) if agent.names_calls() || !agent.keeps_pending() => None,
                        Err(e) => anyhow::bail!("cannot keep the call for its after-hook: {e}"),
                    };
                    let answer =
                        hook::handle(agent, call, &section, &mut sidecar, pending.as_ref()).await?;
                    anyhow::Ok(answer)
                }
                .await
            }
        },
    };
    let answer = match answer {
        Ok(answer) => answer,
        Err(e) if fail_open => {
            eprintln!("toolgate: {e:#} (fail-open: the call goes ahead unrecorded)");
            hook::unanswered(agent)
        }
        Err(e) => hook::blocked(agent, &format!("toolgate blocked this call: {e:#}")),
    };
    if !answer.stdout.is_empty() {
        println!("{}", answer.stdout);
    }
    if !answer.stderr.is_empty() {
        eprintln!("{}", answer.stderr);
    }
    // Answered: the agent waits for this process to end, and nothing is left to tear down
    // that the exit does not (the connection, the runtime).
    use std::io::Write;
    let _ = std::io::stdout().flush();
    std::process::exit(i32::from(answer.exit))
}
