//! One event's offline proof (C2SP `tlog-proof@v1`): the checkpoint that covers it, verbatim
//! with the witnesses' cosignatures, its place in the tree, the inclusion proof, and the event
//! itself as the proof's extra data, so that one event travels alone and is checked with the
//! log's and the witnesses' public keys, nothing else:
//!
//! ```text
//! c2sp.org/tlog-proof@v1
//! extra <base64(previous hash, 32 bytes ‖ the event's canonical encoding)>
//! index <seq − 1>
//! <base64 hash>                 the inclusion proof, from the leaf's sibling up
//! …
//!
//! <the checkpoint's signed note, with its cosignature lines>
//! ```
//!
//! The leaf of event `seq` is its chain hash, SHA-256 of the extra data, so that anyone
//! recomputes the leaf from the extra data before trusting a byte of it.

use base64::Engine;
use base64::engine::general_purpose::STANDARD as BASE64;
use sha2::{Digest, Sha256};

use crate::checkpoint::{Checkpoint, CheckpointError};
use crate::cosignature::Witnesses;
use crate::encoding::{DecodeError, decode_event};
use crate::note::{Note, NoteVerifier};
use crate::{Event, Hash, encode, leaf_hash, verify_inclusion};

/// The first line of every proof.
pub const HEADER: &str = "c2sp.org/tlog-proof@v1";

/// The largest proof read: an event's cells are limited to MiBs, a note to 100 signatures.
pub const MAX_BYTES: usize = 32 << 20;

/// The most hashes an inclusion proof in a tree of at most 2^63 leaves has.
const MAX_HASHES: usize = 63;

/// A proof, as its text says it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TlogProof {
    /// The opaque extra data; toolgate's is the previous hash and the event's encoding.
    pub extra: Option<Vec<u8>>,
    /// The entry's zero-based index in the log: its seq − 1.
    pub index: u64,
    /// The inclusion proof, from the leaf's sibling up to the root's child.
    pub hashes: Vec<Hash>,
    /// The checkpoint's signed note, verbatim, with its cosignatures.
    pub checkpoint: String,
}

/// Why a proof does not read, or does not prove its event.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TlogProofError {
    #[error("not a tlog-proof: {0}")]
    Malformed(&'static str),
    #[error("the checkpoint: {0}")]
    Checkpoint(#[from] CheckpointError),
    #[error("the checkpoint is signed by none of the log keys given, or a signature by one fails")]
    Unsigned,
    #[error("the checkpoint's origin {0:?} is not the name of the key that signed it")]
    Origin(String),
    #[error("index {index} is not in the checkpoint's tree of {size}")]
    Beyond { index: u64, size: u64 },
    #[error("the proof carries no event (no extra data)")]
    NoEvent,
    #[error("the extra data is not an event: {0}")]
    Event(#[from] DecodeError),
    #[error("the event's seq is {seq}, not the index {index} + 1")]
    Seq { seq: i64, index: u64 },
    #[error("the inclusion proof does not lead to the checkpoint's root")]
    NotIncluded,
    #[error("{valid} of the {required} witness cosignatures required verify")]
    TooFewCosignatures { required: usize, valid: usize },
}

/// What a proof proved: this event is in the tree of this checkpoint, signed by a log key, and
/// `cosigned` of the witnesses given cosigned the checkpoint.
#[derive(Debug, Clone)]
pub struct Proven {
    pub event: Event,
    pub checkpoint: Checkpoint,
    /// The name of the log key that signed the checkpoint.
    pub signed_by: String,
    pub cosigned: usize,
}

impl TlogProof {
    /// The proof of `event` by `hashes` in the tree of the signed `checkpoint` note.
    pub fn of(event: &Event, hashes: Vec<Hash>, checkpoint: String) -> Result<Self, DecodeError> {
        let prev =
            crate::decode(&event.prev_hash).ok_or(DecodeError::Field("prev_hash".to_owned()))?;
        let mut extra = prev.to_vec();
        extra.extend_from_slice(&encode(event));
        let index = event.seq.unsigned_abs().saturating_sub(1);
        Ok(Self { extra: Some(extra), index, hashes, checkpoint })
    }

    /// The proof's text.
    pub fn encode(&self) -> String {
        let mut text = format!("{HEADER}\n");
        if let Some(extra) = &self.extra {
            text.push_str(&format!("extra {}\n", BASE64.encode(extra)));
        }
        text.push_str(&format!("index {}\n", self.index));
        for hash in &self.hashes {
            text.push_str(&BASE64.encode(hash));
            text.push('\n');
        }
        text.push('\n');
        text.push_str(&self.checkpoint);
        text
    }

    /// Reads a proof's text, strictly: every line as the spec writes it, the checkpoint a
    /// well-formed signed note (its signatures are checked by [`TlogProof::verify`]).
    pub fn parse(text: &str) -> Result<Self, TlogProofError> {
        use TlogProofError::Malformed;
        if text.len() > MAX_BYTES {
            return Err(Malformed("larger than 32 MiB"));
        }
        let mut rest = text;
        let mut line = || -> Result<&str, TlogProofError> {
            let (line, after) = rest.split_once('\n').ok_or(Malformed("ends inside a line"))?;
            rest = after;
            Ok(line)
        };
        if line()? != HEADER {
            return Err(Malformed("the first line is not `c2sp.org/tlog-proof@v1`"));
        }
        let mut next = line()?;
        let extra = match next.strip_prefix("extra ") {
            Some(data) => {
                let data = BASE64
                    .decode(data)
                    .ok()
                    .filter(|data| !data.is_empty())
                    .ok_or(Malformed("the extra data is not base64, or empty"))?;
                next = line()?;
                Some(data)
            }
            None => None,
        };
        let index = next.strip_prefix("index ").ok_or(Malformed("no `index` line"))?;
        let canonical = !index.is_empty()
            && index.bytes().all(|b| b.is_ascii_digit())
            && (index == "0" || !index.starts_with('0'));
        let index = index
            .parse()
            .ok()
            .filter(|_| canonical)
            .ok_or(Malformed("the index is not a decimal without leading zeroes"))?;
        let mut hashes = Vec::new();
        loop {
            let next = line()?;
            if next.is_empty() {
                break;
            }
            let hash = BASE64.decode(next).ok().and_then(|h| Hash::try_from(h).ok());
            hashes.push(hash.ok_or(Malformed("a proof line is not a base64 SHA-256 hash"))?);
            if hashes.len() > MAX_HASHES {
                return Err(Malformed("more than 63 proof hashes"));
            }
        }
        Note::parse(rest).map_err(CheckpointError::from)?;
        Ok(Self { extra, index, hashes, checkpoint: rest.to_owned() })
    }

    /// Checks the proof: the checkpoint signed by one of `keys` (the log's current key and those
    /// it replaced), `witnesses.required` of the witnesses' cosignatures on it, the event
    /// recomputed from the extra data at the index, and its leaf proven in the checkpoint's tree.
    pub fn verify(
        &self,
        keys: &[NoteVerifier],
        witnesses: &Witnesses,
    ) -> Result<Proven, TlogProofError> {
        let note = Note::parse(&self.checkpoint).map_err(CheckpointError::from)?;
        // C2SP signed-note: a failing signature by a known key refuses the note, whatever
        // another key says.
        let known = |key: &&NoteVerifier| {
            note.signatures.iter().any(|(name, id, _)| *name == key.key.name && *id == key.key.id)
        };
        if keys.iter().filter(known).any(|key| !note.signed_by(key)) {
            return Err(TlogProofError::Unsigned);
        }
        let signer = keys.iter().find(|key| note.signed_by(key)).ok_or(TlogProofError::Unsigned)?;
        let checkpoint = Checkpoint::from_text(&note.text)?;
        // The log's origin is its key's name: a key signs the checkpoints of its own log only.
        if checkpoint.origin != signer.key.name {
            return Err(TlogProofError::Origin(checkpoint.origin));
        }
        let valid = witnesses.count(&self.checkpoint, &[]);
        if valid < witnesses.required {
            return Err(TlogProofError::TooFewCosignatures { required: witnesses.required, valid });
        }
        if self.index >= checkpoint.size {
            return Err(TlogProofError::Beyond { index: self.index, size: checkpoint.size });
        }
        let extra = self.extra.as_deref().ok_or(TlogProofError::NoEvent)?;
        // Not a byte of the extra data is read before the tree vouches for it.
        let leaf = leaf_hash(&Sha256::digest(extra));
        if !verify_inclusion(&leaf, self.index, checkpoint.size, &self.hashes, &checkpoint.root) {
            return Err(TlogProofError::NotIncluded);
        }
        let (prev, encoded) = extra.split_first_chunk::<32>().ok_or(DecodeError::Truncated)?;
        let event = decode_event(prev, encoded)?;
        if event.seq.unsigned_abs().checked_sub(1) != Some(self.index) || event.seq < 1 {
            return Err(TlogProofError::Seq { seq: event.seq, index: self.index });
        }
        let signed_by = signer.key.name.clone();
        Ok(Proven { event, checkpoint, signed_by, cosigned: valid })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cosignature::Cosigner;
    use crate::note::NoteSigner;
    use crate::{Frontier, GENESIS_HASH, Kind, Node, Record, Subtrees, event_hash};

    /// A trail of `n` events, the tree's nodes, and a checkpoint of it signed by `log` and
    /// cosigned by `witness`.
    fn trail(n: i64, log: &NoteSigner, witness: &NoteSigner) -> (Vec<Event>, String, Vec<Hash>) {
        let mut prev = GENESIS_HASH;
        let mut events = Vec::new();
        let mut leaves = Vec::new();
        for seq in 1..=n {
            let mut event = Event {
                seq,
                event_id: format!("id-{seq}"),
                ts: "2026-12-04T03:00:00.000000Z".into(),
                record: Record { tool: Some(format!("tool {seq}")), ..Record::new(Kind::Decision) },
                prev_hash: hex::encode(prev),
                hash: String::new(),
            };
            prev = event_hash(&prev, &event);
            event.hash = hex::encode(prev);
            leaves.push(prev);
            events.push(event);
        }
        let mut frontier = Frontier::default();
        for leaf in &leaves {
            frontier.push(leaf);
        }
        let checkpoint = Checkpoint {
            origin: log.key().name.clone(),
            size: n.unsigned_abs(),
            root: frontier.root(),
        };
        let note = checkpoint.sign(log).unwrap();
        let text = Note::parse(&note).unwrap().text;
        let cosigned = note + &Cosigner::new(witness).cosign(&text, 1_764_800_000).unwrap();
        (events, cosigned, leaves)
    }

    fn proof(events: &[Event], leaves: &[Hash], seq: i64, note: &str) -> TlogProof {
        let mut tree = Subtrees::new(|node: Node| -> Result<Hash, ()> {
            let width = 1usize << node.level;
            let start = node.index as usize * width;
            let mut frontier = Frontier::default();
            for leaf in &leaves[start..start + width] {
                frontier.push(leaf);
            }
            Ok(frontier.root())
        });
        let hashes = tree.inclusion(seq.unsigned_abs() - 1, leaves.len() as u64).unwrap();
        TlogProof::of(&events[seq as usize - 1], hashes, note.to_owned()).unwrap()
    }

    #[test]
    fn a_proof_reads_back_and_proves_its_event() {
        let (log, witness) =
            (NoteSigner::generate("toolgate/test").unwrap(), NoteSigner::generate("w1").unwrap());
        let (events, note, leaves) = trail(13, &log, &witness);
        let witnesses = Witnesses::of(vec![Cosigner::new(&witness).verifier()], None).unwrap();
        for seq in [1, 6, 13] {
            let proof = proof(&events, &leaves, seq, &note);
            let text = proof.encode();
            assert!(text.starts_with(&format!("{HEADER}\nextra ")));
            assert!(text.contains(&format!("\nindex {}\n", seq - 1)));
            let read = TlogProof::parse(&text).unwrap();
            assert_eq!(read, proof);
            let proven = read.verify(&[log.verifier()], &witnesses).unwrap();
            assert_eq!(proven.event, events[seq as usize - 1]);
            assert_eq!((proven.cosigned, proven.checkpoint.size), (1, 13));
        }
    }

    #[test]
    fn a_proof_that_lies_is_refused() {
        let (log, witness) =
            (NoteSigner::generate("toolgate/test").unwrap(), NoteSigner::generate("w1").unwrap());
        let other = NoteSigner::generate("toolgate/test").unwrap();
        let (events, note, leaves) = trail(9, &log, &witness);
        let good = proof(&events, &leaves, 4, &note);
        let none = Witnesses::default();
        let keys = [log.verifier()];

        // Another event's content at this index, and its hashes: the leaf is in the tree, but
        // not at this index.
        let mut moved = proof(&events, &leaves, 5, &note);
        moved.index = 3;
        assert_eq!(moved.verify(&keys, &none).unwrap_err(), TlogProofError::NotIncluded);
        // The event changed, its seq kept.
        let mut changed = events[3].clone();
        changed.record.tool = Some("rm -rf /".into());
        let mut forged = good.clone();
        forged.extra = TlogProof::of(&changed, vec![], String::new()).unwrap().extra;
        assert_eq!(forged.verify(&keys, &none).unwrap_err(), TlogProofError::NotIncluded);
        // A hash of the proof changed.
        let mut bent = good.clone();
        bent.hashes[0][0] ^= 1;
        assert_eq!(bent.verify(&keys, &none).unwrap_err(), TlogProofError::NotIncluded);
        // Signed by a key of the same name that is not the log's.
        assert_eq!(good.verify(&[other.verifier()], &none).unwrap_err(), TlogProofError::Unsigned);
        // A failing line of a known key refuses the note, though another key signed it.
        let mut lying = good.clone();
        let line = other.sign_line(&Note::parse(&note).unwrap().text);
        let (name, id) = (&log.key().name, log.key().id);
        let forged = line.replacen(&other.key().name, name, 1);
        let forged = forged.replacen(
            forged.split(' ').nth(2).unwrap(),
            &{
                use base64::Engine;
                let mut bytes = BASE64.decode(forged.split(' ').nth(2).unwrap().trim()).unwrap();
                bytes[..4].copy_from_slice(&id.to_be_bytes());
                BASE64.encode(bytes) + "\n"
            },
            1,
        );
        lying.checkpoint.push_str(&line);
        lying.checkpoint.push_str(&forged);
        assert!(lying.verify(&[other.verifier()], &none).is_ok(), "the other key signed it");
        let keys_and_another = [other.verifier(), log.verifier()];
        assert_eq!(lying.verify(&keys_and_another, &none).unwrap_err(), TlogProofError::Unsigned);
        // A key that signs another log's checkpoint.
        let stranger = NoteSigner::generate("toolgate/elsewhere").unwrap();
        let mut foreign = good.clone();
        foreign.checkpoint = stranger.sign(&Note::parse(&note).unwrap().text).unwrap();
        assert!(matches!(
            foreign.verify(&[stranger.verifier()], &none),
            Err(TlogProofError::Origin(_))
        ));
        // No event, or an index past the tree.
        let bare = TlogProof { extra: None, ..good.clone() };
        assert_eq!(bare.verify(&keys, &none).unwrap_err(), TlogProofError::NoEvent);
        let beyond = TlogProof { index: 9, ..good.clone() };
        assert!(matches!(beyond.verify(&keys, &none), Err(TlogProofError::Beyond { .. })));
        // A witness that did not cosign.
        let absent = Witnesses::of(vec![Cosigner::new(&other).verifier()], None).unwrap();
        assert_eq!(
            good.verify(&keys, &absent).unwrap_err(),
            TlogProofError::TooFewCosignatures { required: 1, valid: 0 }
        );
        assert!(good.verify(&keys, &none).is_ok());
    }

    #[test]
    fn malformed_texts_are_refused() {
        let log = NoteSigner::generate("toolgate/test").unwrap();
        let (events, note, leaves) = trail(3, &log, &log);
        let text = proof(&events, &leaves, 2, &note).encode();
        let hash = BASE64.encode([0u8; 32]);
        for bad in [
            text.replacen(HEADER, "c2sp.org/tlog-proof@v2", 1),
            text.replacen("\nindex 1\n", "\nindex 01\n", 1),
            text.replacen("\nindex 1\n", "\nindex -1\n", 1),
            text.replacen("\nindex 1\n", "\n", 1),
            text.replacen("\nextra ", "\nextra !", 1),
            text.replacen("\nindex 1\n", &format!("\nindex 1\n{}\n", BASE64.encode([0u8; 31])), 1),
            text.replacen("\nindex 1\n", &format!("\nindex 1\n{}\n", hash.repeat(64)), 1),
            text.replacen(
                "\nindex 1\n",
                &format!("\nindex 1\n{}", format!("{hash}\n").repeat(64)),
                1,
            ),
            text[..text.len() - 1].to_owned(),
            text.split("\n\n").next().unwrap().to_owned(),
        ] {
            assert!(TlogProof::parse(&bad).is_err(), "{bad:?}");
        }
        let bare = TlogProof { extra: None, ..TlogProof::parse(&text).unwrap() };
        assert_eq!(TlogProof::parse(&bare.encode()).unwrap(), bare, "the extra line is optional");
    }
}
