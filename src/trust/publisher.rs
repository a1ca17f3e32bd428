//! The task that signs checkpoints as the trail grows: every `every_events` events or
//! `every_ms`, whichever comes first, and once more at shutdown, it appends a `checkpoint`
//! event whose note is the signed checkpoint of the tree of every event before it. The tree
//! head is read and signed inside the writer's transaction, so the checkpoint covers exactly
//! the events before it. It wakes at each commit of the writer (to count the events) and when
//! `every_ms` is up; a checkpoint that cannot be committed now is tried again a moment later.
//! It never delays a decision (it is one more append, queued like any other).

use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::sync::watch;

use super::checkpoint::Checkpoint;
use super::note::NoteSigner;
use crate::config::CheckpointsConfig;
use crate::follow::Trail;
use crate::store::{StoreError, Writer};
use crate::trail::{Kind, Record};

/// How long the task waits before it tries again after trouble, and how often it looks once
/// the writer has stopped.
const TICK: Duration = Duration::from_millis(100);

/// Why checkpoints cannot be signed.
#[derive(Debug, thiserror::Error)]
pub enum KeyError {
    #[error("[checkpoints] give key_file or key_env, not both")]
    Both,
    #[error("[checkpoints] cannot read the key: {0}")]
    Read(String),
    #[error("[checkpoints] {0}")]
    Key(#[from] super::note::NoteError),
}

/// The signing key `[checkpoints]` names, if it names one.
pub fn signer(config: &CheckpointsConfig) -> Result<Option<NoteSigner>, KeyError> {
    let text = match (&config.key_file, &config.key_env) {
        (Some(_), Some(_)) => return Err(KeyError::Both),
        (Some(path), None) => std::fs::read_to_string(path)
            .map_err(|e| KeyError::Read(format!("`{}`: {e}", path.display())))?,
        (None, Some(var)) => std::env::var(var)
            .map_err(|_| KeyError::Read(format!("the environment variable `{var}` is not set")))?,
        (None, None) => return Ok(None),
    };
    Ok(Some(NoteSigner::parse(&text)?))
}

/// Appends a checkpoint of the tree as it stands; returns the tree's size after it.
pub async fn append(writer: &Writer, signer: &Arc<NoteSigner>) -> Result<u64, StoreError> {
    let signer = signer.clone();
    let events = writer
        .append_with(move |lookup| {
            let (size, root) = lookup.tree_head();
            let checkpoint = Checkpoint { origin: signer.key().name.clone(), size, root };
            let note = checkpoint
                .sign(&signer)
                .map_err(|_| StoreError::Tree("a checkpoint's text did not sign"))?;
            Ok(vec![Record { note: Some(note), ..Record::new(Kind::Checkpoint) }])
        })
        .await?;
    Ok(events.last().map_or(0, |e| e.seq.unsigned_abs()))
}

/// Signs checkpoints until `stopping` turns true, then signs a last one if events came since.
pub async fn run(
    writer: Writer,
    trail: Trail,
    signer: Arc<NoteSigner>,
    config: CheckpointsConfig,
    mut stopping: watch::Receiver<bool>,
) {
    tracing::info!(
        key = %signer.verifier().encode(),
        every_events = config.every_events,
        every_ms = config.every_ms,
        "signing checkpoints"
    );
    let Trail { reader, mut commits } = trail;
    let every = Duration::from_millis(config.every_ms.max(1));
    let every_events = config.every_events.max(1);
    // What the last checkpoint on the trail covers (and itself): nothing before the first.
    let mut covered = match reader.last_checkpoint().await {
        Ok(last) => last.map_or(0, |e| e.seq.unsigned_abs()),
        Err(error) => {
            tracing::error!(%error, "cannot read the last checkpoint; checkpoints are off");
            return;
        }
    };
    let mut since = Instant::now();
    // Whether events wait uncovered (then `every_ms` can make a checkpoint due), and the pause
    // after trouble.
    let (mut uncovered, mut pause) = (true, None);
    loop {
        let wake = async {
            match pause {
                Some(pause) => tokio::time::sleep(pause).await,
                None => {
                    let due = async {
                        match uncovered {
                            true => tokio::time::sleep(every.saturating_sub(since.elapsed())).await,
                            false => std::future::pending().await,
                        }
                    };
                    tokio::select! {
                        moved = commits.changed() => if moved.is_err() {
                            tokio::time::sleep(TICK).await;
                        },
                        () = due => {}
                    }
                }
            }
        };
        let stop = tokio::select! {
            biased;
            _ = stopping.wait_for(|stop| *stop) => true,
            () = wake => false,
        };
        pause = None;
        let size = match reader.tree_size().await {
            Ok(size) => size,
            Err(error) if stop => {
                tracing::error!(%error, "cannot read the tree's size: no last checkpoint");
                return;
            }
            Err(error) => {
                tracing::warn!(%error, "cannot read the tree's size; retrying");
                pause = Some(TICK);
                continue;
            }
        };
        let due =
            size > covered && (stop || size - covered >= every_events || since.elapsed() >= every);
        if due {
            match append(&writer, &signer).await {
                Ok(size) => {
                    tracing::debug!(size, "checkpoint signed");
                    covered = size;
                    since = Instant::now();
                }
                Err(error) => {
                    tracing::warn!(%error, "checkpoint not recorded; retrying");
                    pause = Some(TICK);
                }
            }
        }
        uncovered = size > covered;
        if stop {
            return;
        }
    }
}
