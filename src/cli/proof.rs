//! `toolgate proof SEQ`: one event's offline proof (C2SP `tlog-proof`), from the file (and the
//! archive a prune left older events in) or from a running server, printed or written to a
//! `.tlog-proof` file for `toolgate verify --proof` or any tlog-proof verifier.

use std::path::PathBuf;

use anyhow::Context;
use clap::Args;

use super::Exit;
use super::args::{Source, SourceArgs};
use crate::audit::prove;
use crate::proto;
use crate::trail::tlog_proof::TlogProof;

/// Arguments of `toolgate proof`.
#[derive(Debug, Args)]
pub struct ProofArgs {
    /// The event's seq.
    pub seq: u64,
    #[command(flatten)]
    pub source: SourceArgs,
    /// The tree size of the checkpoint to prove it in; the last checkpoint when absent.
    #[arg(long)]
    pub size: Option<u64>,
    /// Write the proof to this file (by convention `….tlog-proof`) instead of printing it.
    #[arg(long, short)]
    pub output: Option<PathBuf>,
}

/// Prints or writes the proof.
pub async fn proof(args: ProofArgs) -> anyhow::Result<Exit> {
    anyhow::ensure!(args.seq >= 1, "SEQ: the event to prove, from 1");
    let size = args.size.unwrap_or(0);
    let text = match args.source.open().await? {
        Source::Db(trail) => prove(&trail, "", args.seq, size).await?.0.encode(),
        Source::Server(mut client) => {
            let request = proto::TlogProofRequest { seq: args.seq, tree_size: size };
            let text = client.tlog_proof(request).await?.into_inner().proof;
            // What a server sent is printed only once it reads as a proof: nothing else (an
            // escape sequence, say) reaches the terminal.
            TlogProof::parse(&text).context("the server's answer is not a tlog-proof")?;
            text
        }
    };
    match &args.output {
        Some(path) => std::fs::write(path, text)
            .with_context(|| format!("cannot write `{}`", path.display()))?,
        None => print!("{text}"),
    }
    Ok(Exit::Ok)
}
