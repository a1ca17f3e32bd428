//! `toolgate verify`: walks the trail's hash chain and names every broken place.

use std::path::PathBuf;

use anyhow::Context;
use clap::Args;
use futures_util::TryStreamExt;

use super::Exit;
use crate::store::Reader;
use crate::trail::Verifier;

/// Arguments of `toolgate verify`.
#[derive(Debug, Args)]
pub struct VerifyArgs {
    /// The SQLite trail to verify; opened read-only, so a running server may keep writing.
    #[arg(long, env = "TOOLGATE_DB")]
    pub db: PathBuf,
}

/// Verifies the chain; prints one line per problem and a summary.
pub async fn verify(args: VerifyArgs) -> anyhow::Result<Exit> {
    let reader = Reader::open(&args.db).await?;
    let mut verifier = Verifier::default();
    let mut problems = 0u64;
    let mut head = None;
    let mut events = reader.events();
    while let Some(event) = events.try_next().await.context("cannot read the trail")? {
        for problem in verifier.check(&event) {
            problems += 1;
            println!("BROKEN {problem}");
        }
        head = Some((event.seq, event.hash));
    }
    drop(events);
    reader.close().await;
    let checked = verifier.checked();
    if problems > 0 {
        println!("broken: {problems} problem(s) in {checked} events");
        return Ok(Exit::Broken);
    }
    match head {
        Some((seq, hash)) => println!("intact: {checked} events, head seq {seq} hash {hash}"),
        None => println!("intact: the trail is empty"),
    }
    Ok(Exit::Ok)
}
