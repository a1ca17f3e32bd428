//! Cosignatures (C2SP `tlog-cosignature`, the Ed25519 `cosignature/v1` type): a witness's
//! statement that, at a time, the checkpoint it signs is the largest consistent tree it has
//! seen for the checkpoint's log. A cosignature is one more signature line on the checkpoint's
//! note, by a key whose id is computed with the type byte 0x04:
//!
//! ```text
//! — <witness name> base64(key id, 4 bytes ‖ time, u64 big-endian ‖ Ed25519 signature)
//! ```
//!
//! where the signature is over `cosignature/v1\ntime <time>\n` followed by the checkpoint's
//! text. A witness's key is an ordinary Ed25519 signing key (`toolgate keygen`); only its id
//! and the message it signs differ.

use base64::Engine;
use base64::engine::general_purpose::STANDARD as BASE64;
use ed25519_dalek::{Signature, Signer, SigningKey, Verifier as _, VerifyingKey};

use crate::note::{self, KeyName, Note, NoteError, NoteSigner};

/// The signature type of `cosignature/v1` keys.
const COSIGNATURE_V1: u8 = 0x04;

/// What a witness signs: the header, the time and the checkpoint's text.
fn message(text: &str, time: u64) -> String {
    format!("cosignature/v1\ntime {time}\n{text}")
}

/// A witness's key, cosigning checkpoints.
pub struct Cosigner {
    key: KeyName,
    signing: SigningKey,
}

/// A key that checks a witness's cosignatures.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CosignatureVerifier {
    pub key: KeyName,
    verifying: VerifyingKey,
}

impl Cosigner {
    /// The cosigning key made from an Ed25519 signing key (the same name and secret).
    pub fn new(signer: &NoteSigner) -> Self {
        let signing = signer.signing_key().clone();
        let name = signer.key().name.clone();
        let id = note::key_id(&name, COSIGNATURE_V1, signing.verifying_key().as_bytes());
        Self { key: KeyName { name, id }, signing }
    }

    /// The key that checks this witness's cosignatures.
    pub fn verifier(&self) -> CosignatureVerifier {
        CosignatureVerifier { key: self.key.clone(), verifying: self.signing.verifying_key() }
    }

    /// A cosignature line for the checkpoint whose note text is `text`, made at `time`
    /// (seconds since the Unix epoch, never zero).
    pub fn cosign(&self, text: &str, time: u64) -> String {
        let signature = self.signing.sign(message(text, time).as_bytes());
        let mut bytes = self.key.id.to_be_bytes().to_vec();
        bytes.extend_from_slice(&time.to_be_bytes());
        bytes.extend_from_slice(&signature.to_bytes());
        format!("\u{2014} {} {}\n", self.key.name, BASE64.encode(bytes))
    }
}

impl CosignatureVerifier {
    /// Reads a witness's verifier key: `<name>+<id>+<base64(0x04 ‖ public key)>`.
    pub fn parse(text: &str) -> Result<Self, NoteError> {
        let mut parts = text.trim().splitn(3, '+');
        let (Some(name), Some(id), Some(key)) = (parts.next(), parts.next(), parts.next()) else {
            return Err(NoteError::Key("<name>+<id>+<key>"));
        };
        note::check_name(name)?;
        let (_, public) = note::typed_key(key, &[COSIGNATURE_V1])?;
        let verifying = VerifyingKey::from_bytes(&public)
            .map_err(|_| NoteError::Key("not an Ed25519 point"))?;
        let key =
            KeyName { name: name.to_owned(), id: note::key_id(name, COSIGNATURE_V1, &public) };
        if format!("{:08x}", key.id) != id {
            return Err(NoteError::Key("the key id does not match the key"));
        }
        Ok(Self { key, verifying })
    }

    /// The key as `<name>+<id>+<base64>`.
    pub fn encode(&self) -> String {
        let key = note::encode_key(COSIGNATURE_V1, self.verifying.as_bytes());
        format!("{}+{:08x}+{key}", self.key.name, self.key.id)
    }

    /// The time of this witness's cosignature on `note`: one of its signatures verifies and
    /// none of them fails (a failing signature by a known key rejects the note).
    pub fn cosigned(&self, note: &Note) -> Option<u64> {
        let mut time = None;
        for (name, id, bytes) in &note.signatures {
            if *name != self.key.name || *id != self.key.id {
                continue;
            }
            let (stamp, signature) = bytes.split_at_checked(8)?;
            let stamp = u64::from_be_bytes(stamp.try_into().ok()?);
            let signature = Signature::from_slice(signature).ok()?;
            self.verifying.verify(message(&note.text, stamp).as_bytes(), &signature).ok()?;
            time = time.max(Some(stamp).filter(|&t| t > 0));
        }
        time
    }
}

/// Why a set of witnesses is refused.
#[derive(Debug, thiserror::Error)]
pub enum WitnessesError {
    /// A verifier key that does not read, as given.
    #[error("`{0}`: {1}")]
    Key(String, NoteError),
    /// More required than given, or none of those given.
    #[error("{0}")]
    Required(String),
}

/// Witnesses a checkpoint must carry the cosignatures of: `required` of the `keys` (k of n).
#[derive(Debug, Clone, Default)]
pub struct Witnesses {
    pub keys: Vec<CosignatureVerifier>,
    pub required: usize,
}

impl Witnesses {
    /// `required` of `keys` (all of them when `None`), each key counted once; refused when more
    /// are required than there are keys.
    pub fn of(
        keys: Vec<CosignatureVerifier>,
        required: Option<usize>,
    ) -> Result<Self, WitnessesError> {
        // One public key is one witness, under whatever names it is given.
        let mut unique: Vec<CosignatureVerifier> = Vec::with_capacity(keys.len());
        for key in keys {
            if !unique.iter().any(|k| k.verifying == key.verifying) {
                unique.push(key);
            }
        }
        let keys = unique;
        let required = required.unwrap_or(keys.len());
        if required > keys.len() {
            return Err(WitnessesError::Required(format!(
                "{required} witnesses required, more than the {} keys given",
                keys.len()
            )));
        }
        if required == 0 && !keys.is_empty() {
            let why = "0 witnesses required of the keys given: give no keys instead";
            return Err(WitnessesError::Required(why.into()));
        }
        Ok(Self { keys, required })
    }

    /// [`Witnesses::of`] the verifier keys as text (`toolgate keygen --witness` prints them).
    pub fn parse(keys: &[String], required: Option<usize>) -> Result<Self, WitnessesError> {
        let keys = keys
            .iter()
            .map(|key| {
                CosignatureVerifier::parse(key).map_err(|e| WitnessesError::Key(key.clone(), e))
            })
            .collect::<Result<Vec<_>, _>>()?;
        Self::of(keys, required)
    }

    /// Whether `key` (a cosignature verifier key as a cosignature names it) is one of these.
    pub fn knows(&self, key: &str) -> bool {
        CosignatureVerifier::parse(key).is_ok_and(|key| {
            self.keys.iter().any(|k| k.verifying == key.verifying && k.key == key.key)
        })
    }

    /// How many of the keys cosigned the checkpoint `note`, given the cosignature `lines`
    /// held for it (each a signature line, newline-terminated).
    pub fn count(&self, note: &str, lines: &[String]) -> usize {
        let note = Note::parse(&lines.iter().fold(note.to_owned(), |n, l| n + l)).ok();
        let valid =
            |w: &&CosignatureVerifier| note.as_ref().is_some_and(|n| w.cosigned(n).is_some());
        self.keys.iter().filter(valid).count()
    }

    /// Whether `required` of the keys cosigned the checkpoint `note` (always, when none is
    /// required).
    pub fn satisfied(&self, note: &str, lines: &[String]) -> bool {
        self.required == 0 || self.count(note, lines) >= self.required
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A witness key made from the seed 0x22 × 32, and its cosignature at time 1_700_000_000
    /// of the trail-format worked example's checkpoint, computed independently with Python's
    /// `cryptography` from the C2SP text.
    const VERIFIER: &str =
        "witness.example/w1+e0cd2864+BKCapfR6Z1mAL/lV+NwtKhSlyZ0jvpf4ZBJ/+Tg0VaTw";
    const CHECKPOINT: &str =
        "example.com/toolgate\n8\nXcnaeacGWamtVZy3Ad7ZoqudgjqtL0lgz+Nw7/RgQyg=\n";
    const LINE: &str = "\u{2014} witness.example/w1 4M0oZAAAAABlU/EA/VbuBzbFgAOTDL/1n3WVAW3CPSaC\
        PmdqXb74kwkWFwGmvgbwggi33picabda75UwpA7TtoF+JdtK74wfXbKOCw==\n";

    fn witness() -> Cosigner {
        Cosigner::new(&NoteSigner::from_seed("witness.example/w1", [0x22; 32]))
    }

    #[test]
    fn a_cosignature_is_the_one_the_spec_describes() {
        let witness = witness();
        assert_eq!(witness.verifier().encode(), VERIFIER);
        assert_eq!(CosignatureVerifier::parse(VERIFIER).unwrap(), witness.verifier());
        assert_eq!(witness.cosign(CHECKPOINT, 1_700_000_000), LINE);
        // docs/trail-format.md shows this cosignature in its worked example.
        let doc = include_str!("../../../docs/trail-format.md");
        assert!(doc.contains(LINE.trim_end()) && doc.contains(VERIFIER));
    }

    #[test]
    fn a_cosignature_verifies_on_its_checkpoint_only() {
        let log = NoteSigner::from_seed("example.com/toolgate", [0x11; 32]);
        let note = log.sign(CHECKPOINT).unwrap() + LINE;
        let parsed = Note::parse(&note).unwrap();
        assert_eq!(witness().verifier().cosigned(&parsed), Some(1_700_000_000));
        assert!(parsed.signed_by(&log.verifier()), "the log's own signature still verifies");
        let other = log.sign(&CHECKPOINT.replace("\n8\n", "\n9\n")).unwrap() + LINE;
        assert_eq!(witness().verifier().cosigned(&Note::parse(&other).unwrap()), None);
        let stranger = Cosigner::new(&NoteSigner::generate("witness.example/w1").unwrap());
        assert_eq!(stranger.verifier().cosigned(&parsed), None);
    }

    #[test]
    fn a_log_key_is_not_a_witness_key() {
        let log = NoteSigner::from_seed("example.com/toolgate", [0x11; 32]);
        assert!(CosignatureVerifier::parse(&log.verifier().encode()).is_err());
        assert_ne!(Cosigner::new(&log).key.id, log.key().id);
    }

    #[test]
    fn witnesses_count_one_public_key_once_and_require_at_least_one_of_those_given() {
        let w1 = CosignatureVerifier::parse(VERIFIER).unwrap();
        let other = Cosigner::new(&NoteSigner::from_seed("witness.example/w2", [0x33; 32]));
        let keys = vec![w1.clone(), w1.clone(), other.verifier()];
        let witnesses = Witnesses::of(keys, None).unwrap();
        assert_eq!((witnesses.keys.len(), witnesses.required), (2, 2));
        assert!(Witnesses::of(vec![w1.clone()], Some(2)).is_err());
        assert!(Witnesses::of(vec![w1.clone()], Some(0)).is_err());
        assert_eq!(Witnesses::of(Vec::new(), None).unwrap().required, 0);
        // The known key's cosignature counts; the other's absence makes two of two unmet.
        let one = Witnesses::of(vec![w1.clone()], None).unwrap();
        assert!(one.knows(VERIFIER) && !one.knows(&other.verifier().encode()));
        // (A note's signature lines follow its text after a blank line.)
        let note = format!("{CHECKPOINT}\n");
        assert!(one.satisfied(&note, &[LINE.to_owned()]));
        assert!(!witnesses.satisfied(&note, &[LINE.to_owned()]));
        assert_eq!(witnesses.count(&note, &[LINE.to_owned()]), 1);
        assert_eq!(witnesses.count(&note, &[]), 0);
    }
}
