//! Which version of an agent made a call, where the agent does not say (only Copilot CLI tells
//! its hooks, in its environment): read from the agent's own package, found from the processes
//! the hook runs under. The hook's ancestors (the agent, and the shell it runs hooks in) are
//! looked at by their executable and their script arguments, and from each the folders above
//! are searched for the `package.json` of the agent's npm package.
//!
//! It names a version only from a package of the agent's own name; it is what the process
//! tree shows, no more: the harness that runs the hook could show anything, like any of its
//! words on the trail.

use std::fs;
use std::path::{Path, PathBuf};

use serde_json::Value;

use super::agent::Agent;

/// How many ancestors are looked at, and how many folders above each path.
const ANCESTORS: usize = 6;
const FOLDERS_UP: usize = 8;
/// The largest `package.json` read.
const MAX_PACKAGE: u64 = 256 * 1024;

/// The agent's npm packages: their names, or how they begin (the platform packages).
fn packages(agent: Agent) -> &'static [&'static str] {
    match agent {
        Agent::Claude => &["@anthropic-ai/claude-code", "@anthropic-ai/claude-code-"],
        Agent::Codex => &["@openai/codex"],
        Agent::Gemini => &["@google/gemini-cli"],
        Agent::Copilot => &["@github/copilot"],
        Agent::OpenCode => &["opencode-ai", "opencode-linux-", "opencode-darwin-"],
        Agent::Qwen => &["@qwen-code/qwen-code"],
    }
}

/// The version of `agent` the hook runs under, when its package can be found.
pub fn of_ancestors(agent: Agent) -> Option<String> {
    let mut pid = rustix::process::getppid()?.as_raw_nonzero().get();
    for _ in 0..ANCESTORS {
        let proc = PathBuf::from(format!("/proc/{pid}"));
        let mut paths: Vec<PathBuf> = fs::read_link(proc.join("exe")).into_iter().collect();
        if let Ok(cmdline) = fs::read(proc.join("cmdline")) {
            paths.extend(
                cmdline
                    .split(|b| *b == 0)
                    .filter_map(|arg| std::str::from_utf8(arg).ok())
                    .filter(|arg| arg.starts_with('/'))
                    .map(PathBuf::from),
            );
        }
        // A script run through a link (`node_modules/.bin/gemini`) is found where it lives.
        let linked: Vec<PathBuf> = paths.iter().filter_map(|p| p.canonicalize().ok()).collect();
        paths.extend(linked);
        if let Some(version) = paths.iter().find_map(|path| version_above(agent, path)) {
            return Some(version);
        }
        pid = parent(pid)?;
        if pid <= 1 {
            return None;
        }
    }
    None
}

/// The parent of process `pid`, from `/proc/<pid>/stat` (the field after the command's name).
fn parent(pid: i32) -> Option<i32> {
    let stat = fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let after_name = &stat[stat.rfind(')')? + 1..];
    after_name.split_whitespace().nth(1)?.parse().ok()
}

/// The version in the first `package.json` of the agent's package in a folder above `path`.
fn version_above(agent: Agent, path: &Path) -> Option<String> {
    path.ancestors().skip(1).take(FOLDERS_UP).find_map(|dir| {
        let file = dir.join("package.json");
        let size = fs::metadata(&file).ok()?.len();
        if size > MAX_PACKAGE {
            return None;
        }
        let package: Value = serde_json::from_slice(&fs::read(&file).ok()?).ok()?;
        let name = package.get("name")?.as_str()?;
        packages(agent)
            .iter()
            .any(|ours| name == *ours || (ours.ends_with('-') && name.starts_with(ours)))
            .then(|| package.get("version")?.as_str().map(str::to_owned))
            .flatten()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_version_is_read_from_the_agents_own_package_above_its_files() {
        let dir = tempfile::tempdir().unwrap();
        let package = dir.path().join("node_modules/@google/gemini-cli");
        fs::create_dir_all(package.join("dist")).unwrap();
        fs::write(
            package.join("package.json"),
            r#"{"name": "@google/gemini-cli", "version": "0.61.0"}"#,
        )
        .unwrap();
        let script = package.join("dist/index.js");
        assert_eq!(version_above(Agent::Gemini, &script).as_deref(), Some("0.61.0"));
        // Another agent's package, or a package of another name, names nothing.
        assert_eq!(version_above(Agent::Qwen, &script), None);
        fs::write(
            package.join("package.json"),
            r#"{"name": "gemini-cli-lookalike", "version": "9"}"#,
        )
        .unwrap();
        assert_eq!(version_above(Agent::Gemini, &script), None);
    }

    #[test]
    fn a_process_has_a_parent() {
        let me = i32::try_from(std::process::id()).unwrap();
        assert!(parent(me).is_some_and(|p| p > 0));
    }
}
