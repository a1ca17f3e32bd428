//! Signed checkpoints as the trail grows: a `checkpoint` event whose note is the signed
//! checkpoint of the tree of every event before it, at least every `every_events` events, at
//! least every `every_ms` while events come, and once more at shutdown. The tree head is read
//! and signed inside the writer's transaction, so the checkpoint covers exactly the events
//! before it. The writer itself signs those `every_events` makes due (`store::Cadence`), so
//! that a burst cannot stretch the gap; this task signs those `every_ms` makes due, waking when
//! the last checkpoint is that old, and the last one at shutdown. A checkpoint that cannot be
//! committed now is tried again a moment later. It never delays a decision (it is one more
//! append, queued like any other).

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::watch;

use crate::config::CheckpointsConfig;
use crate::follow::Trail;
use crate::store::{StoreError, Writer, checkpoint_record};
use crate::tick::{Last, Next, Periodic, Ticker};
use crate::trail::note::NoteSigner;

/// How long the task waits before it tries again after trouble.
const TICK: Duration = Duration::from_millis(100);

/// Why checkpoints cannot be signed.
#[derive(Debug, thiserror::Error)]
pub enum KeyError {
    #[error("[checkpoints] give key_file or key_env, not both")]
    Both,
    #[error("[checkpoints] cannot read the key: {0}")]
    Read(String),
    #[error("[checkpoints] {0}")]
    Key(#[from] crate::trail::note::NoteError),
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
            // The writer may have signed one since this task looked: then there is nothing new.
            if lookup.covered() {
                return Ok(Vec::new());
            }
            let (size, root) = lookup.tree_head();
            Ok(vec![checkpoint_record(&signer, size, root)?])
        })
        .await?;
    Ok(events.last().map_or(0, |e| e.seq.unsigned_abs()))
}

/// Signs checkpoints until `stopping` turns true, then signs a last one if events came since.
/// The writer signs the checkpoints that `every_events` makes due, in the transaction of the
/// event that makes them due ([`crate::store::Cadence`]); this task signs those that
/// `every_ms` makes due while events wait uncovered, and the last one.
pub async fn run(
    writer: Writer,
    trail: Trail,
    signer: Arc<NoteSigner>,
    config: CheckpointsConfig,
    stopping: watch::Receiver<bool>,
) {
    tracing::info!(
        key = %signer.verifier().encode(),
        every_events = config.every_events,
        every_ms = config.every_ms,
        "signing checkpoints"
    );
    let every = Duration::from_millis(config.every_ms.max(1));
    let publisher = Publisher { writer, trail, signer, every };
    // The first look when a checkpoint would be `every` old, as far as this task knows (a
    // checkpoint the writer signed since moves it when the task looks).
    Ticker::new(publisher, Next::After(every)).at_stop(Last::Whole).run(stopping).await;
}

/// The task's rounds: a look at the last checkpoint, and a checkpoint when one is due.
struct Publisher {
    writer: Writer,
    trail: Trail,
    signer: Arc<NoteSigner>,
    every: Duration,
}

impl Periodic for Publisher {
    async fn round(&mut self, last: bool) -> Next {
        let Trail { reader, commits } = &self.trail;
        // What the last checkpoint covers (and itself), and the trail's size: at shutdown from
        // the file, since the commit signal follows the callers' answers.
        let sized = match last {
            true => reader.tree_size().await.map(|size| i64::try_from(size).unwrap_or(i64::MAX)),
            false => Ok(*commits.borrow()),
        };
        let looked = match (reader.last_checkpoint().await, sized) {
            (Ok(last), Ok(size)) => Ok((last.map(|e| (e.seq, e.ts)), size)),
            (Err(error), _) | (_, Err(error)) => Err(error),
        };
        let (covered, size) = match looked {
            Ok(looked) => looked,
            Err(error) => {
                tracing::warn!(%error, "cannot read the last checkpoint or the tree's size; retrying");
                return Next::After(TICK);
            }
        };
        let (covered_seq, age) = match &covered {
            Some((seq, ts)) => (*seq, age(ts)),
            None => (0, None),
        };
        let every = self.every;
        let due = size > covered_seq && (last || age.is_none_or(|age| age >= every));
        if due {
            match append(&self.writer, &self.signer).await {
                Ok(size) => {
                    tracing::debug!(size, "checkpoint signed");
                    Next::After(every)
                }
                Err(error) => {
                    tracing::warn!(%error, "checkpoint not recorded; retrying");
                    Next::After(TICK)
                }
            }
        } else if size > covered_seq {
            // Events wait, but the last checkpoint is younger than `every`: look again when
            // it is `every` old.
            Next::After(every.saturating_sub(age.unwrap_or_default()))
        } else {
            // Nothing waits: look again in `every`.
            Next::After(every)
        }
    }
}

/// How long ago an event's time was, if it reads as one and lies in the past.
fn age(ts: &str) -> Option<Duration> {
    let at = chrono::DateTime::parse_from_rfc3339(ts).ok()?;
    (chrono::Utc::now() - at.with_timezone(&chrono::Utc)).to_std().ok()
}
