//! A signed checkpoint as the console shows it: the tree it covers, who signed it, and which
//! witnesses cosigned it and when, each signature checked where this server knows the key (its
//! own checkpoint key, the witnesses it submits to).

use chrono::DateTime;
use maud::{Markup, html};

use super::page::Text;
use crate::proto::CheckpointResponse;
use crate::trail::Hash;
use crate::trail::checkpoint::Checkpoint;
use crate::trail::cosignature::{CosignatureVerifier, timestamp};
use crate::trail::note::{Note, NoteVerifier};

/// A signed checkpoint, read.
#[derive(Debug, Clone)]
pub struct Signed {
    /// Whether the log's own signature on it verified with this server's key.
    pub verified: bool,
    /// The events it covers, and its own place on the trail (size + 1).
    pub size: u64,
    pub seq: u64,
    pub origin: String,
    pub root: Hash,
    pub signatures: Vec<Signature>,
}

/// One signature line of the note.
#[derive(Debug, Clone)]
pub struct Signature {
    pub name: String,
    /// A witness's cosignature: the time it gives (seconds since the epoch).
    pub cosigned_at: Option<u64>,
    /// Whether it verified with a key this server knows; `None` when it knows none by its name.
    pub verified: Option<bool>,
}

/// The checkpoint of `answer`, its signatures checked with `log_key` and `witnesses`; `None` if
/// its note does not read, or is not the checkpoint of the size the answer gives.
pub fn read(
    answer: &CheckpointResponse,
    log_key: Option<&NoteVerifier>,
    witnesses: &[CosignatureVerifier],
) -> Option<Signed> {
    // The cosigned note is the note with more signature lines: one text, read once.
    let note = Note::parse(&answer.cosigned).ok()?;
    let checkpoint = Checkpoint::from_text(&note.text).ok()?;
    if checkpoint.size != answer.size {
        return None;
    }
    let signatures = note
        .signatures
        .iter()
        .map(|(name, id, bytes)| {
            let cosigned_at = timestamp(bytes);
            let verified = match cosigned_at {
                Some(_) => witnesses
                    .iter()
                    .find(|w| w.key.name == *name && w.key.id == *id)
                    .map(|w| w.cosigned(&note).is_some()),
                None => log_key
                    .filter(|k| k.key.name == *name && k.key.id == *id)
                    .map(|k| note.signed_by(k)),
            };
            Signature { name: name.clone(), cosigned_at, verified }
        })
        .collect::<Vec<Signature>>();
    let verified = signatures.iter().any(|s| s.cosigned_at.is_none() && s.verified == Some(true));
    Some(Signed {
        verified,
        size: answer.size,
        seq: answer.seq,
        origin: checkpoint.origin,
        root: checkpoint.root,
        signatures,
    })
}

/// What a checkpoint says, for a card.
pub fn render(signed: &Signed) -> Markup {
    let verified = |v: Option<bool>| match v {
        Some(true) => {
            html! { span.ok-mark title="verified with the key this server holds" { "✓ verified" } }
        }
        Some(false) => html! { span.bad-mark { "✗ does not verify" } },
        None => html! { span.muted { "(no key here to check it)" } },
    };
    html! {
        dl.fields {
            dt { "Covers" } dd { (signed.size) " events (it is seq " (signed.seq) ")" }
            dt { "Origin" } dd.mono { (Text(&signed.origin)) }
            dt { "Root" } dd.mono { (hex::encode(signed.root)) }
            @for signature in signed.signatures.iter().filter(|s| s.cosigned_at.is_none()) {
                dt { "Signed by" } dd { (Text(&signature.name)) " " (verified(signature.verified)) }
            }
            @let witnesses: Vec<&Signature> =
                signed.signatures.iter().filter(|s| s.cosigned_at.is_some()).collect();
            dt { "Witnesses" }
            dd {
                @if witnesses.is_empty() { span.muted { "none has cosigned it yet" } }
                @for witness in witnesses {
                    div {
                        (Text(&witness.name)) " at "
                        @let at = witness.cosigned_at.and_then(|t| i64::try_from(t).ok())
                            .and_then(|t| DateTime::from_timestamp(t, 0));
                        @match at {
                            Some(at) => (super::page::time(&at.to_rfc3339())),
                            None => "?",
                        }
                        " " (verified(witness.verified))
                    }
                }
            }
        }
    }
}
