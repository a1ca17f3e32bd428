//! Codex CLI's trust in hooks: Codex runs only the hooks a person has trusted (it keeps the hash
//! of each trusted definition in its `config.toml`) and skips the others without a word. What
//! toolgate installs is trusted through Codex's own `codex app-server` (`hooks/list`, then
//! `config/batchWrite`), so that the hash is Codex's: toolgate's own hooks only, never another.

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use serde_json::{Value, json};

use super::agent::Agent;
use super::install::is_ours;

/// How long `codex app-server` may take to answer one request.
const ANSWER: Duration = Duration::from_secs(30);

/// A hook Codex knows of, and whether it trusts it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hook {
    pub key: String,
    pub command: String,
    pub trust: String,
    pub hash: String,
    /// The file it is defined in.
    pub source: String,
}

/// Why `codex app-server` could not say or change its trust in the hooks.
#[derive(Debug, thiserror::Error)]
pub enum CodexError {
    #[error("cannot run `{} app-server`: {error}", codex.display())]
    Run { codex: std::path::PathBuf, error: std::io::Error },
    #[error("no stdin")]
    NoStdin,
    #[error("no stdout")]
    NoStdout,
    #[error(transparent)]
    Io(#[from] std::io::Error),
    #[error("`codex app-server` did not answer {0}")]
    NoAnswer(String),
    #[error("`codex app-server` refused {method}: {error}")]
    Refused { method: String, error: String },
}

/// A running `codex app-server`.
struct AppServer {
    child: Child,
    stdin: ChildStdin,
    lines: mpsc::Receiver<String>,
    next: u64,
}

impl AppServer {
    fn start(codex: &Path, cwd: &Path) -> Result<Self, CodexError> {
        let mut child = std::process::Command::new(codex)
            .arg("app-server")
            .current_dir(cwd)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|error| CodexError::Run { codex: codex.to_owned(), error })?;
        let stdin = child.stdin.take().ok_or(CodexError::NoStdin)?;
        let stdout = child.stdout.take().ok_or(CodexError::NoStdout)?;
        let (send, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if send.send(line).is_err() {
                    break;
                }
            }
        });
        let mut server = Self { child, stdin, lines, next: 0 };
        server.call(
            "initialize",
            json!({ "clientInfo": { "name": "toolgate", "version": env!("CARGO_PKG_VERSION") } }),
        )?;
        writeln!(server.stdin, "{}", json!({ "method": "initialized" }))?;
        Ok(server)
    }

    fn call(&mut self, method: &str, params: Value) -> Result<Value, CodexError> {
        self.next += 1;
        writeln!(self.stdin, "{}", json!({ "id": self.next, "method": method, "params": params }))?;
        self.stdin.flush()?;
        loop {
            let line = self
                .lines
                .recv_timeout(ANSWER)
                .map_err(|_| CodexError::NoAnswer(method.to_owned()))?;
            let Ok(message) = serde_json::from_str::<Value>(&line) else { continue };
            if message["id"] == json!(self.next) {
                if let Some(error) = message.get("error") {
                    let error = error.to_string();
                    return Err(CodexError::Refused { method: method.to_owned(), error });
                }
                return Ok(message["result"].clone());
            }
        }
    }

    fn hooks(&mut self, cwd: &Path) -> Result<Vec<Hook>, CodexError> {
        let listed = self.call("hooks/list", json!({ "cwds": [cwd] }))?;
        let hooks = listed["data"].as_array().into_iter().flatten();
        let text = |hook: &Value, key: &str| hook[key].as_str().unwrap_or_default().to_owned();
        Ok(hooks
            .flat_map(|entry| entry["hooks"].as_array().cloned().unwrap_or_default())
            .map(|hook| Hook {
                key: text(&hook, "key"),
                command: text(&hook, "command"),
                trust: text(&hook, "trustStatus"),
                hash: text(&hook, "currentHash"),
                source: text(&hook, "sourcePath"),
            })
            .collect())
    }
}

impl Drop for AppServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// toolgate's hooks as Codex sees them from `cwd`, with its trust in each.
pub fn ours(codex: &Path, cwd: &Path) -> Result<Vec<Hook>, CodexError> {
    let mut server = AppServer::start(codex, cwd)?;
    let hooks = server.hooks(cwd)?;
    Ok(hooks.into_iter().filter(|h| is_ours(&h.command, Agent::Codex)).collect())
}

/// Trusts the hooks running exactly `line` (the command `hook install` just wrote) from the
/// file `file`, that Codex does not trust yet (new, or changed since); the ones it trusted now.
/// Nothing else is trusted: not another file's hook, not a line that only looks like ours.
pub fn trust(codex: &Path, cwd: &Path, file: &Path, line: &str) -> Result<Vec<Hook>, CodexError> {
    let mut server = AppServer::start(codex, cwd)?;
    let same = |source: &str| {
        let source = Path::new(source);
        source == file
            || source.canonicalize().ok().zip(file.canonicalize().ok()).is_some_and(|(a, b)| a == b)
    };
    let untrusted: Vec<Hook> = server
        .hooks(cwd)?
        .into_iter()
        .filter(|h| {
            h.command == line && same(&h.source) && h.trust != "trusted" && h.trust != "managed"
        })
        .collect();
    if !untrusted.is_empty() {
        let edits: Vec<Value> = untrusted
            .iter()
            .map(|h| {
                json!({ "keyPath": "hooks.state", "mergeStrategy": "upsert",
                             "value": { &h.key: { "trusted_hash": h.hash } } })
            })
            .collect();
        server.call("config/batchWrite", json!({ "edits": edits, "reloadUserConfig": true }))?;
    }
    Ok(untrusted)
}
