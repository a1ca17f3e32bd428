//! A witness (C2SP `tlog-witness`): an independent party that cosigns a log's checkpoint only
//! if it is an append-only extension of the last one it cosigned for that log. It trusts a
//! list of log keys (the log's origin is its key's name), keeps the latest checkpoint of each
//! log in its own SQLite file ([`state`]), and answers `POST /add-checkpoint` ([`http`]).
//!
//! | answer | when |
//! |---|---|
//! | 200, cosignature lines | the checkpoint extends the last one (or is the first) |
//! | 400 | the body is malformed, or the old size is larger than the checkpoint's |
//! | 403 | no trusted key signed it, or a trusted key's signature fails |
//! | 404 | the origin is not a log the witness knows |
//! | 409, `<size>\n` | the old size is not the size the witness holds; or the same size with another root (a fork) |
//! | 422 | the consistency proof does not verify (a fork, or a rewritten history) |
//!
//! A rollback (a checkpoint smaller than the one held), a fork and a failing proof are logged
//! at error level and kept in the state file's `refusals`, since they may be evidence that
//! the log misbehaves. Only a fork at the same size proves it on its own (two signed roots of
//! one size); a smaller checkpoint may be an old one replayed, and a failing proof may be
//! garbage sent with a good checkpoint, so the log's answer decides. Each refusal is kept once
//! per (origin, answer, reason, tree): replays do not grow the file.

pub mod http;
pub mod state;

use std::collections::HashMap;
use std::sync::Mutex;

use self::state::{Latest, State};
use crate::trail::add_checkpoint::{AddCheckpoint, SIZE_CONTENT_TYPE};
use crate::trail::checkpoint::Checkpoint;
use crate::trail::cosignature::Cosigner;
use crate::trail::note::{Note, NoteVerifier};
use crate::trail::verify_consistency;

/// A witness: its key, the logs it knows, and its state.
pub struct Witness {
    cosigner: Cosigner,
    logs: HashMap<String, Vec<NoteVerifier>>,
    state: Mutex<State>,
}

/// An answer to `add-checkpoint`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Answer {
    pub status: u16,
    pub content_type: &'static str,
    pub body: String,
}

impl Answer {
    fn text(status: u16, body: impl Into<String>) -> Self {
        let mut body = body.into();
        body.push('\n');
        Self { status, content_type: "text/plain; charset=utf-8", body }
    }

    fn size(size: u64) -> Self {
        Self { status: 409, content_type: SIZE_CONTENT_TYPE, body: format!("{size}\n") }
    }
}

impl Witness {
    /// A witness cosigning with `cosigner` the checkpoints of the logs whose keys are `logs`
    /// (several keys may share a name: a log's keys across a rotation).
    pub fn new(cosigner: Cosigner, logs: Vec<NoteVerifier>, state: State) -> Self {
        let mut by_origin: HashMap<String, Vec<NoteVerifier>> = HashMap::new();
        for key in logs {
            by_origin.entry(key.key.name.clone()).or_default().push(key);
        }
        Self { cosigner, logs: by_origin, state: Mutex::new(state) }
    }

    /// Answers an `add-checkpoint` request, cosigning at `time` (Unix seconds).
    pub fn add_checkpoint(&self, body: &[u8], time: u64) -> Answer {
        let request = match AddCheckpoint::parse(body) {
            Ok(request) => request,
            Err(why) => return Answer::text(400, why),
        };
        let Ok(note) = Note::parse(&request.note) else {
            return Answer::text(400, "the checkpoint is not a signed note");
        };
        let checkpoint = match Checkpoint::from_text(&note.text) {
            Ok(checkpoint) => checkpoint,
            Err(e) => return Answer::text(400, e.to_string()),
        };
        let Some(keys) = self.logs.get(&checkpoint.origin) else {
            return Answer::text(404, "unknown log origin");
        };
        let has_line = |k: &NoteVerifier| {
            note.signatures.iter().any(|(n, id, _)| *n == k.key.name && *id == k.key.id)
        };
        let mut known = keys.iter().filter(|k| has_line(k)).peekable();
        if known.peek().is_none() || !known.all(|k| note.signed_by(k)) {
            return Answer::text(403, "no valid signature by a key of this log");
        }
        if request.old > checkpoint.size {
            return Answer::text(400, "the old size is larger than the checkpoint's");
        }
        // The check and the update are one step: two submissions never interleave.
        let state = self.state.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        match self.judge(&state, &request, &checkpoint) {
            Ok(()) => {}
            Err(Refused { answer, evidence }) => {
                if let Some(reason) = evidence {
                    tracing::error!(
                        origin = %checkpoint.origin,
                        size = checkpoint.size,
                        old = request.old,
                        reason,
                        "refused a checkpoint: possible log misbehaviour"
                    );
                    let tree = (checkpoint.size, &checkpoint.root);
                    let kept = state.refuse(
                        &checkpoint.origin,
                        answer.status,
                        reason,
                        tree,
                        &request.note,
                    );
                    if let Err(error) = kept {
                        tracing::error!(%error, "cannot keep the refusal");
                    }
                }
                return answer;
            }
        }
        // Signed before the state advances: a checkpoint this witness will not sign (an
        // ML-DSA-44 witness signs no extension lines) leaves the state as it was.
        let line = match self.cosigner.cosign(&note.text, time.max(1)) {
            Ok(line) => line,
            Err(error) => return Answer::text(400, error.to_string()),
        };
        let latest =
            Latest { size: checkpoint.size, root: checkpoint.root, checkpoint: request.note };
        if let Err(error) = state.advance(&checkpoint.origin, &latest) {
            tracing::error!(%error, "cannot persist the witness's state; not cosigning");
            return Answer::text(500, "the witness cannot persist its state");
        }
        tracing::info!(origin = %checkpoint.origin, size = checkpoint.size, "cosigned");
        Answer { status: 200, content_type: "text/plain; charset=utf-8", body: line }
    }

    /// Whether the checkpoint extends what the witness holds for its log.
    fn judge(
        &self,
        state: &State,
        request: &AddCheckpoint,
        checkpoint: &Checkpoint,
    ) -> Result<(), Refused> {
        let latest = state.latest(&checkpoint.origin).map_err(|error| {
            tracing::error!(%error, "cannot read the witness's state");
            Refused {
                answer: Answer::text(500, "the witness cannot read its state"),
                evidence: None,
            }
        })?;
        let (size, root) = latest.map_or((0, None), |l| (l.size, Some(l.root)));
        if checkpoint.size < size {
            return Err(Refused {
                answer: Answer::size(size),
                evidence: Some(
                    "rollback: smaller than the checkpoint already cosigned (or a replay of an older one)",
                ),
            });
        }
        if request.old != size {
            return Err(Refused { answer: Answer::size(size), evidence: None });
        }
        let consistent = match root {
            None => request.proof.is_empty(),
            Some(root) if size == checkpoint.size => root == checkpoint.root,
            Some(root) => {
                verify_consistency(size, checkpoint.size, &root, &checkpoint.root, &request.proof)
            }
        };
        match (consistent, size == checkpoint.size) {
            (true, _) => Ok(()),
            (false, true) => Err(Refused {
                answer: Answer::size(size),
                evidence: Some("fork: the size already cosigned with another root"),
            }),
            (false, false) => Err(Refused {
                answer: Answer::text(422, "the consistency proof does not verify"),
                evidence: Some("the consistency proof does not verify"),
            }),
        }
    }
}

/// A refused submission: the answer, and why it may be evidence (kept and logged loudly).
struct Refused {
    answer: Answer,
    evidence: Option<&'static str>,
}

#[cfg(test)]
mod tests;
