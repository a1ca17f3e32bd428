//! `toolgate checkpoint`: prints the trail's latest signed checkpoint exactly as the note's
//! text, so that it can be kept anywhere else (and later given to `verify --checkpoint`).

use std::path::PathBuf;

use clap::Args;

use super::Exit;
use crate::store::{Filter, Reader};
use crate::trail::Kind;

/// Arguments of `toolgate checkpoint`.
#[derive(Debug, Args)]
pub struct CheckpointArgs {
    /// The SQLite trail (read-only).
    #[arg(long)]
    pub db: PathBuf,
}

/// Prints the latest checkpoint; exit 1 when the trail has none.
pub async fn checkpoint(args: CheckpointArgs) -> anyhow::Result<Exit> {
    let reader = Reader::open(&args.db).await?;
    let last = reader.last_of(&Filter::of_kind(Kind::Checkpoint)).await?;
    reader.close().await;
    match last.and_then(|event| event.record.note) {
        Some(note) => {
            print!("{note}");
            Ok(Exit::Ok)
        }
        None => {
            eprintln!("the trail has no checkpoint (is [checkpoints] configured?)");
            Ok(Exit::Failed)
        }
    }
}
