//! `toolgate archive`: what an archive holds, and its verification without the trail.

use std::collections::BTreeMap;

use anyhow::Context;
use clap::{Args, Subcommand};

use super::Exit;
use crate::archive::{Archive, check};
use crate::text::escaped;
use crate::trail::checkpoint::Checkpoint;
use crate::trail::note::NoteVerifier;

/// Arguments of `toolgate archive`.
#[derive(Debug, Args)]
pub struct ArchiveArgs {
    #[command(subcommand)]
    pub command: ArchiveCommand,
}

/// Where the archive is.
#[derive(Debug, Args)]
pub struct Location {
    /// The archive: `file:///path`, `s3://bucket/prefix`.
    #[arg(long)]
    pub url: String,
    /// An option of the store, `name=value` as `[archive] options` (repeatable).
    #[arg(long = "option", value_parser = option)]
    pub options: Vec<(String, String)>,
}

fn option(text: &str) -> Result<(String, String), String> {
    let (name, value) = text.split_once('=').ok_or("give name=value")?;
    Ok((name.to_owned(), value.to_owned()))
}

impl Location {
    fn open(&self) -> anyhow::Result<Archive> {
        let options: BTreeMap<String, String> = self.options.iter().cloned().collect();
        Ok(Archive::open(&self.url, &options)?)
    }
}

/// The `archive` subcommands.
#[derive(Debug, Subcommand)]
pub enum ArchiveCommand {
    /// Print the archive's checkpoint: its origin, how many events it proves, its root.
    List(Location),
    /// Verify the archive without the trail: the checkpoint's signature, every tile and
    /// bundle against the tree, every event against its leaf and the chain.
    Verify {
        #[command(flatten)]
        location: Location,
        /// The log's verifier key (`toolgate keygen` printed it).
        #[arg(long)]
        key: String,
    },
}

/// Runs `toolgate archive`: exit 0 when it verifies, 2 when it does not, 1 when it has no
/// checkpoint to list.
pub async fn archive(args: ArchiveArgs) -> anyhow::Result<Exit> {
    match args.command {
        ArchiveCommand::List(location) => {
            let archive = location.open()?;
            let Some(note) = archive.get("checkpoint").await? else {
                eprintln!("the archive holds no checkpoint");
                return Ok(Exit::Failed);
            };
            let checkpoint = Checkpoint::read(&String::from_utf8_lossy(&note))
                .context("the archive's checkpoint does not read")?;
            println!("origin {}", escaped(&checkpoint.origin));
            println!("events 1 through {}", checkpoint.size);
            println!("root {}", hex::encode(checkpoint.root));
            Ok(Exit::Ok)
        }
        ArchiveCommand::Verify { location, key } => {
            let key = NoteVerifier::parse(&key).with_context(|| format!("--key `{key}`"))?;
            let found = check::verify(&location.open()?, &key).await?;
            for problem in &found.problems {
                println!("{}", escaped(problem));
            }
            if found.problems.is_empty() {
                println!(
                    "ok: {} events, proven by the checkpoint of size {}",
                    found.events, found.size
                );
                Ok(Exit::Ok)
            } else {
                println!("broken: {} problems in {} events", found.problems.len(), found.events);
                Ok(Exit::Broken)
            }
        }
    }
}
