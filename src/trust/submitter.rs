//! The task that submits the trail's checkpoints to its witnesses (C2SP `tlog-witness`) and
//! keeps the cosignatures they return. It runs beside the trail and never in front of it: a
//! witness that is down, slow or refusing delays no decision and loses nothing (the next
//! checkpoint is submitted when it is back, with a consistency proof from the last one it
//! cosigned). Only the latest checkpoint is submitted; a witness cosigns the largest tree it
//! has seen, so the ones in between add nothing.

use std::time::{Duration, Instant};

use tokio::sync::watch;

use crate::config::WitnessConfig;
use crate::query::Cosignature;
use crate::store::{Reader, StoreError, Writer};
use crate::tick::{Last, Next, Periodic, Ticker};
use crate::trail::Event;
use crate::trail::add_checkpoint::{AddCheckpoint, SIZE_CONTENT_TYPE};
use crate::trail::checkpoint::Checkpoint;
use crate::trail::cosignature::CosignatureVerifier;
use crate::trail::note::{Note, NoteError};

/// How often the task looks without a commit to wake it: for a witness whose pause after a
/// failure is over.
const TICK: Duration = Duration::from_millis(250);
/// The longest wait before a failing witness is tried again.
const MAX_BACKOFF: Duration = Duration::from_secs(300);
/// The longest answer read from a witness.
const MAX_ANSWER: usize = 16 * 1024;
/// How long the last submission at shutdown may take, over all witnesses.
const LAST_PASS: Duration = Duration::from_secs(3);

/// A witness the trail's checkpoints go to.
pub struct Target {
    url: String,
    key: CosignatureVerifier,
    /// `key` as configured: the name its cosignatures are kept under.
    encoded: String,
    timeout: Duration,
    /// The tree size the witness holds for this log, as far as this task knows.
    holds: u64,
    failures: u32,
    retry_at: Instant,
}

/// Why a witness's configuration is refused at start.
#[derive(Debug, thiserror::Error)]
#[error("[[checkpoints.witnesses]] `{url}`: {error}")]
pub struct WitnessKeyError {
    url: String,
    error: NoteError,
}

impl Target {
    /// The witness's key.
    pub fn key(&self) -> &CosignatureVerifier {
        &self.key
    }
}

/// The witnesses' targets, their keys checked (before anything starts).
pub fn targets(configs: &[WitnessConfig]) -> Result<Vec<Target>, WitnessKeyError> {
    configs
        .iter()
        .map(|c| {
            let key = CosignatureVerifier::parse(&c.key)
                .map_err(|error| WitnessKeyError { url: c.url.clone(), error })?;
            Ok(Target {
                url: format!("{}/add-checkpoint", c.url.trim_end_matches('/')),
                encoded: key.encode(),
                key,
                timeout: Duration::from_millis(c.timeout_ms.max(1)),
                holds: 0,
                failures: 0,
                retry_at: Instant::now(),
            })
        })
        .collect()
}

/// Submits each new checkpoint to every witness until `stopping` turns true, then once more
/// (briefly), for the checkpoint signed at shutdown.
pub async fn run(
    reader: Reader,
    writer: Writer,
    mut targets: Vec<Target>,
    stopping: watch::Receiver<bool>,
) {
    for target in &mut targets {
        match reader.cosigned_size(&target.encoded).await {
            Ok(size) => target.holds = size,
            Err(error) => tracing::warn!(%error, "cannot read the cosignatures kept"),
        }
    }
    // A checkpoint is a commit: the writer's signal wakes the task, at most every
    // `follow::COALESCE` under load.
    let commits = writer.committed();
    let submitter = Submitter { client: reqwest::Client::new(), reader, writer, targets };
    let every = Next::Commit { at_most: TICK };
    Ticker::new(submitter, every)
        .woken_by(commits, crate::follow::COALESCE)
        .at_stop(Last::Within(LAST_PASS))
        .run(stopping)
        .await;
}

/// The task's rounds: a pass over the witnesses.
struct Submitter {
    client: reqwest::Client,
    reader: Reader,
    writer: Writer,
    targets: Vec<Target>,
}

impl Periodic for Submitter {
    async fn round(&mut self, last: bool) -> Next {
        pass(&self.client, &self.reader, &self.writer, &mut self.targets, last).await;
        Next::Commit { at_most: TICK }
    }
}

/// Submits the latest checkpoint to each witness that has not cosigned it and is due.
async fn pass(
    client: &reqwest::Client,
    reader: &Reader,
    writer: &Writer,
    targets: &mut [Target],
    last: bool,
) {
    let checkpoint = match reader.last_checkpoint().await {
        Ok(Some(event)) => event,
        Ok(None) => return,
        Err(error) => return tracing::warn!(%error, "cannot read the last checkpoint"),
    };
    let note = checkpoint.record.note.clone().unwrap_or_default();
    let Ok(size) = Checkpoint::read(&note).map(|c| c.size) else {
        return tracing::error!(seq = checkpoint.seq, "the last checkpoint does not read");
    };
    let now = Instant::now();
    let due = targets.iter_mut().filter(|t| t.holds < size && (last || t.retry_at <= now));
    let submissions = due.map(|target| async {
        match submit(client, reader, target, &note, size).await {
            Ok(line) => keep(writer, target, &checkpoint, size, line).await,
            Err(why) => {
                target.failures += 1;
                let backoff = Duration::from_secs(1 << target.failures.min(9)).min(MAX_BACKOFF);
                target.retry_at = Instant::now() + backoff;
                tracing::warn!(
                    witness = %target.url,
                    size,
                    failures = target.failures,
                    retry_in_s = backoff.as_secs(),
                    "{why}"
                );
            }
        }
    });
    futures_util::future::join_all(submissions).await;
}

/// Keeps a witness's cosignature; the witness holds `size` from now on.
async fn keep(writer: &Writer, target: &mut Target, checkpoint: &Event, size: u64, line: Line) {
    let cosignature = Cosignature {
        seq: checkpoint.seq,
        witness: target.encoded.clone(),
        size,
        time: line.time,
        line: line.text,
    };
    let kept = writer
        .append_with(move |lookup| {
            lookup.keep_cosignature(&cosignature)?;
            Ok(Vec::new())
        })
        .await;
    match kept {
        Ok(_) => {
            tracing::debug!(witness = %target.url, size, "cosigned");
            target.holds = size;
            target.failures = 0;
        }
        // The witness holds the checkpoint anyway; the next pass asks it again.
        Err(error) => tracing::warn!(%error, witness = %target.url, "cosignature not kept"),
    }
}

/// A witness's cosignature line and its timestamp.
struct Line {
    text: String,
    time: u64,
}

/// Why a submission did not end in a cosignature (logged; the witness is tried again later).
#[derive(Debug, thiserror::Error)]
enum Failed {
    #[error("the witness cannot be reached: {0}")]
    Unreachable(String),
    #[error("the witness refused the checkpoint: HTTP {status}: {body:?}")]
    Refused { status: u16, body: String },
    #[error(
        "the witness holds a tree of {holds} events, larger than this trail's {size}: was this trail cut or replaced?"
    )]
    Ahead { holds: u64, size: u64 },
    #[error("the witness's answer has no cosignature by its key")]
    NoCosignature,
    #[error("no consistency proof: {0}")]
    Proof(#[from] StoreError),
}

/// Submits `note` (of tree size `size`) to a witness, learning the size it holds from a 409.
async fn submit(
    client: &reqwest::Client,
    reader: &Reader,
    target: &mut Target,
    note: &str,
    size: u64,
) -> Result<Line, Failed> {
    for _ in 0..2 {
        let proof = match target.holds {
            0 => Vec::new(),
            old => reader.consistency_proof(old, size).await?,
        };
        let body = AddCheckpoint::body(target.holds, &proof, note);
        let answer = client
            .post(&target.url)
            .timeout(target.timeout)
            .body(body)
            .send()
            .await
            .map_err(|e| Failed::Unreachable(e.without_url().to_string()))?;
        let status = answer.status().as_u16();
        let sized = answer
            .headers()
            .get(reqwest::header::CONTENT_TYPE)
            .is_some_and(|t| t.as_bytes().starts_with(SIZE_CONTENT_TYPE.as_bytes()));
        let text = read_capped(answer).await?;
        match status {
            200 => return cosignature(&target.key, note, &text).ok_or(Failed::NoCosignature),
            409 if sized => {
                let holds =
                    text.trim_end_matches('\n').parse().map_err(|_| refused(status, &text))?;
                if holds > size {
                    return Err(Failed::Ahead { holds, size });
                }
                if holds == target.holds {
                    // The same size with another root: a fork, as far as the witness knows.
                    return Err(refused(status, &text));
                }
                target.holds = holds;
            }
            _ => return Err(refused(status, &text)),
        }
    }
    Err(Failed::Refused { status: 409, body: "the witness's size keeps changing".into() })
}

/// The answer's body, at most [`MAX_ANSWER`] bytes of it (a witness answers a few lines).
async fn read_capped(mut answer: reqwest::Response) -> Result<String, Failed> {
    let mut body = Vec::new();
    while let Some(chunk) =
        answer.chunk().await.map_err(|e| Failed::Unreachable(e.without_url().to_string()))?
    {
        body.extend_from_slice(&chunk);
        if body.len() > MAX_ANSWER {
            return Err(Failed::Refused { status: 0, body: "the answer is too long".into() });
        }
    }
    Ok(String::from_utf8_lossy(&body).into_owned())
}

fn refused(status: u16, body: &str) -> Failed {
    Failed::Refused { status, body: body.chars().take(200).collect() }
}

/// The line of `answer` that is `key`'s valid cosignature of `note`, with its timestamp.
fn cosignature(key: &CosignatureVerifier, note: &str, answer: &str) -> Option<Line> {
    answer.split_inclusive('\n').find_map(|line| {
        let cosigned = Note::parse(&format!("{note}{line}")).ok()?;
        let time = key.cosigned(&cosigned)?;
        Some(Line { text: line.to_owned(), time })
    })
}
