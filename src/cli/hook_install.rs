//! `toolgate hook install` and `toolgate hook doctor`: each agent's own configuration of
//! toolgate's hooks written, merged or taken out, and checked (docs/agents.md).

use std::path::PathBuf;
use std::time::Duration;

use clap::Args;
use serde_json::{Map, Value};

use super::Exit;
use super::remote::{Bearer, endpoint};
use crate::config::Config;
use crate::hook::call::{Call, Phase, decide_request};
use crate::hook::install::{self, Command, Places, Scope};
use crate::hook::{Agent, codex, vocabulary};
use crate::proto::gate_client::GateClient;

/// Where an agent's hooks go.
#[derive(Debug, Args)]
pub struct Target {
    /// The agent.
    #[arg(long, value_enum)]
    pub agent: Agent,
    /// The project's configuration (in `--dir`) or the user's (in the agent's home).
    #[arg(long, value_enum, default_value = "project")]
    pub scope: Scope,
    /// The project folder (by default the current one).
    #[arg(long)]
    pub dir: Option<PathBuf>,
    /// The running server the hook asks; by default the hook's own default
    /// (`TOOLGATE_SERVER`, else 127.0.0.1:50051).
    #[arg(long)]
    pub server: Option<String>,
    /// A configuration file whose `[hooks.<agent>]` section the hook applies.
    #[arg(long)]
    pub config: Option<PathBuf>,
    /// Codex's binary, to have Codex trust the hook (by default `codex` on PATH).
    #[arg(long)]
    pub codex: Option<PathBuf>,
}

/// Arguments of `toolgate hook install`.
#[derive(Debug, Args)]
pub struct InstallArgs {
    #[command(flatten)]
    pub target: Target,
    /// Take toolgate's hooks out again, and nothing else.
    #[arg(long)]
    pub uninstall: bool,
}

/// Arguments of `toolgate hook doctor`.
#[derive(Debug, Args)]
pub struct DoctorArgs {
    #[command(flatten)]
    pub target: Target,
    /// The bearer token, when the sidecar's auth is on.
    #[arg(long = "token-env", default_value = "TOOLGATE_TOKEN")]
    pub token_env: String,
}

impl Target {
    fn project(&self) -> anyhow::Result<PathBuf> {
        let dir = match &self.dir {
            Some(dir) => dir.clone(),
            None => std::env::current_dir()?,
        };
        Ok(std::path::absolute(dir)?)
    }

    fn file(&self) -> anyhow::Result<PathBuf> {
        Ok(install::file(self.agent, self.scope, &Places::here(self.project()?)))
    }

    fn codex(&self) -> Option<PathBuf> {
        self.codex.clone().or_else(|| on_path("codex"))
    }
}

fn on_path(program: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path).map(|dir| dir.join(program)).find(|p| p.is_file())
}

/// Writes, or takes out, toolgate's hooks in the agent's configuration.
pub async fn install(args: InstallArgs) -> anyhow::Result<Exit> {
    let target = &args.target;
    let (agent, file) = (target.agent, target.file()?);
    let config = match &target.config {
        Some(path) => Some(std::path::absolute(path)?),
        None => None,
    };
    let hold_ms = match &config {
        Some(path) => Config::load(path)?.hooks.of(agent).hold_ms,
        None => Config::default().hooks.of(agent).hold_ms,
    };
    let binary = std::env::current_exe()?.canonicalize()?;
    let command = Command {
        binary,
        server: target.server.clone(),
        config,
        timeout_ms: u64::from(hold_ms) + 30_000,
    };
    let current = match std::fs::read_to_string(&file) {
        Ok(text) => Some(text),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => anyhow::bail!("cannot read {}: {e}", file.display()),
    };
    let wanted = (!args.uninstall).then_some(&command);
    let edited = install::edit(agent, current.as_deref(), wanted)
        .map_err(|e| anyhow::anyhow!("{}: {e}", file.display()))?;
    match edited {
        Some(text) if current.as_deref() == Some(text.as_str()) => {
            println!("{}: already as it should be", file.display());
        }
        Some(text) => {
            if let Some(dir) = file.parent() {
                std::fs::create_dir_all(dir)?;
            }
            std::fs::write(&file, text)?;
            let did = if args.uninstall { "took toolgate's hooks out of" } else { "wrote" };
            println!("{did} {}", file.display());
        }
        None if current.is_some() => {
            std::fs::remove_file(&file)?;
            println!("removed {}", file.display());
        }
        None => println!("{}: nothing to take out", file.display()),
    }
    if agent == Agent::Codex && !args.uninstall {
        trust_codex(target, &file, &command.line(agent))?;
    }
    if agent == Agent::Gemini || (agent == Agent::Copilot && target.scope == Scope::Project) {
        println!("note: {agent} runs these hooks only in a folder it trusts (docs/agents.md)");
    }
    Ok(Exit::Ok)
}

/// Has Codex trust toolgate's hook (`line`, in `file`): without it, Codex skips it without a
/// word.
fn trust_codex(target: &Target, file: &std::path::Path, line: &str) -> anyhow::Result<()> {
    let Some(codex) = target.codex() else {
        println!(
            "warning: no `codex` on PATH (or --codex): Codex skips a hook it does not trust; \
             trust it in Codex (/hooks), or run this again with --codex"
        );
        return Ok(());
    };
    let trusted = codex::trust(&codex, &target.project()?, file, line)?;
    for hook in &trusted {
        println!("Codex now trusts {}", hook.key);
    }
    Ok(())
}

/// Says whether the agent's configuration runs toolgate's hook, whether the sidecar answers,
/// and what a sample call of the agent would be decided; exit 1 when something is wrong.
pub async fn doctor(args: DoctorArgs) -> anyhow::Result<Exit> {
    let target = &args.target;
    let (agent, file) = (target.agent, target.file()?);
    let mut wrong = false;
    let content = std::fs::read_to_string(&file).ok();
    let problems = install::check(agent, content.as_deref());
    for problem in &problems {
        println!("problem: {}: {problem}", file.display());
    }
    if problems.is_empty() {
        println!("ok: {} runs toolgate's hook for {agent}", file.display());
    }
    wrong |= !problems.is_empty();
    if agent == Agent::Codex {
        wrong |= !codex_trusts(target)?;
    }
    let server = target.server.clone().unwrap_or_else(|| {
        std::env::var(super::remote::SERVER_ENV)
            .unwrap_or_else(|_| super::remote::DEFAULT_SERVER.to_owned())
    });
    match sample(agent, &server, &args.token_env, target.project()?).await {
        Ok(said) => println!("ok: the sidecar at {server} answers; {said}"),
        Err(e) => {
            println!("problem: the sidecar at {server}: {e:#}");
            wrong = true;
        }
    }
    Ok(if wrong { Exit::Found } else { Exit::Ok })
}

/// Whether Codex trusts toolgate's hook (said either way).
fn codex_trusts(target: &Target) -> anyhow::Result<bool> {
    let Some(codex) = target.codex() else {
        println!("problem: no `codex` on PATH (or --codex) to ask whether it trusts the hook");
        return Ok(false);
    };
    let hooks = codex::ours(&codex, &target.project()?)?;
    let untrusted: Vec<_> =
        hooks.iter().filter(|h| h.trust != "trusted" && h.trust != "managed").collect();
    for hook in &untrusted {
        println!(
            "problem: Codex does not trust {} ({}): run `toolgate hook install --agent codex` again",
            hook.key, hook.trust
        );
    }
    if hooks.is_empty() {
        println!("problem: Codex lists no toolgate hook from {}", target.project()?.display());
    } else if untrusted.is_empty() {
        println!("ok: Codex trusts toolgate's hook");
    }
    Ok(!hooks.is_empty() && untrusted.is_empty())
}

/// One sample call of the agent's shell (`git status`), decided by the sidecar: recorded like
/// any call, in the session `toolgate-doctor`.
async fn sample(
    agent: Agent,
    server: &str,
    token_env: &str,
    cwd: PathBuf,
) -> anyhow::Result<String> {
    let channel = endpoint(server)?
        .connect_timeout(Duration::from_secs(2))
        .timeout(Duration::from_secs(10))
        .connect()
        .await?;
    let mut input = Map::new();
    input.insert("command".into(), Value::String("git status".into()));
    let call = Call {
        session: "toolgate-doctor".into(),
        tool: vocabulary::shell(agent).to_owned(),
        input,
        cwd: cwd.display().to_string(),
        ..Call::new(Phase::Before)
    };
    let config = Config::default();
    let mut request = tonic::Request::new(decide_request(agent, &call, config.hooks.of(agent)));
    if let Some(header) = Bearer::from_env(token_env)?.header() {
        request.metadata_mut().insert("authorization", header.parse()?);
    }
    let answer = GateClient::new(channel).decide(request).await?.into_inner();
    Ok(format!(
        "a sample call ({} `git status`) is decided {}: {}",
        call.tool,
        answer.outcome().as_str_name().to_lowercase(),
        answer.reason
    ))
}
