//! The gateway over stdio: the MCP client launched toolgate as its server, and toolgate
//! launches the real server as its child. Lines are relayed both ways as they came, except
//! `tools/call`, which goes through the gate, and its response, which comes back through it.
//!
//! The child runs in its own process group (an `npx` server is a tree of processes) and is
//! stopped as MCP's stdio transport says: its stdin closed, then SIGTERM, then SIGKILL.

use std::collections::HashSet;
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

use super::Caller;
use super::frame::{Line, MAX_LINE_BYTES, next_line};
use super::ids::{Answered, Ids, MAX_IN_FLIGHT};
use super::message::{self, Message, key};
use super::refusals::{Peer, Refused};
use super::upstream::call::{Admission, Call};
use super::upstream::{Upstream, UpstreamGate};

/// What a request in flight to the server is for.
#[derive(Debug)]
enum Purpose {
    /// A `tools/call`: its task waits for the answer.
    Call(mpsc::Sender<Upstream>),
    /// A `tools/list`: its answer goes through the gate (`UpstreamGate::listed`).
    List,
    /// An `initialize` (or `server/discover`): its instructions go through the gate
    /// (`UpstreamGate::instructed`).
    Instructions,
    /// Anything else: its answer goes back under the client's id.
    Other,
}

/// The requests in flight both ways.
#[derive(Debug, Default)]
struct Calls {
    /// The client's requests, under the gateway's ids.
    ids: Ids<Purpose>,
    /// The server's requests to the client not yet answered, by id: each gets one response.
    from_server: HashSet<String>,
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

/// Why the relay to a server over stdio could not run.
#[derive(Debug, thiserror::Error)]
pub enum StdioError {
    #[error("no server command given")]
    NoCommand,
    #[error("cannot start the MCP server `{program}`: {error}")]
    Start { program: String, error: std::io::Error },
    #[error("the MCP server's stdio could not be piped")]
    Piped,
    #[error(transparent)]
    Wait(std::io::Error),
}

/// Launches `command` and relays between the client (`input`, `output`) and it until either
/// side ends, or `stopping` resolves (a signal: as if the client left). `grace` is how long
/// the server gets at each step of its stop.
pub async fn relay(
    gate: UpstreamGate,
    caller: Caller,
    command: &[String],
    grace: Duration,
    input: impl AsyncRead + Unpin + Send + 'static,
    output: impl AsyncWrite + Unpin + Send + 'static,
    stopping: impl std::future::Future<Output = ()>,
) -> Result<Ended, StdioError> {
    let (program, args) = command.split_first().ok_or(StdioError::NoCommand)?;
    let mut child = Command::new(program)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .process_group(0)
        .kill_on_drop(true)
        .spawn()
        .map_err(|error| StdioError::Start { program: program.clone(), error })?;
    // Its own process group: the pid is the group's id, taken now, while the child is not reaped.
    let group = child.id().and_then(|id| i32::try_from(id).ok()).map(Pid::from_raw);
    let (Some(child_in), Some(child_out)) = (child.stdin.take(), child.stdout.take()) else {
        return Err(StdioError::Piped);
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
        (gate.clone(), caller.clone()),
    ));

    let pipes = Pipes { calls: calls.clone(), to_client: to_client.clone(), to_server };
    let mut tasks = JoinSet::new();
    let mut input = BufReader::new(input);
    let ended = tokio::select! {
        () = from_client(&mut input, &gate, &caller, &pipes, &mut tasks) => None,
        () = stopping => None,
        status = child.wait() => Some(status.map_err(StdioError::Wait)?),
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

/// Reads the client's lines until its end. Each request goes up under an id of the gateway's
/// (`ids`); each `tools/call` is handed to a task of its own.
async fn from_client(
    input: &mut (impl tokio::io::AsyncBufRead + Unpin),
    gate: &UpstreamGate,
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
            Message::Request { id, .. } if message::is_task_request(&value) => {
                answer(
                    to_client,
                    &message::error(&id, message::METHOD_NOT_FOUND, message::NO_TASKS),
                );
            }
            Message::Request { id, method, params } => {
                request((gate, caller), pipes, tasks, (id, &method, params), value);
            }
            Message::Notification { method, params } if method == "notifications/cancelled" => {
                cancelled(calls, to_server, params.get("requestId"), value);
            }
            Message::Notification { .. } => {
                let _ = to_server.send(value.to_string());
            }
            Message::Response { id } => {
                if lock(calls).from_server.remove(&key(&id)) {
                    let _ = to_server.send(value.to_string());
                } else {
                    let detail = format!("id {id}");
                    gate.refusals().refuse(
                        &caller.session,
                        Peer::Client,
                        Refused::UnknownResponse,
                        &detail,
                    );
                }
            }
        }
    }
}

/// A client's request, under an id of the gateway's: a `tools/call` to a task of its own (it
/// goes up only once decided, and, if held, approved), anything else straight up.
fn request(
    (gate, caller): (&UpstreamGate, &Caller),
    pipes: &Pipes,
    tasks: &mut JoinSet<()>,
    (id, method, params): (Value, &str, Value),
    mut value: Value,
) {
    let (purpose, inbox) = match method {
        "tools/call" => {
            let (sender, inbox) = mpsc::channel(4);
            (Purpose::Call(sender), Some(inbox))
        }
        "tools/list" => (Purpose::List, None),
        "initialize" | "server/discover" => (Purpose::Instructions, None),
        _ => (Purpose::Other, None),
    };
    let issued = match inbox.is_some() {
        true => lock(&pipes.calls).ids.reserve(key(&id), &id, purpose),
        false => lock(&pipes.calls).ids.issue(key(&id), &id, purpose),
    };
    let ours = match issued {
        Ok(ours) => ours,
        Err(e) => {
            let error = message::error(&id, message::INVALID_REQUEST, &e.to_string());
            answer(&pipes.to_client, &error);
            return;
        }
    };
    match inbox {
        Some(inbox) => {
            let call = Call { caller: caller.clone(), id, params, inbox };
            tasks.spawn(one_call(gate.clone(), call, ours, pipes.clone()));
        }
        None => {
            value["id"] = ours;
            let _ = pipes.to_server.send(value.to_string());
        }
    }
}

/// A client's cancellation of its request `id`: a call's task relays it (if the call went
/// upstream); any other request relayed is cancelled upstream under the gateway's id for it;
/// nothing in flight under that id, nothing to cancel.
fn cancelled(
    calls: &Shared,
    to_server: &mpsc::UnboundedSender<String>,
    id: Option<&Value>,
    mut value: Value,
) {
    let Some(client_key) = id.map(key) else { return };
    let mut calls = lock(calls);
    match calls.ids.purpose(&client_key) {
        Some(Purpose::Call(call)) => {
            let _ = call.try_send(Upstream::Cancelled);
        }
        Some(Purpose::List | Purpose::Instructions | Purpose::Other) => {
            if let Some(ours) = calls.ids.ours(&client_key) {
                calls.ids.abandon(&ours);
                value["params"]["requestId"] = ours;
                let _ = to_server.send(value.to_string());
            }
        }
        None => {}
    }
}

/// One `tools/call`, from its decision to its answer; upstream it is request `ours`.
async fn one_call(gate: UpstreamGate, mut call: Call, ours: Value, pipes: Pipes) {
    let Pipes { calls, to_client, to_server } = pipes;
    let relayed = gate.admit(&mut call).await;
    let Call { id, mut inbox, .. } = call;
    let relayed = match relayed {
        Admission::Relay(relayed) => relayed,
        Admission::Answer(result) => {
            lock(&calls).ids.forget(&ours);
            answer(&to_client, &message::result(&id, result));
            return;
        }
        Admission::Dropped => {
            lock(&calls).ids.forget(&ours);
            return;
        }
    };
    let started = Instant::now();
    lock(&calls).ids.sent(&ours);
    let _ = to_server.send(relayed.request(&ours).to_string());
    let upstream = tokio::select! {
        upstream = inbox.recv() => upstream.unwrap_or(Upstream::Failed("the MCP gateway is stopping".into())),
        () = tokio::time::sleep(relayed.timeout) => Upstream::TimedOut,
    };
    let why = match upstream {
        Upstream::TimedOut => Some("toolgate: the call's timeout passed"),
        Upstream::Cancelled => Some("cancelled by the client"),
        Upstream::Response(_) | Upstream::Failed(_) => None,
    };
    if let Some(why) = why {
        lock(&calls).ids.abandon(&ours);
        let _ = to_server.send(message::cancelled(&ours, why).to_string());
    }
    if let Some(response) = gate.finish(relayed, &id, started, upstream).await {
        answer(&to_client, &response);
    }
}

/// Reads the server's lines to their end. A response goes back only as the one answer to the
/// request the gateway sent under its id: a call's to its task, a `tools/list`'s through the
/// gate, any other's under the client's id; every other response is dropped and recorded. The
/// server's requests and notifications go to the client as the gateway read them; a line that
/// is not a message is dropped and recorded.
async fn from_server(
    mut output: impl tokio::io::AsyncBufRead + Unpin,
    calls: Shared,
    to_client: mpsc::UnboundedSender<String>,
    (gate, caller): (UpstreamGate, Caller),
) {
    let refuse = |refused, detail: &str| {
        gate.refusals().refuse(&caller.session, Peer::Server, refused, detail);
    };
    loop {
        let line = match next_line(&mut output, MAX_LINE_BYTES).await {
            Ok(Some(Line::Text(line))) => line,
            Ok(Some(bad)) => {
                refuse(Refused::Malformed, &format!("{bad:?}"));
                continue;
            }
            Ok(None) | Err(_) => return,
        };
        if line.trim().is_empty() {
            continue;
        }
        match Message::parse(&line) {
            Ok((Message::Response { id }, mut value)) => {
                let answered = lock(&calls).ids.answer(&id);
                match answered {
                    Answered::Request(_, Purpose::Call(call)) => {
                        let _ = call.try_send(Upstream::Response(value));
                    }
                    Answered::Request(
                        client_id,
                        purpose @ (Purpose::List | Purpose::Instructions),
                    ) => {
                        let (gate, caller, to_client) =
                            (gate.clone(), caller.clone(), to_client.clone());
                        tokio::spawn(async move {
                            value["id"] = client_id;
                            let (session, actor) = (&caller.session, &caller.actor);
                            if matches!(purpose, Purpose::List) {
                                gate.listed(session, actor, &mut value).await;
                            } else {
                                gate.instructed(session, actor, &mut value).await;
                            }
                            answer(&to_client, &value);
                        });
                    }
                    Answered::Request(client_id, Purpose::Other) => {
                        value["id"] = client_id;
                        answer(&to_client, &value);
                    }
                    Answered::Abandoned => {}
                    Answered::Nothing => refuse(Refused::UnknownResponse, &format!("id {id}")),
                }
            }
            Ok((Message::Request { id, .. }, value)) => {
                let mut calls = lock(&calls);
                if calls.from_server.len() < MAX_IN_FLIGHT && calls.from_server.insert(key(&id)) {
                    drop(calls);
                    answer(&to_client, &value);
                } else {
                    drop(calls);
                    refuse(
                        Refused::Malformed,
                        &format!("a request whose id {id} is in flight, or one too many"),
                    );
                }
            }
            Ok((Message::Notification { .. }, mut value)) => {
                if gate.notice(&caller.session, &mut value) {
                    answer(&to_client, &value);
                }
            }
            Err(e) => refuse(Refused::Malformed, &e.to_string()),
        }
    }
}

/// Ends every open call with `why`.
fn fail_open_calls(calls: &Shared, why: &str) {
    for purpose in lock(calls).ids.drain() {
        if let Purpose::Call(call) = purpose {
            let _ = call.try_send(Upstream::Failed(why.to_owned()));
        }
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
