//! `toolgate checkpoint`: prints the trail's latest signed checkpoint exactly as the note's
//! text, with the cosignature lines of the witnesses that cosigned it, read from the file or
//! asked of a running server, so that it can be kept anywhere else (and later given to
//! `verify --checkpoint`).

use std::path::PathBuf;

use clap::Args;

use super::Exit;
use super::remote::{TOKEN_ENV, connect_to};
use crate::proto::{self, audit_client::AuditClient};
use crate::store::Reader;

/// Arguments of `toolgate checkpoint`.
#[derive(Debug, Args)]
pub struct CheckpointArgs {
    /// The SQLite trail (read-only).
    #[arg(long)]
    pub db: Option<PathBuf>,
    /// A running server: `host:port`, `http(s)://host:port` or `unix:/path` (by default
    /// `$TOOLGATE_SERVER`, else 127.0.0.1:50051); the auditor's token from `TOOLGATE_TOKEN`
    /// when its auth is on.
    #[arg(long, conflicts_with = "db")]
    pub server: Option<String>,
}

/// Prints the latest checkpoint; exit 1 when the trail has none.
pub async fn checkpoint(args: CheckpointArgs) -> anyhow::Result<Exit> {
    let note = match (&args.server, &args.db) {
        (server, None) => {
            let (channel, bearer) = connect_to(server.as_deref(), TOKEN_ENV).await?;
            let mut client = AuditClient::with_interceptor(channel, bearer);
            match client
                .checkpoint(proto::CheckpointRequest { size: 0, node_id: String::new() })
                .await
            {
                Ok(answer) => Some(answer.into_inner().cosigned),
                Err(status) if status.code() == tonic::Code::NotFound => None,
                Err(status) => return Err(status.into()),
            }
        }
        (_, Some(db)) => {
            let reader = Reader::open(db).await?;
            let last = match reader.last_checkpoint().await? {
                Some(event) => Some(reader.cosigned_note(&event).await?),
                None => None,
            };
            reader.close().await;
            last
        }
    };
    match note {
        Some(note) => {
            print!("{note}");
            Ok(Exit::Ok)
        }
        None => {
            eprintln!("the trail has no checkpoint (is [checkpoints] configured?)");
            Ok(Exit::Found)
        }
    }
}
