//! The gateway over stdio: the MCP client launched toolgate as its server, and toolgate
//! launches the real server as its child. Lines are relayed both ways as they came, except
//! `tools/call`, which goes through the gate, and its response, which comes back through it.
//!
//! The child runs in its own process group (an `npx` server is a tree of processes) and is
//! stopped as MCP's stdio transport says: its stdin closed, then SIGTERM, then SIGKILL.

use std::collections::{HashMap, HashSet};
use std::process::{ExitStatus, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;
use serde_json::Value;
use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::process::{Child, Command};
use tokio::sync::mpsc;
use tokio::task::JoinSet;

use super::call::{Admission, Call, Caller, Gate, Upstream};
use super::frame::{Line, MAX_LINE_BYTES, next_line};
use super::message::{self, Message, key};

/// The calls on their way, by request id: where their upstream fate goes.
#[derive(Debug, Default)]
struct Calls {
    open: HashMap<String, mpsc::Sender<Upstream>>,
    /// Calls that timed out or were cancelled: a late response is dropped, not relayed.
    abandoned: HashSet<String>,
    /// `tools/list` requests, whose answers go through the gate (`Gate::listed`).
    listings: HashSet<String>,
}

type Shared = Arc<Mutex<Calls>>;

/// What a call's task shares with the relay: the open calls, and the two ways out.
#[derive(Debug, Clone)]
struct Pipes {
    calls: Shared,
    to_client: mpsc::UnboundedSender<String>,
    to_server: mpsc::UnboundedSender<String>,
}

/// How the relay ended.
#[derive(Debug)]
pub enum Ended {
    /// The client closed its end; the server was stopped.
    ClientLeft,
    /// The server exited first, with this status.
    ServerExited(ExitStatus),
}

/// Launches `command` and relays between the client (`input`, `output`) and it until either
/// side ends, or `stopping` resolves (a signal: as if the client left). `grace` is how long
/// the server gets at each step of its stop.
pub async fn relay(
    gate: Gate,
    caller: Caller,
    command: &[String],
    grace: Duration,
    input: impl AsyncRead + Unpin + Send + 'static,
    output: impl AsyncWrite + Unpin + Send + 'static,
    stopping: impl std::future::Future<Output = ()>,
) -> anyhow::Result<Ended> {
    let (program, args) =
        command.split_first().ok_or_else(|| anyhow::anyhow!("no server command given"))?;
    let mut child = Command::new(program)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .process_group(0)
        .kill_on_drop(true)
        .spawn()
        .map_err(|e| anyhow::anyhow!("cannot start the MCP server `{program}`: {e}"))?;
    // Its own process group: the pid is the group's id, taken now, while the child is not reaped.
    let group = child.id().and_then(|id| i32::try_from(id).ok()).map(Pid::from_raw);
    let (Some(child_in), Some(child_out)) = (child.stdin.take(), child.stdout.take()) else {
        anyhow::bail!("the MCP server's stdio could not be piped");
    };
    let (to_client, client_lines) = mpsc::unbounded_channel::<String>();
    let (to_server, server_lines) = mpsc::unbounded_channel::<String>();
    let writing_client = tokio::spawn(write_lines(client_lines, output));
    let writing_server = tokio::spawn(write_lines(server_lines, child_in));
    let calls = Shared::default();
    let mut reading_server = tokio::spawn(from_server(
        BufReader::new(child_out),
        calls.clone(),
        to_client.clone(),
        (gate.clone(), caller.actor.clone()),
    ));

    let pipes = Pipes { calls: calls.clone(), to_client: to_client.clone(), to_server };
    let mut tasks = JoinSet::new();
    let mut input = BufReader::new(input);
    let ended = tokio::select! {
        () = from_client(&mut input, &gate, &caller, &pipes, &mut tasks) => None,
        () = stopping => None,
        status = child.wait() => Some(status?),
    };
    let ended = match ended {
        // The client left: the calls still open end as the server answers them (within the
        // grace), then the server is stopped.
        None => {
            let _ = tokio::time::timeout(grace, join_all(&mut tasks)).await;
            drop(pipes);
            fail_open_calls(&calls, "the MCP client disconnected");
            stop(&mut child, group, grace).await;
            Ended::ClientLeft
        }
        // The server is gone: the calls still open fail, and are recorded so.
        Some(status) => {
            drop(pipes);
            signal_group(group, Signal::SIGTERM);
            let _ = tokio::time::timeout(grace, &mut reading_server).await;
            fail_open_calls(&calls, &format!("the MCP server exited ({status}) before answering"));
            Ended::ServerExited(status)
        }
    };
    // What is left of the server's process group (its children that held on) goes too.
    signal_group(group, Signal::SIGKILL);
    reading_server.abort();
    let _ = tokio::time::timeout(grace, join_all(&mut tasks)).await;
    tasks.abort_all();
    drop(to_client);
    let _ = tokio::time::timeout(grace, writing_client).await;
    writing_server.abort();
    Ok(ended)
}

/// Reads the client's lines until its end, handing each `tools/call` to a task of its own.
async fn from_client(
    input: &mut (impl tokio::io::AsyncBufRead + Unpin),
    gate: &Gate,
    caller: &Caller,
    pipes: &Pipes,
    tasks: &mut JoinSet<()>,
) {
    let Pipes { calls, to_client, to_server } = pipes;
    loop {
        let line = match next_line(input, MAX_LINE_BYTES).await {
            Ok(Some(Line::Text(line))) => line,
            Ok(Some(Line::TooLong)) => {
                answer(
                    to_client,
                    &message::error(&Value::Null, message::INVALID_REQUEST, "message too long"),
                );
                continue;
            }
            Ok(Some(Line::NotUtf8)) => {
                answer(to_client, &message::error(&Value::Null, message::PARSE_ERROR, "not UTF-8"));
                continue;
            }
            Ok(None) | Err(_) => return,
        };
        if line.trim().is_empty() {
            continue;
        }
        let (message, value) = match Message::parse(&line) {
            Ok(parsed) => parsed,
            Err(bad) => {
                answer(to_client, &message::error(&Value::Null, bad.code(), &bad.to_string()));
                continue;
            }
        };
        match message {
            // An id that names a call in flight would have its answer taken for the call's.
            Message::Request { id, .. } if lock(calls).open.contains_key(&key(&id)) => {
                let error = "the id is in use by a tools/call in flight";
                answer(to_client, &message::error(&id, message::INVALID_REQUEST, error));
            }
            Message::Request { id, method, params } if method == "tools/call" => {
                let (sender, inbox) = mpsc::channel(4);
                lock(calls).open.insert(key(&id), sender);
                let call = Call { caller: caller.clone(), id, params, inbox };
                tasks.spawn(one_call(gate.clone(), call, pipes.clone()));
            }
            Message::Notification { method, params } if method == "notifications/cancelled" => {
                let open =
                    params.get("requestId").and_then(|id| lock(calls).open.get(&key(id)).cloned());
                match open {
                    // The call's task relays the cancellation, if the call went upstream.
                    Some(call) => {
                        let _ = call.try_send(Upstream::Cancelled);
                    }
                    None => {
                        let _ = to_server.send(value.to_string());
                    }
                }
            }
            Message::Request { id, method, .. } if method == "tools/list" => {
                lock(calls).listings.insert(key(&id));
                let _ = to_server.send(value.to_string());
            }
            _ => {
                let _ = to_server.send(value.to_string());
            }
        }
    }
}

/// One `tools/call`, from its decision to its answer.
async fn one_call(gate: Gate, mut call: Call, pipes: Pipes) {
    let Pipes { calls, to_client, to_server } = pipes;
    let call_key = key(&call.id);
    let relayed = gate.admit(&mut call).await;
    let Call { id, mut inbox, .. } = call;
    let relayed = match relayed {
        Admission::Relay(relayed) => relayed,
        Admission::Answer(result) => {
            lock(&calls).open.remove(&call_key);
            answer(&to_client, &message::result(&id, result));
            return;
        }
        Admission::Dropped => {
            lock(&calls).open.remove(&call_key);
            return;
        }
    };
    let started = Instant::now();
    let _ = to_server.send(relayed.request(&id).to_string());
    let upstream = tokio::select! {
        upstream = inbox.recv() => upstream.unwrap_or(Upstream::Failed("the MCP gateway is stopping".into())),
        () = tokio::time::sleep(relayed.timeout) => Upstream::TimedOut,
    };
    {
        let mut calls = lock(&calls);
        calls.open.remove(&call_key);
        if matches!(upstream, Upstream::TimedOut | Upstream::Cancelled) {
            calls.abandoned.insert(call_key);
        }
    }
    match upstream {
        Upstream::TimedOut => {
            let _ = to_server
                .send(message::cancelled(&id, "toolgate: the call's timeout passed").to_string());
        }
        Upstream::Cancelled => {
            let _ = to_server.send(message::cancelled(&id, "cancelled by the client").to_string());
        }
        _ => {}
    }
    if let Some(response) = gate.finish(relayed, &id, started, upstream).await {
        answer(&to_client, &response);
    }
}

/// Reads the server's lines to their end: responses to open calls go to their tasks, the
/// answers to `tools/list` through the gate, the rest to the client as the gateway read
/// them. A line that is not a message is dropped and logged.
async fn from_server(
    mut output: impl tokio::io::AsyncBufRead + Unpin,
    calls: Shared,
    to_client: mpsc::UnboundedSender<String>,
    (gate, actor): (Gate, String),
) {
    loop {
        let line = match next_line(&mut output, MAX_LINE_BYTES).await {
            Ok(Some(Line::Text(line))) => line,
            Ok(Some(bad)) => {
                tracing::warn!(line = ?bad, "the MCP server wrote a line that is not a message; dropped");
                continue;
            }
            Ok(None) | Err(_) => return,
        };
        if line.trim().is_empty() {
            continue;
        }
        match Message::parse(&line) {
            Ok((Message::Response { id }, value)) => {
                let call_key = key(&id);
                let mut calls = lock(&calls);
                if let Some(call) = calls.open.get(&call_key) {
                    let _ = call.try_send(Upstream::Response(value));
                } else if calls.listings.remove(&call_key) {
                    let (gate, actor, to_client) = (gate.clone(), actor.clone(), to_client.clone());
                    tokio::spawn(async move {
                        let mut value = value;
                        gate.listed(&actor, &mut value).await;
                        answer(&to_client, &value);
                    });
                } else if !calls.abandoned.remove(&call_key) {
                    drop(calls);
                    let _ = to_client.send(value.to_string());
                }
            }
            Ok((_, value)) => {
                let _ = to_client.send(value.to_string());
            }
            Err(e) => {
                tracing::warn!(error = %e, "the MCP server wrote a line that is not a message; dropped")
            }
        }
    }
}

/// Ends every open call with `why`.
fn fail_open_calls(calls: &Shared, why: &str) {
    for (_, call) in lock(calls).open.drain() {
        let _ = call.try_send(Upstream::Failed(why.to_owned()));
    }
}

/// Writes each line, and its `\n`, as it comes.
async fn write_lines(mut lines: mpsc::UnboundedReceiver<String>, mut to: impl AsyncWrite + Unpin) {
    while let Some(mut line) = lines.recv().await {
        line.push('\n');
        if to.write_all(line.as_bytes()).await.is_err() || to.flush().await.is_err() {
            return;
        }
    }
    let _ = to.shutdown().await;
}

fn answer(to_client: &mpsc::UnboundedSender<String>, message: &Value) {
    let _ = to_client.send(message.to_string());
}

/// Stops the server: its stdin is closed already; then SIGTERM to its process group after
/// `grace`, and SIGKILL after as long again.
async fn stop(child: &mut Child, group: Option<Pid>, grace: Duration) {
    if tokio::time::timeout(grace, child.wait()).await.is_ok() {
        return;
    }
    for signal in [Signal::SIGTERM, Signal::SIGKILL] {
        signal_group(group, signal);
        if tokio::time::timeout(grace, child.wait()).await.is_ok() {
            return;
        }
    }
    let _ = child.kill().await;
}

/// Sends `signal` to the server's process group, if it still has members.
fn signal_group(group: Option<Pid>, signal: Signal) {
    if let Some(group) = group {
        let _ = killpg(group, signal);
    }
}

async fn join_all(tasks: &mut JoinSet<()>) {
    while tasks.join_next().await.is_some() {}
}

fn lock(calls: &Shared) -> std::sync::MutexGuard<'_, Calls> {
    calls.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}
