//! Coding agents' tool hooks as Decide and Execute: each agent's wire protocol ([`claude`] for
//! Claude Code, Codex CLI and Qwen Code, [`gemini`], [`copilot`], [`opencode`]) turns its event
//! into a [`Call`], which [`call`] decides or reports in toolgate's terms through one
//! [`vocabulary`] of tools; [`pending`] pairs the events of agents that name no call;
//! [`install`] writes each agent's own configuration ([`codex`] has Codex trust it).

pub mod agent;
pub mod call;
pub mod claude;
pub mod codex;
pub mod copilot;
pub mod gemini;
pub mod install;
pub mod opencode;
pub mod pending;
pub mod version;
pub mod vocabulary;

use serde_json::Value;
use tonic::Status;

pub use agent::Agent;
pub use call::{Call, Phase};

use self::call::{Permission, Report};
use self::pending::Pending;
use crate::config::HookConfig;
use crate::sidecar::Sidecar;

/// What a command hook prints and how it exits.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Answer {
    pub stdout: String,
    pub stderr: String,
    pub exit: u8,
}

impl Answer {
    /// `stdout`, exit 0.
    pub fn stdout(stdout: String) -> Self {
        Self { stdout, stderr: String::new(), exit: 0 }
    }

    /// A call blocked because toolgate could not decide or record it: `stdout` (the agent's
    /// deny, where it reads one), the reason on stderr, and exit 2, which every agent takes as
    /// a block.
    pub fn blocking(stdout: String, reason: &str) -> Self {
        Self { stdout, stderr: reason.to_owned(), exit: 2 }
    }
}

/// The call in one hook event of `agent`, read from its input; `event` is the event the hook's
/// command names, for an agent whose payload does not (Copilot CLI).
pub fn parse(agent: Agent, input: &str, event: Option<&str>) -> Result<Call, String> {
    let what = |e: serde_json::Error| format!("the hook's input is not {agent}'s hook JSON: {e}");
    if event.is_some() && agent != Agent::Copilot {
        return Err(format!(
            "--event is for copilot, whose payload does not name its event: {agent}'s does"
        ));
    }
    let call = match agent {
        Agent::Claude | Agent::Codex | Agent::Qwen => {
            serde_json::from_str(input).map(claude::Payload::call).map_err(what)
        }
        Agent::Gemini => serde_json::from_str(input).map(gemini::Payload::call).map_err(what),
        Agent::Copilot => serde_json::from_str(input)
            .map(|payload: copilot::Payload| payload.call(event))
            .map_err(what),
        Agent::OpenCode => serde_json::from_str(input).map(opencode::Payload::call).map_err(what),
    }?;
    // An event without a tool is no tool event toolgate was installed for, or one it cannot
    // read: it is not let through unread.
    if call.phase != Phase::Other && call.tool.is_empty() {
        return Err(format!("the hook's input names no tool: not {agent}'s tool event"));
    }
    if call.phase == Phase::Other && !names_event(agent, input) {
        return Err(format!("the hook's input names no event: not {agent}'s hook JSON"));
    }
    Ok(call)
}

/// Whether an event's input names its event (Copilot CLI's never does).
fn names_event(agent: Agent, input: &str) -> bool {
    let field = match agent {
        Agent::Copilot => return true,
        Agent::OpenCode => "event",
        Agent::Claude | Agent::Codex | Agent::Qwen | Agent::Gemini => "hook_event_name",
    };
    serde_json::from_str::<Value>(input)
        .is_ok_and(|v| v.get(field).and_then(Value::as_str).is_some_and(|name| !name.is_empty()))
}

/// Decides or reports `call`, and the agent's answer to it. For an agent that names no call,
/// or does not time its runs, the before-hook leaves the id it decided under, and the time, for
/// the after-hook in `pending`.
pub async fn handle(
    agent: Agent,
    mut call: Call,
    config: &HookConfig,
    sidecar: &mut Sidecar,
    pending: Option<&Pending>,
) -> Result<Answer, Status> {
    let unpaired = |e: std::io::Error| Status::unavailable(format!("cannot pair the call: {e}"));
    let pending = pending.filter(|_| agent.keeps_pending());
    match call.phase {
        Phase::Before => {
            if call.id.is_empty() {
                call.id = Pending::fresh_id();
            }
            let verdict = call::decide(agent, &call, config, sidecar).await?;
            if let Some(pending) = pending
                && !matches!(verdict, Permission::Deny(_))
            {
                // The after-event names the call by the input it ran with.
                let mut input = call.input.clone();
                if let Permission::Allow(_, Some(Value::Object(rewritten))) = &verdict {
                    input.extend(rewritten.clone());
                }
                let args = Value::Object(input).to_string();
                let name = name(agent, &call, &args);
                match pending.leave(&name, &call.id) {
                    Ok(()) => {}
                    // Only the run's time is lost for an agent that names its calls.
                    Err(_) if agent.names_calls() => {}
                    Err(e) => return Err(unpaired(e)),
                }
            }
            Ok(answer(agent, Ok(&verdict)))
        }
        // A tool that failed ran too: its run is reported, with the error.
        Phase::After { .. } => {
            if let Some(pending) = pending {
                let args = Value::Object(call.input.clone()).to_string();
                let left = pending.take(&name(agent, &call, &args));
                let left = match left {
                    Ok(left) => left,
                    Err(_) if agent.names_calls() => None,
                    Err(e) => return Err(unpaired(e)),
                };
                if let Some((id, since)) = left {
                    if call.id.is_empty() {
                        call.id = id;
                    }
                    let ms = u64::try_from(since.as_millis()).unwrap_or(u64::MAX);
                    call.duration_ms = call.duration_ms.or(Some(ms));
                }
            }
            let report = call::report(agent, &call, config, sidecar).await?;
            Ok(answer(agent, Err(&report)))
        }
        Phase::Other => Ok(unanswered(agent)),
    }
}

/// What names a call between its before and after: its id where the agent gives one, or else
/// its tool and arguments.
fn name<'a>(agent: Agent, call: &'a Call, args: &'a str) -> Vec<&'a str> {
    if agent.names_calls() {
        vec![agent.name(), &call.session, "id", &call.id]
    } else {
        vec![agent.name(), &call.session, &call.tool, args]
    }
}

/// `agent`'s answer to a verdict (before) or a report (after).
fn answer(agent: Agent, verdict: Result<&Permission, &Report>) -> Answer {
    match agent {
        Agent::Claude | Agent::Codex | Agent::Qwen => claude::answer(verdict),
        Agent::Gemini => gemini::answer(verdict),
        Agent::Copilot => copilot::answer(verdict),
        Agent::OpenCode => opencode::answer(verdict),
    }
}

/// The answer that blocks `agent`'s call because toolgate could not decide or record it, with
/// `reason` for the model: the agent's deny on stdout where it reads one, and exit 2 with the
/// reason on stderr, which every agent takes as a block (Codex only with a reason, which this
/// always has).
pub fn blocked(agent: Agent, reason: &str) -> Answer {
    let deny = match agent {
        Agent::Claude | Agent::Codex | Agent::Qwen => String::new(),
        Agent::Gemini => gemini::deny(reason).to_string(),
        Agent::Copilot => copilot::deny(reason).to_string(),
        Agent::OpenCode => opencode::deny(reason).to_string(),
    };
    Answer::blocking(deny, reason)
}

/// The answer that lets `agent`'s event go on as without the hook.
pub fn unanswered(agent: Agent) -> Answer {
    match agent {
        Agent::Claude | Agent::Codex | Agent::Qwen | Agent::Gemini => {
            Answer::stdout("{}".to_owned())
        }
        Agent::Copilot => Answer::stdout(String::new()),
        Agent::OpenCode => Answer::stdout(opencode::allow().to_string()),
    }
}
