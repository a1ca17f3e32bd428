//! One vocabulary of tools across coding agents: each agent's tool names mapped to the
//! registry's tools (`bash` is `shell.exec`, `read` is `fs.read`…), and their arguments to the
//! fields one policy reads (`command`, `path`, `url`), however each agent spells them.
//!
//! The names come from each agent's own tool definitions at the version docs/agents.md pins. A
//! name an agent does not have here is looked up as it is, so it is an unregistered tool unless
//! the registry names it: never allowed because toolgate did not know it.

use serde_json::{Map, Value};

use super::agent::Agent;

/// What the policy sees of one agent's tool: the registry tool, and its arguments in the
/// vocabulary's fields (the agent's own fields kept beside them).
#[derive(Debug, Clone, PartialEq)]
pub struct Canonical {
    /// The registry tool.
    pub tool: String,
    /// The arguments, with `command`, `path` or `url` set from the agent's own field.
    pub args: Map<String, Value>,
    /// For an MCP tool, its server and its name there.
    pub mcp: Option<(String, String)>,
}

/// The registry tools of the vocabulary, what each of their calls names, and the one argument
/// the agent's tool reads it from. Only that argument counts: a model that adds a `path` of its
/// own beside the `file_path` the tool uses does not choose what the policy sees.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// `bash`: `command`, the command line as one string.
    Shell,
    /// `read`, `write`, `edit`, `ls`: `path`, from the given argument.
    File(&'static str, &'static str),
    /// `find`, `grep`: `path`, from the given argument, when given.
    Search(&'static str, &'static str),
    /// `fetch`: `url`, from the given argument (from the first URL in it, for a prompt). Not
    /// built into the registry: a fetch sends out, and a policy that wants it allows it by
    /// name (`[tools.fetch]`).
    Fetch(&'static str),
    /// `web_search`. Not built in either.
    WebSearch,
    /// A patch of files (Codex's `apply_patch`): `edit` (or `write` for a new file) of its one
    /// file, `patch` with `paths` when it touches several.
    Patch,
}

/// Each agent's tools, by the name its hooks report.
fn kind(agent: Agent, name: &str) -> Option<Kind> {
    use Kind::*;
    let kind = match (agent, name) {
        (Agent::Claude | Agent::Codex, "Bash") => Shell,
        (Agent::Claude | Agent::Codex, "Read") => File("read", "file_path"),
        (Agent::Claude | Agent::Codex, "Write") => File("write", "file_path"),
        (Agent::Claude | Agent::Codex, "Edit" | "MultiEdit") => File("edit", "file_path"),
        (Agent::Claude, "NotebookEdit") => File("edit", "notebook_path"),
        (Agent::Claude, "LS") => File("ls", "path"),
        (Agent::Claude, "Glob") => Search("find", "path"),
        (Agent::Claude, "Grep") => Search("grep", "path"),
        (Agent::Claude, "WebFetch") => Fetch("url"),
        (Agent::Claude, "WebSearch") => WebSearch,
        (Agent::Codex, "apply_patch") => Patch,
        (Agent::Gemini | Agent::Qwen, "run_shell_command") => Shell,
        (Agent::Gemini | Agent::Qwen, "read_file") => File("read", "file_path"),
        (Agent::Gemini | Agent::Qwen, "write_file") => File("write", "file_path"),
        (Agent::Gemini | Agent::Qwen, "replace" | "edit") => File("edit", "file_path"),
        (Agent::Gemini | Agent::Qwen, "list_directory") => File("ls", "dir_path"),
        (Agent::Gemini | Agent::Qwen, "glob") => Search("find", "dir_path"),
        (Agent::Gemini | Agent::Qwen, "search_file_content" | "grep_search") => {
            Search("grep", "dir_path")
        }
        (Agent::Gemini, "web_fetch") => Fetch("prompt"),
        (Agent::Qwen, "web_fetch") => Fetch("url"),
        (Agent::Gemini, "google_web_search") | (Agent::Qwen, "web_search") => WebSearch,
        (Agent::Copilot, "bash") => Shell,
        (Agent::Copilot, "view") => File("read", "path"),
        (Agent::Copilot, "create") => File("write", "path"),
        (Agent::Copilot, "edit" | "str_replace_editor" | "str_replace") => File("edit", "path"),
        (Agent::Copilot, "glob") => Search("find", "path"),
        (Agent::Copilot, "grep") => Search("grep", "path"),
        (Agent::Copilot, "web_fetch") => Fetch("url"),
        (Agent::OpenCode, "bash") => Shell,
        (Agent::OpenCode, "read") => File("read", "filePath"),
        (Agent::OpenCode, "write") => File("write", "filePath"),
        (Agent::OpenCode, "edit") => File("edit", "filePath"),
        (Agent::OpenCode, "list") => File("ls", "path"),
        (Agent::OpenCode, "glob") => Search("find", "path"),
        (Agent::OpenCode, "grep") => Search("grep", "path"),
        (Agent::OpenCode, "webfetch") => Fetch("url"),
        (Agent::OpenCode, "websearch") => WebSearch,
        _ => return None,
    };
    Some(kind)
}

/// The name of `agent`'s shell tool, as its hooks report it.
pub fn shell(agent: Agent) -> &'static str {
    match agent {
        Agent::Claude | Agent::Codex => "Bash",
        Agent::Gemini | Agent::Qwen => "run_shell_command",
        Agent::Copilot | Agent::OpenCode => "bash",
    }
}

/// `name` and `input` of `agent`'s tool call in the vocabulary.
pub fn canonical(agent: Agent, name: &str, input: &Map<String, Value>) -> Canonical {
    let mut args = input.clone();
    let text = |key: &str| input.get(key).and_then(Value::as_str).map(str::to_owned);
    let tool = match kind(agent, name) {
        None => return mcp(agent, name, args),
        Some(Kind::Shell) => {
            let command = input.get("command").and_then(command_line);
            set(&mut args, "command", command);
            "bash"
        }
        Some(Kind::File(tool, field) | Kind::Search(tool, field)) => {
            set(&mut args, "path", text(field));
            tool
        }
        Some(Kind::Fetch(field)) => {
            // Gemini CLI's web_fetch takes a prompt with the URLs in it: the first is the one
            // named (a policy that must see them all matches `args.prompt`).
            let url = if field == "prompt" {
                text(field).as_deref().and_then(first_url)
            } else {
                text(field)
            };
            set(&mut args, "url", url);
            "fetch"
        }
        Some(Kind::WebSearch) => "web_search",
        Some(Kind::Patch) => return patch(args),
    };
    Canonical { tool: tool.to_owned(), args, mcp: None }
}

/// A rewritten input (the vocabulary's arguments, rewritten by a policy) in `agent`'s own fields
/// for its tool `name`: the value of `path`, `command` or `url` goes back into the argument the
/// tool reads, and the vocabulary's own field goes where the tool has none. `None` when a
/// rewritten value cannot be put where the tool reads it (a URL inside a prompt).
pub fn agents_input(
    agent: Agent,
    name: &str,
    rewritten: &Map<String, Value>,
) -> Option<Map<String, Value>> {
    let mut input = rewritten.clone();
    let field = match kind(agent, name) {
        Some(Kind::File(_, field) | Kind::Search(_, field)) => Some(("path", field)),
        Some(Kind::Fetch(field)) => Some(("url", field)),
        Some(Kind::Shell | Kind::WebSearch | Kind::Patch) | None => None,
    };
    if let Some((ours, theirs)) = field
        && ours != theirs
        && let Some(value) = input.remove(ours)
    {
        if theirs == "prompt" {
            return None;
        }
        input.insert(theirs.to_owned(), value);
    }
    Some(input)
}

/// Sets the vocabulary's field `key` to what the tool reads, or removes it when the tool reads
/// nothing there: a value the model put in `key` itself is never what the policy sees.
fn set(args: &mut Map<String, Value>, key: &str, value: Option<String>) {
    match value {
        Some(value) => args.insert(key.to_owned(), Value::String(value)),
        None => args.remove(key),
    };
}

fn first_url(text: &str) -> Option<String> {
    text.split_whitespace()
        .find(|word| word.starts_with("https://") || word.starts_with("http://"))
        .map(|url| url.trim_end_matches([',', '.', ')', '"', '\'']).to_owned())
}

/// A command line as one string: the text as given; an argument vector (Codex's) as the
/// script of a `sh -c`/`bash -lc` it wraps, or else its words joined by spaces.
fn command_line(value: &Value) -> Option<String> {
    match value {
        Value::String(line) => Some(line.clone()),
        Value::Array(words) => {
            let words: Vec<&str> = words.iter().map(Value::as_str).collect::<Option<_>>()?;
            match words.as_slice() {
                [shell, flag, script]
                    if ["sh", "bash", "zsh", "/bin/sh", "/bin/bash", "/usr/bin/bash"]
                        .contains(shell)
                        && ["-c", "-lc"].contains(flag) =>
                {
                    Some((*script).to_owned())
                }
                _ => Some(words.join(" ")),
            }
        }
        _ => None,
    }
}

/// An MCP tool, as each agent names them: `mcp__server__tool` (Claude Code, Codex), or the
/// server and tool the payload names apart; anything else is the agent's name as it is.
fn mcp(agent: Agent, name: &str, args: Map<String, Value>) -> Canonical {
    let split = match agent {
        Agent::Claude | Agent::Codex | Agent::Gemini | Agent::Qwen | Agent::Copilot => {
            name.strip_prefix("mcp__").and_then(|rest| rest.split_once("__"))
        }
        Agent::OpenCode => None,
    };
    match split {
        Some((server, tool)) if !server.is_empty() && !tool.is_empty() => Canonical {
            tool: format!("mcp__{server}__{tool}"),
            args,
            mcp: Some((server.to_owned(), tool.to_owned())),
        },
        _ => Canonical { tool: name.to_owned(), args, mcp: None },
    }
}

/// Codex's `apply_patch`: the files its patch adds, updates, deletes or moves to.
fn patch(mut args: Map<String, Value>) -> Canonical {
    let text = args.get("command").or_else(|| args.get("input")).and_then(Value::as_str);
    let mut paths: Vec<String> = Vec::new();
    let mut adds = true;
    for line in text.unwrap_or_default().lines() {
        let named = [
            ("*** Add File: ", true),
            ("*** Update File: ", false),
            ("*** Delete File: ", false),
            ("*** Move to: ", false),
        ]
        .iter()
        // Codex trims a hunk's header line before reading it: so does this, so that an indented
        // header names its file here as it does there (a context line that looks like one only
        // adds a file, which can only make the call look wider).
        .find_map(|(marker, add)| line.trim().strip_prefix(marker).map(|path| (path.trim(), *add)));
        if let Some((path, add)) = named {
            adds &= add;
            if !paths.iter().any(|p| p == path) {
                paths.push(path.to_owned());
            }
        }
    }
    let tool = match paths.as_slice() {
        [path] => {
            args.insert("path".into(), Value::String(path.clone()));
            if adds { "write" } else { "edit" }
        }
        _ => {
            let list = paths.into_iter().map(Value::String).collect();
            args.insert("paths".into(), Value::Array(list));
            "patch"
        }
    };
    Canonical { tool: tool.to_owned(), args, mcp: None }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn call(agent: Agent, name: &str, input: Value) -> Canonical {
        canonical(agent, name, input.as_object().unwrap())
    }

    #[test]
    fn every_agents_shell_is_bash_with_one_command_line() {
        let cases = [
            (Agent::Claude, "Bash", json!({"command": "git status"})),
            (Agent::Codex, "Bash", json!({"command": "git status"})),
            (Agent::Codex, "Bash", json!({"command": ["bash", "-lc", "git status"]})),
            (Agent::Gemini, "run_shell_command", json!({"command": "git status"})),
            (Agent::Qwen, "run_shell_command", json!({"command": "git status"})),
            (Agent::Copilot, "bash", json!({"command": "git status"})),
            (Agent::OpenCode, "bash", json!({"command": "git status"})),
        ];
        for (agent, name, input) in cases {
            let c = call(agent, name, input);
            assert_eq!((c.tool.as_str(), &c.args["command"]), ("bash", &json!("git status")));
        }
        assert_eq!(
            call(Agent::Codex, "Bash", json!({"command": ["git", "diff"]})).args["command"],
            "git diff"
        );
    }

    #[test]
    fn every_agents_file_tools_name_their_path() {
        let cases = [
            (Agent::Claude, "Read", json!({"file_path": "/w/a"}), "read"),
            (Agent::Claude, "NotebookEdit", json!({"notebook_path": "/w/a"}), "edit"),
            (Agent::Gemini, "read_file", json!({"file_path": "/w/a"}), "read"),
            (Agent::Gemini, "replace", json!({"file_path": "/w/a"}), "edit"),
            (Agent::Gemini, "list_directory", json!({"dir_path": "/w/a"}), "ls"),
            (Agent::Copilot, "view", json!({"path": "/w/a"}), "read"),
            (Agent::Copilot, "create", json!({"path": "/w/a"}), "write"),
            (Agent::OpenCode, "write", json!({"filePath": "/w/a"}), "write"),
        ];
        for (agent, name, input, tool) in cases {
            let c = call(agent, name, input);
            assert_eq!((c.tool.as_str(), &c.args["path"]), (tool, &json!("/w/a")), "{name}");
        }
    }

    #[test]
    fn only_the_argument_the_tool_reads_names_the_path() {
        let c = call(Agent::Claude, "Read", json!({"file_path": "/etc/shadow", "path": "/w/a"}));
        assert_eq!(c.args["path"], "/etc/shadow");
        let c = call(Agent::OpenCode, "read", json!({"file_path": "/w/a", "filePath": "/etc/x"}));
        assert_eq!(c.args["path"], "/etc/x");
        let c = call(Agent::Claude, "Read", json!({"path": "/w/a"}));
        assert_eq!(c.args.get("path"), None);
        let c = call(Agent::Gemini, "web_fetch", json!({"url": "https://ok", "prompt": "x"}));
        assert_eq!(c.args.get("url"), None);
    }

    #[test]
    fn a_rewritten_path_goes_back_where_the_tool_reads_it() {
        let rewritten =
            json!({"file_path": "/home/u/.bashrc", "path": "/w/scratch", "content": "x"});
        let input = agents_input(Agent::Claude, "Write", rewritten.as_object().unwrap()).unwrap();
        assert_eq!(Value::Object(input), json!({"file_path": "/w/scratch", "content": "x"}));
        let input =
            agents_input(Agent::Copilot, "view", json!({"path": "/w/a"}).as_object().unwrap());
        assert_eq!(input.unwrap()["path"], "/w/a");
        let fetch = json!({"prompt": "see https://a", "url": "https://b"});
        assert_eq!(agents_input(Agent::Gemini, "web_fetch", fetch.as_object().unwrap()), None);
    }

    #[test]
    fn fetches_name_their_url_even_inside_a_prompt() {
        let c = call(Agent::Claude, "WebFetch", json!({"url": "https://a.example/x"}));
        assert_eq!((c.tool.as_str(), &c.args["url"]), ("fetch", &json!("https://a.example/x")));
        let prompt = json!({"prompt": "summarize https://b.example/y, please"});
        let c = call(Agent::Gemini, "web_fetch", prompt);
        assert_eq!(c.args["url"], "https://b.example/y");
    }

    #[test]
    fn mcp_tools_name_their_server() {
        let c = call(Agent::Claude, "mcp__github__create_issue", json!({}));
        assert_eq!(c.tool, "mcp__github__create_issue");
        assert_eq!(c.mcp, Some(("github".into(), "create_issue".into())));
        assert_eq!(call(Agent::Claude, "mcp____x", json!({})).mcp, None);
    }

    #[test]
    fn an_unknown_name_stays_as_it_is() {
        let c = call(Agent::Gemini, "Bash", json!({"command": "rm -rf /"}));
        assert_eq!((c.tool.as_str(), c.mcp), ("Bash", None));
        assert_eq!(call(Agent::Codex, "exec_command", json!({})).tool, "exec_command");
    }

    #[test]
    fn a_patch_is_an_edit_of_its_one_file_and_a_patch_of_several() {
        let one = "*** Begin Patch\n*** Update File: src/a.rs\n@@\n-x\n+y\n*** End Patch\n";
        let c = call(Agent::Codex, "apply_patch", json!({"command": one}));
        assert_eq!((c.tool.as_str(), &c.args["path"]), ("edit", &json!("src/a.rs")));
        let new = "*** Begin Patch\n*** Add File: hello.txt\n+hi\n*** End Patch\n";
        assert_eq!(call(Agent::Codex, "apply_patch", json!({"command": new})).tool, "write");
        let two = "*** Begin Patch\n*** Add File: a\n+1\n*** Delete File: /etc/b\n*** End Patch\n";
        let indented = "*** Begin Patch\n  *** Add File: /home/u/.bashrc\n+x\n*** Update File: /w/a\n@@\n-x\n+y\n*** End Patch\n";
        let c = call(Agent::Codex, "apply_patch", json!({"command": indented}));
        assert_eq!(
            (c.tool.as_str(), &c.args["paths"]),
            ("patch", &json!(["/home/u/.bashrc", "/w/a"]))
        );
        let c = call(Agent::Codex, "apply_patch", json!({"command": two}));
        assert_eq!((c.tool.as_str(), &c.args["paths"]), ("patch", &json!(["a", "/etc/b"])));
    }
}
