//! `toolgate witness`: run an independent witness of other toolgate sidecars' trails (or of
//! any log that signs C2SP checkpoints with Ed25519), and read what it holds.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;

use anyhow::Context;
use clap::{Args, Subcommand};

use super::Exit;
use crate::trail::cosignature::Cosigner;
use crate::trail::note::NoteVerifier;
use crate::witness::state::State;
use crate::witness::{Witness, http};

/// Arguments of `toolgate witness`.
#[derive(Debug, Args)]
pub struct WitnessArgs {
    #[command(subcommand)]
    pub command: WitnessCommand,
}

/// The witness's subcommands.
#[derive(Debug, Subcommand)]
pub enum WitnessCommand {
    /// Serve `POST /add-checkpoint` (C2SP tlog-witness) until interrupted.
    Serve(ServeArgs),
    /// Print the latest checkpoint held for each log, and every refusal kept.
    Log(LogArgs),
}

/// Arguments of `toolgate witness serve`.
#[derive(Debug, Args)]
pub struct ServeArgs {
    /// Where to listen (loopback unless told otherwise).
    #[arg(long, default_value = "127.0.0.1:7380")]
    pub listen: SocketAddr,
    /// The witness's signing key (`toolgate keygen --witness`); its name is the witness's.
    #[arg(long)]
    pub key: PathBuf,
    /// The witness's state: the latest checkpoint of each log, and the refusals.
    #[arg(long)]
    pub state: PathBuf,
    /// A log's verifier key (`<origin>+<id>+<key>`, as `toolgate keygen` printed it); give
    /// one per log, and both keys of a log across a rotation.
    #[arg(long = "log", required = true)]
    pub logs: Vec<String>,
}

/// Arguments of `toolgate witness log`.
#[derive(Debug, Args)]
pub struct LogArgs {
    /// The witness's state file.
    #[arg(long)]
    pub state: PathBuf,
}

/// Runs a witness subcommand.
pub async fn witness(args: WitnessArgs) -> anyhow::Result<Exit> {
    match args.command {
        WitnessCommand::Serve(args) => serve(args).await,
        WitnessCommand::Log(args) => log(&args),
    }
}

async fn serve(args: ServeArgs) -> anyhow::Result<Exit> {
    let key = std::fs::read_to_string(&args.key)
        .with_context(|| format!("cannot read `{}`", args.key.display()))?;
    let cosigner = Cosigner::parse(&key).context("--key")?;
    let logs = args
        .logs
        .iter()
        .map(|key| NoteVerifier::parse(key).with_context(|| format!("--log `{key}`")))
        .collect::<anyhow::Result<Vec<_>>>()?;
    let state = State::open(&args.state)
        .with_context(|| format!("cannot open `{}`", args.state.display()))?;
    let verifier = cosigner.verifier().encode();
    let witness = Arc::new(Witness::new(cosigner, logs, state));
    let listener = tokio::net::TcpListener::bind(args.listen)
        .await
        .with_context(|| format!("cannot listen on {}", args.listen))?;
    let address = listener.local_addr()?;
    tracing::info!(%address, key = %verifier, "witness listening");
    // The first line says where and with which key, for the operator and for scripts.
    println!("witness {verifier} listening on http://{address}");
    let signal = crate::shutdown::signal();
    axum::serve(listener, http::router(witness)).with_graceful_shutdown(signal).await?;
    Ok(Exit::Ok)
}

fn log(args: &LogArgs) -> anyhow::Result<Exit> {
    let state = State::open(&args.state)
        .with_context(|| format!("cannot open `{}`", args.state.display()))?;
    for (origin, latest) in state.logs()? {
        println!("log {origin:?} size {} root {}", latest.size, hex::encode(latest.root));
    }
    let refusals = state.refusals()?;
    for refusal in &refusals {
        // Origins come from whoever submitted: shown escaped, never raw.
        println!(
            "REFUSED {} {:?} {}: {}",
            refusal.at, refusal.origin, refusal.status, refusal.reason
        );
    }
    Ok(if refusals.is_empty() { Exit::Ok } else { Exit::Found })
}
