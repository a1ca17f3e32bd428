//! The `toolgate` command line: one file per subcommand, each with its arguments and its
//! function. Exit codes follow `diff` and `grep`: 0 when what was checked is intact (or a call
//! allowed), 1 when the command found a problem (a broken trail or archive, a failed policy
//! check or test, alarms, a denied call), 2 for trouble (a wrong flag, a file that does not
//! read, a server that cannot be reached); `decide` also exits 3, 4 or 5 for
//! `require_approval`, `dry_run` and `rewrite`; a hook speaks its agent's protocol (Claude
//! Code blocks a call on 2).

mod approvals;
mod archive;
mod args;
mod bench;
mod checkpoint;
mod decide;
mod export;
mod fleet;
mod hash_args;
mod hook;
mod hook_install;
mod keygen;
mod mcp;
mod policy;
mod proof;
mod query;
mod remote;
mod serve;
mod stats;
mod tail;
mod verify;
mod witness;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

use crate::trail::Outcome;

pub use approvals::{ApprovalsArgs, approvals};
pub use archive::{ArchiveArgs, archive};
pub use bench::{BenchArgs, bench};
pub use checkpoint::{CheckpointArgs, checkpoint};
pub use decide::{DecideArgs, decide};
pub use export::{ExportArgs, export};
pub use fleet::{FleetArgs, fleet};
pub use hash_args::{HashArgsArgs, hash_args};
pub use hook::{HookArgs, hook};
pub use keygen::{KeygenArgs, keygen};
pub use mcp::{McpArgs, mcp};
pub use policy::{PolicyArgs, policy};
pub use proof::{ProofArgs, proof};
pub use query::{QueryArgs, query};
pub use serve::{ServeArgs, serve};
pub use stats::{StatsArgs, stats};
pub use tail::{TailArgs, tail};
pub use verify::{VerifyArgs, verify};
pub use witness::{WitnessArgs, witness};

/// A policy decision point and hash-chained audit trail for AI-agent tool calls.
#[derive(Debug, Parser)]
#[command(name = "toolgate", version, about, after_help = EXIT_CODES)]
pub struct Cli {
    /// Log as JSON lines instead of text.
    #[arg(long, global = true, env = "TOOLGATE_LOG_JSON")]
    pub log_json: bool,
    #[command(subcommand)]
    pub command: Command,
}

/// Every command's exit codes, as `diff` and `grep` have them.
const EXIT_CODES: &str = "Exit codes: 0 ok (intact, allowed), 1 a problem found (a broken \
    trail, a denied call, a failed check), 2 trouble (a wrong flag, a missing file, an \
    unreachable server); each command's --help says its own.";

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run the gRPC sidecar.
    #[command(after_help = "Exit codes: 0 stopped cleanly (SIGTERM, SIGINT), 2 could not start \
        or failed (the configuration, the trail, the port).")]
    Serve(ServeArgs),
    /// Print the events that match a filter.
    #[command(after_help = "Exit codes: 0 printed (none may match), 2 trouble.")]
    Query(QueryArgs),
    /// Export the events that match a filter as CSV, with an optional manifest.
    #[command(after_help = "Exit codes: 0 exported, 2 trouble.")]
    Export(ExportArgs),
    /// Print the latest events, and with --follow each new one as it commits.
    #[command(after_help = "Exit codes: 0 printed, 2 trouble.")]
    Tail(TailArgs),
    /// Verify the trail's hash chain, or a CSV export, and report every broken place.
    #[command(after_help = "Exit codes: 0 intact, 1 broken (each problem printed), 2 trouble \
        (the file does not read, the server cannot be reached, a key does not parse): a typo \
        in a verification job never reads as tampering.")]
    Verify(VerifyArgs),
    /// Count events by outcome, tool, actor and kind.
    #[command(after_help = "Exit codes: 0 counted, 2 trouble.")]
    Stats(StatsArgs),
    /// Measure throughput and latency against the health-check baseline.
    #[command(after_help = "Exit codes: 0 measured, 2 trouble.")]
    Bench(BenchArgs),
    /// Check and test policy files.
    #[command(after_help = "Exit codes: 0 every file checks and every case passes, 1 one does \
        not, 2 trouble.")]
    Policy(PolicyArgs),
    /// Try one request against a policy file or a running server.
    #[command(after_help = "Exit codes: 0 allow, 1 deny, 3 require_approval, 4 dry_run, 5 \
        rewrite, 2 trouble.")]
    Decide(DecideArgs),
    /// List, approve and reject the calls waiting for a verdict on a running server.
    #[command(after_help = "Exit codes: 0 done, 2 trouble (refused, not found, unreachable).")]
    Approvals(ApprovalsArgs),
    /// Answer a coding agent's tool hook by asking a running server; install and check the
    /// hooks in an agent's own configuration (docs/agents.md).
    #[command(after_help = "Exit codes: each agent's hook protocol: 0 with the answer on stdout, \
        2 blocks the call (with the agent's deny on stdout where it reads one), also when the \
        sidecar cannot be asked; `doctor`: 0 all is well, 1 something is wrong.")]
    Hook(HookArgs),
    /// Run an MCP gateway: an MCP server behind the policy and the trail (docs/mcp.md).
    #[command(after_help = "Exit codes: 0 the client or the server ended the session, 2 the \
        server exited with an error, or trouble.")]
    Mcp(McpArgs),
    /// Print the SHA-256 of a bearer token read on stdin, for `[[auth.tokens]] sha256`.
    HashToken,
    /// Print the hash the trail records for an argument object (plain or keyed).
    HashArgs(HashArgsArgs),
    /// Make an Ed25519 key for signing checkpoints; print its verifier key.
    Keygen(KeygenArgs),
    /// Print the trail's latest signed checkpoint, with its witnesses' cosignatures.
    #[command(after_help = "Exit codes: 0 printed, 1 the trail has none, 2 trouble.")]
    Checkpoint(CheckpointArgs),
    /// Print (or write) one event's offline proof (C2SP tlog-proof): the event, its inclusion
    /// proof and the signed, cosigned checkpoint that covers it.
    Proof(ProofArgs),
    /// The fleet store: its schema, its nodes, their status and alarms (PostgreSQL).
    #[command(after_help = "Exit codes: 0 done, 1 alarms found (`alarms`) or a partition kept \
        (`prune`), 2 trouble.")]
    Fleet(FleetArgs),
    /// Run an independent witness that cosigns other logs' checkpoints (C2SP tlog-witness).
    #[command(after_help = "Exit codes: 0 done, 1 refusals found (`log`), 2 trouble.")]
    Witness(WitnessArgs),
    /// The trail's archive (C2SP tlog-tiles in an object store): list it, verify it.
    #[command(after_help = "Exit codes: 0 verifies and reaches the checkpoint given, 1 broken, \
        behind, unanchored, or no checkpoint to list, 2 trouble.")]
    Archive(ArchiveArgs),
}

/// How a command ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exit {
    /// 0: what was checked is intact, what was asked done.
    Ok,
    /// 1: the command checked something and found a problem (a broken chain or archive, a
    /// failed policy check or test, alarms, a checkpoint or prune that is not there).
    Found,
    /// 2: trouble that is not a finding (a server the command ran that failed); errors end
    /// with 2 too.
    Trouble,
    /// `decide`'s answer: 0 only when the call may run as asked (`allow`); 1 for `deny` (a
    /// problem found, as `grep` finds none); 3 `require_approval`, 4 `dry_run`, 5 `rewrite`.
    Decided(Outcome),
}

/// The exit code of trouble: a wrong flag (clap's own), a file that does not read, a server
/// that cannot be reached.
pub const TROUBLE: u8 = 2;

impl From<Exit> for ExitCode {
    fn from(exit: Exit) -> Self {
        match exit {
            Exit::Ok | Exit::Decided(Outcome::Allow) => Self::SUCCESS,
            Exit::Found | Exit::Decided(Outcome::Deny) => Self::FAILURE,
            Exit::Trouble => Self::from(TROUBLE),
            Exit::Decided(Outcome::RequireApproval) => Self::from(3),
            Exit::Decided(Outcome::DryRun) => Self::from(4),
            Exit::Decided(Outcome::Rewrite) => Self::from(5),
        }
    }
}

/// A command whose reader went away (`toolgate query | head -1`) ends quietly and with
/// success, as `cat` does: `println!` panics when stdout is a closed pipe, and this hook turns
/// that panic, and only that one, into the process's exit. Not for the sidecar, which prints
/// nothing to stdout and whose threads must never end the process: `serve` keeps the default.
fn end_quietly_on_a_closed_pipe() {
    let default = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let message = info.payload().downcast_ref::<String>().map_or("", String::as_str);
        if message.starts_with("failed printing to stdout") && message.contains("Broken pipe") {
            std::process::exit(0);
        }
        default(info);
    }));
}

/// Runs the command line.
pub fn main() -> ExitCode {
    let cli = Cli::parse();
    // A hook says what it has to say on stdout and stderr itself, and starts as lean as it can.
    if !matches!(cli.command, Command::Hook(_)) {
        crate::telemetry::init(cli.log_json);
    }
    if !matches!(cli.command, Command::Serve(_)) {
        end_quietly_on_a_closed_pipe();
    }
    // A hook is a process per tool call, on the agent's critical path: one thread is enough
    // for its one connection, and starting no workers is a share of its cost.
    let runtime = match &cli.command {
        Command::Hook(_) => tokio::runtime::Builder::new_current_thread().enable_all().build(),
        _ => tokio::runtime::Runtime::new(),
    };
    let runtime = match runtime {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("error: cannot start the runtime: {e}");
            return ExitCode::from(TROUBLE);
        }
    };
    let result = runtime.block_on(async {
        match cli.command {
            Command::Serve(args) => serve(args).await,
            Command::Query(args) => query(args).await,
            Command::Export(args) => export(args).await,
            Command::Tail(args) => tail(args).await,
            Command::Verify(args) => verify(args).await,
            Command::Stats(args) => stats(args).await,
            Command::Bench(args) => bench(args).await,
            Command::Policy(args) => policy(args).await,
            Command::Decide(args) => decide(args).await,
            Command::Approvals(args) => approvals(args).await,
            Command::Hook(args) => hook(args).await,
            Command::Mcp(args) => mcp(args).await,
            Command::HashArgs(args) => hash_args(args).await,
            Command::Keygen(args) => keygen(args).await,
            Command::Checkpoint(args) => checkpoint(args).await,
            Command::Proof(args) => proof(args).await,
            Command::Witness(args) => witness(args).await,
            Command::Fleet(args) => fleet(args).await,
            Command::Archive(args) => archive(args).await,
            Command::HashToken => {
                let mut token = String::new();
                std::io::Read::read_to_string(&mut std::io::stdin(), &mut token)?;
                println!("{}", crate::auth::token_digest(&token));
                Ok(Exit::Ok)
            }
        }
    });
    // A read of stdin blocks a thread of the runtime's until a line comes (`toolgate mcp`,
    // whose server may end first): dropping the runtime would wait for it.
    runtime.shutdown_timeout(std::time::Duration::from_millis(100));
    match result {
        Ok(exit) => exit.into(),
        // The reader of the output went away (`toolgate export | head`): end quietly, with
        // success, as a shell pipeline expects of its writer.
        Err(e) if closed_pipe(&e) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {}", said(&e));
            ExitCode::from(TROUBLE)
        }
    }
}

/// Standard output for the commands that write to it through a writer: a write to a reader
/// that went away fails as [`StdoutClosed`], so that only that ends a command quietly, and not
/// a broken pipe of another connection (a server's, a database's).
pub(crate) struct Stdout;

/// Standard output's reader went away.
#[derive(Debug, thiserror::Error)]
#[error("standard output was closed")]
pub(crate) struct StdoutClosed;

impl std::io::Write for Stdout {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        std::io::stdout().write(bytes).map_err(closed)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        std::io::stdout().flush().map_err(closed)
    }
}

fn closed(error: std::io::Error) -> std::io::Error {
    match error.kind() {
        std::io::ErrorKind::BrokenPipe => std::io::Error::new(error.kind(), StdoutClosed),
        _ => error,
    }
}

/// Whether `error` comes from writing to standard output after its reader went away.
fn closed_pipe(error: &anyhow::Error) -> bool {
    let stdout = |io: &std::io::Error| io.get_ref().is_some_and(|inner| inner.is::<StdoutClosed>());
    error.chain().any(|cause| {
        // The CSV writer's error names its I/O error as its kind, not as its source (and the
        // trail's CSV error is it, transparently).
        let csv = match cause.downcast_ref::<crate::trail::csv::CsvError>() {
            Some(crate::trail::csv::CsvError::Csv(error)) => Some(error.kind()),
            _ => cause.downcast_ref::<csv::Error>().map(csv::Error::kind),
        };
        cause.downcast_ref::<std::io::Error>().is_some_and(stdout)
            || matches!(csv, Some(csv::ErrorKind::Io(io)) if stdout(io))
    })
}

/// An error as a person reads it: each cause once (a cause that repeats the end of what was
/// said is not said again), and a server's refusal as its message and what the
/// code means, not gRPC's stock description of the code.
fn said(error: &anyhow::Error) -> String {
    let mut text = String::new();
    for cause in error.chain() {
        let part = match cause.downcast_ref::<tonic::Status>() {
            Some(status) => refusal(status),
            None => cause.to_string(),
        };
        // Said already: the cause is the end of what was said, or says only that end again
        // with a prefix of its own (`Error code 26: file is not a database`).
        let said = text.rsplit(": ").next().unwrap_or_default();
        let ends = |whole: &str, end: &str| whole == end || whole.ends_with(&format!(": {end}"));
        if ends(&text, &part) || (!said.is_empty() && ends(&part, said)) {
            continue;
        }
        if !text.is_empty() {
            text.push_str(": ");
        }
        text.push_str(&part);
    }
    text
}

/// A server's refusal, in a sentence with a hint where one helps.
fn refusal(status: &tonic::Status) -> String {
    use tonic::Code;
    let message = status.message();
    let hint = match status.code() {
        Code::Unauthenticated => " (set TOOLGATE_TOKEN to a token the server knows)",
        Code::PermissionDenied => " (the token's role does not allow this)",
        Code::Unavailable => " (is the server running, and is this its address?)",
        Code::Unimplemented => " (the server does not serve this call: another version?)",
        _ => "",
    };
    match message.is_empty() {
        true => format!("the server refused: {:?}{hint}", status.code()),
        false => format!("the server refused: {message}{hint}"),
    }
}
