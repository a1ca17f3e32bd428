//! Cosignatures (C2SP `tlog-cosignature`): a witness's statement that, at a time, the
//! checkpoint it signs is the largest consistent tree it has seen for the checkpoint's log. A
//! cosignature is one more signature line on the checkpoint's note, in one of two forms:
//!
//! - Ed25519 (`cosignature/v1`, key ids with the type byte 0x04):
//!
//!   ```text
//!   — <witness name> base64(key id, 4 bytes ‖ time, u64 big-endian ‖ Ed25519 signature)
//!   ```
//!
//!   where the signature is over `cosignature/v1\ntime <time>\n` followed by the checkpoint's
//!   text. A witness's Ed25519 key is an ordinary signing key (`toolgate keygen`); only its id
//!   and the message it signs differ.
//! - ML-DSA-44 (type 0x06, post-quantum, the one the spec recommends for new deployments):
//!   `ml_dsa.rs` has its message and key formats.

mod ml_dsa;

use base64::Engine;
use base64::engine::general_purpose::STANDARD as BASE64;
use ed25519_dalek::{Signature, Signer, SigningKey, Verifier as _, VerifyingKey};

use crate::checkpoint::Checkpoint;
use crate::note::{self, ED25519, KeyName, Note, NoteError, NoteSigner};

/// The signature type of `cosignature/v1` keys.
const COSIGNATURE_V1: u8 = 0x04;

/// What an Ed25519 witness signs: the header, the time and the checkpoint's text.
fn message(text: &str, time: u64) -> String {
    format!("cosignature/v1\ntime {time}\n{text}")
}

/// The time a signature line's bytes (after the key id) give, when they have the length of a
/// cosignature of either form (an Ed25519 note signature has none): how a reader that knows no
/// witness key tells the witnesses' lines from the log's.
pub fn timestamp(signature: &[u8]) -> Option<u64> {
    let cosignature = matches!(signature.len(), 72 | ml_dsa::COSIGNATURE_BYTES);
    let (time, _) = signature.split_first_chunk::<8>().filter(|_| cosignature)?;
    Some(u64::from_be_bytes(*time))
}

/// A witness's key, cosigning checkpoints.
pub struct Cosigner {
    key: KeyName,
    signing: Signing,
}

enum Signing {
    Ed25519(Box<SigningKey>),
    /// The key, which keeps the seed it was made from (and zeroes both when dropped).
    MlDsa44(Box<::ml_dsa::SigningKey<::ml_dsa::MlDsa44>>),
}

/// A key that checks a witness's cosignatures.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CosignatureVerifier {
    pub key: KeyName,
    verifying: Verifying,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Verifying {
    Ed25519(VerifyingKey),
    /// The 1312-byte public key.
    MlDsa44(Vec<u8>),
}

impl Cosigner {
    /// The cosigning key made from an Ed25519 signing key (the same name and secret).
    pub fn new(signer: &NoteSigner) -> Self {
        let signing = signer.signing_key().clone();
        let name = signer.key().name.clone();
        let id = note::key_id(&name, COSIGNATURE_V1, signing.verifying_key().as_bytes());
        Self { key: KeyName { name, id }, signing: Signing::Ed25519(Box::new(signing)) }
    }

    /// A new ML-DSA-44 cosigning key named `name`, from 32 random bytes.
    pub fn generate_ml_dsa_44(name: &str) -> Result<Self, NoteError> {
        check_ml_dsa_name(name)?;
        let mut seed = [0; 32];
        getrandom::fill(&mut seed).map_err(|_| NoteError::Key("no randomness to make a key"))?;
        Ok(Self::ml_dsa_44(name, seed))
    }

    fn ml_dsa_44(name: &str, mut seed: [u8; 32]) -> Self {
        let signing = Box::new(ml_dsa::signing_key(seed));
        seed.fill(0);
        let id = note::key_id(name, ml_dsa::TYPE, &ml_dsa::public_key(&signing));
        Self { key: KeyName { name: name.to_owned(), id }, signing: Signing::MlDsa44(signing) }
    }

    /// Reads a witness's signing key: `PRIVATE+KEY+<name>+<id>+<base64>`, an Ed25519 key
    /// (type 0x01, as `toolgate keygen --witness` writes it) or an ML-DSA-44 seed (type 0x06,
    /// `--algorithm ml-dsa-44`, its id the cosignature key's).
    pub fn parse(text: &str) -> Result<Self, NoteError> {
        let (name, id, key) = note::private_key_parts(text)?;
        match note::typed_key(key, &[ED25519, ml_dsa::TYPE])? {
            (ED25519, _) => Ok(Self::new(&NoteSigner::parse(text)?)),
            (_, seed) => {
                check_ml_dsa_name(name)?;
                let cosigner = Self::ml_dsa_44(name, seed);
                if format!("{:08x}", cosigner.key.id) != id {
                    return Err(NoteError::Key("the key id does not match the key"));
                }
                Ok(cosigner)
            }
        }
    }

    /// An ML-DSA-44 key as `PRIVATE+KEY+…`, to keep in a file; `None` for an Ed25519 one, which
    /// is kept as the [`NoteSigner`] it was made from.
    pub fn encode_ml_dsa_44(&self) -> Option<String> {
        match &self.signing {
            Signing::Ed25519(_) => None,
            Signing::MlDsa44(key) => Some(format!(
                "PRIVATE+KEY+{}+{:08x}+{}",
                self.key.name,
                self.key.id,
                note::encode_key(ml_dsa::TYPE, key.as_seed())
            )),
        }
    }

    /// The key that checks this witness's cosignatures.
    pub fn verifier(&self) -> CosignatureVerifier {
        let verifying = match &self.signing {
            Signing::Ed25519(key) => Verifying::Ed25519(key.verifying_key()),
            Signing::MlDsa44(key) => Verifying::MlDsa44(ml_dsa::public_key(key)),
        };
        CosignatureVerifier { key: self.key.clone(), verifying }
    }

    /// A cosignature line for the checkpoint whose note text is `text`, made at `time`
    /// (seconds since the Unix epoch, never zero). Refused for a text that is not a
    /// checkpoint; in the ML-DSA-44 form also for one with extension lines, which it would not
    /// sign.
    pub fn cosign(&self, text: &str, time: u64) -> Result<String, NoteError> {
        let not_a_checkpoint = NoteError::Malformed("the text is not a checkpoint");
        let checkpoint = Checkpoint::from_text(text).map_err(|_| not_a_checkpoint.clone())?;
        let time = time.min(i64::MAX.unsigned_abs());
        let signature = match &self.signing {
            Signing::Ed25519(key) => key.sign(message(text, time).as_bytes()).to_bytes().to_vec(),
            Signing::MlDsa44(key) => {
                if text != checkpoint.text() {
                    return Err(NoteError::Malformed(
                        "an ML-DSA-44 cosigner signs no extension lines",
                    ));
                }
                let message =
                    ml_dsa::message(&self.key.name, time, &checkpoint).ok_or(not_a_checkpoint)?;
                ml_dsa::sign(key, &message).ok_or(NoteError::Malformed("ML-DSA-44 did not sign"))?
            }
        };
        let mut bytes = self.key.id.to_be_bytes().to_vec();
        bytes.extend_from_slice(&time.to_be_bytes());
        bytes.extend_from_slice(&signature);
        Ok(format!("\u{2014} {} {}\n", self.key.name, BASE64.encode(bytes)))
    }
}

/// An ML-DSA-44 cosigner's name: a key name, and at most 255 bytes, as the message carries it.
fn check_ml_dsa_name(name: &str) -> Result<(), NoteError> {
    note::check_name(name)?;
    if name.len() > 255 {
        return Err(NoteError::Key("an ML-DSA-44 cosigner's name is at most 255 bytes"));
    }
    Ok(())
}

impl CosignatureVerifier {
    /// Reads a witness's verifier key: `<name>+<id>+<base64(0x04 ‖ Ed25519 public key)>`, or
    /// `<base64(0x06 ‖ ML-DSA-44 public key)>`.
    pub fn parse(text: &str) -> Result<Self, NoteError> {
        let mut parts = text.trim().splitn(3, '+');
        let (Some(name), Some(id), Some(key)) = (parts.next(), parts.next(), parts.next()) else {
            return Err(NoteError::Key("<name>+<id>+<key>"));
        };
        note::check_name(name)?;
        let (kind, public) = note::typed_bytes(key, &[COSIGNATURE_V1, ml_dsa::TYPE])?;
        let verifying = match kind {
            COSIGNATURE_V1 => {
                let public: [u8; 32] =
                    public.as_slice().try_into().map_err(|_| NoteError::Key("not 32 bytes"))?;
                VerifyingKey::from_bytes(&public)
                    .map(Verifying::Ed25519)
                    .map_err(|_| NoteError::Key("not an Ed25519 point"))?
            }
            _ if ml_dsa::is_public_key(&public) => Verifying::MlDsa44(public.clone()),
            _ => return Err(NoteError::Key("not an ML-DSA-44 public key (1312 bytes)")),
        };
        let key = KeyName { name: name.to_owned(), id: note::key_id(name, kind, &public) };
        if format!("{:08x}", key.id) != id {
            return Err(NoteError::Key("the key id does not match the key"));
        }
        Ok(Self { key, verifying })
    }

    /// The key as `<name>+<id>+<base64>`.
    pub fn encode(&self) -> String {
        let key = match &self.verifying {
            Verifying::Ed25519(key) => note::encode_key(COSIGNATURE_V1, key.as_bytes()),
            Verifying::MlDsa44(public) => note::encode_key(ml_dsa::TYPE, public),
        };
        format!("{}+{:08x}+{key}", self.key.name, self.key.id)
    }

    /// The time of this witness's cosignature on `note`: one of its signatures verifies and
    /// none of them fails (a failing signature by a known key rejects the note). An ML-DSA-44
    /// cosignature may carry the time 0 (a statement of consistency, not of the largest tree).
    pub fn cosigned(&self, note: &Note) -> Option<u64> {
        let mut time = None;
        for (name, id, bytes) in &note.signatures {
            if *name != self.key.name || *id != self.key.id {
                continue;
            }
            let (stamp, signature) = bytes.split_at_checked(8)?;
            let stamp = u64::from_be_bytes(stamp.try_into().ok()?);
            match &self.verifying {
                Verifying::Ed25519(key) => {
                    let signature = Signature::from_slice(signature).ok()?;
                    key.verify(message(&note.text, stamp).as_bytes(), &signature).ok()?;
                    time = time.max(Some(stamp).filter(|&t| t > 0));
                }
                Verifying::MlDsa44(public) => {
                    if i64::try_from(stamp).is_err() {
                        return None;
                    }
                    let checkpoint = Checkpoint::from_text(&note.text).ok()?;
                    let message = ml_dsa::message(name, stamp, &checkpoint)?;
                    if !ml_dsa::verifies(public, &message, signature) {
                        return None;
                    }
                    time = time.max(Some(stamp));
                }
            }
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
        assert_eq!(witness.cosign(CHECKPOINT, 1_700_000_000).unwrap(), LINE);
        // docs/trail-format.md shows this cosignature in its worked example.
        let doc = include_str!("../../../../docs/trail-format.md");
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

    /// A checkpoint signed in the ML-DSA-44 cosignature form by FiloSottile/torchwood (its
    /// litewitness test data): the verifier key's line, then the note.
    const TORCHWOOD: &str = include_str!("torchwood-ml-dsa-44.txt");

    #[test]
    fn an_ml_dsa_44_cosignature_made_elsewhere_verifies() {
        let (key, note) = TORCHWOOD.split_once('\n').unwrap();
        let verifier = CosignatureVerifier::parse(key).unwrap();
        assert!(matches!(verifier.verifying, Verifying::MlDsa44(_)));
        assert_eq!(verifier.encode(), key);
        let parsed = Note::parse(note).unwrap();
        assert_eq!(verifier.cosigned(&parsed), Some(0), "its time is 0");
        let moved = Note::parse(&note.replacen("\n1\n", "\n2\n", 1)).unwrap();
        assert_eq!(verifier.cosigned(&moved), None);
    }

    #[test]
    fn an_ml_dsa_44_witness_cosigns_and_only_its_cosignature_verifies() {
        let witness = Cosigner::ml_dsa_44("witness.example/pq", [0x44; 32]);
        let verifier = witness.verifier();
        assert!(matches!(verifier.verifying, Verifying::MlDsa44(_)));
        assert!(verifier.encode().starts_with("witness.example/pq+"));
        assert_eq!(CosignatureVerifier::parse(&verifier.encode()).unwrap(), verifier);
        let line = witness.cosign(CHECKPOINT, 1_700_000_000).unwrap();
        let log = NoteSigner::from_seed("example.com/toolgate", [0x11; 32]);
        let note = Note::parse(&(log.sign(CHECKPOINT).unwrap() + &line)).unwrap();
        assert_eq!(verifier.cosigned(&note), Some(1_700_000_000));
        // Another checkpoint, another witness of the same name, the Ed25519 witness of the same
        // seed: none of them is this cosignature.
        let other = log.sign(&CHECKPOINT.replace("\n8\n", "\n9\n")).unwrap() + &line;
        assert_eq!(verifier.cosigned(&Note::parse(&other).unwrap()), None);
        let stranger = Cosigner::ml_dsa_44("witness.example/pq", [0x45; 32]);
        assert_eq!(stranger.verifier().cosigned(&note), None);
        let classic = Cosigner::new(&NoteSigner::from_seed("witness.example/pq", [0x44; 32]));
        assert_ne!(classic.verifier().key.id, verifier.key.id);
        assert_eq!(classic.verifier().cosigned(&note), None);
        // The name is signed: the same key under another name does not verify.
        let renamed =
            note_with(&log, &line.replacen("witness.example/pq", "witness.example/pr", 1));
        let alias = CosignatureVerifier {
            key: KeyName { name: "witness.example/pr".into(), id: verifier.key.id },
            ..verifier.clone()
        };
        assert_eq!(alias.cosigned(&renamed), None);
        // No extension lines are signed in this form.
        assert!(witness.cosign(&format!("{CHECKPOINT}ext\n"), 1).is_err());
        assert!(classic.cosign(&format!("{CHECKPOINT}ext\n"), 1).is_ok());
    }

    fn note_with(log: &NoteSigner, line: &str) -> Note {
        Note::parse(&(log.sign(CHECKPOINT).unwrap() + line)).unwrap()
    }

    #[test]
    fn a_cosignature_of_either_form_gives_its_time_and_a_note_signature_none() {
        let line = |text: &str| Note::parse(&format!("{CHECKPOINT}\n{text}")).unwrap();
        let classic = line(LINE);
        assert_eq!(timestamp(&classic.signatures[0].2), Some(1_700_000_000));
        let pq = Cosigner::ml_dsa_44("witness.example/pq", [0x44; 32]);
        let post_quantum = line(&pq.cosign(CHECKPOINT, 1_700_000_001).unwrap());
        assert_eq!(timestamp(&post_quantum.signatures[0].2), Some(1_700_000_001));
        let log = NoteSigner::from_seed("example.com/toolgate", [0x11; 32]);
        let signed = Note::parse(&log.sign(CHECKPOINT).unwrap()).unwrap();
        assert_eq!(timestamp(&signed.signatures[0].2), None);
    }

    #[test]
    fn witness_keys_of_both_forms_read_back_as_written() {
        let pq = Cosigner::generate_ml_dsa_44("witness.example/pq").unwrap();
        let kept = pq.encode_ml_dsa_44().unwrap();
        assert!(kept.starts_with(&format!("PRIVATE+KEY+witness.example/pq+{:08x}+B", pq.key.id)));
        let read = Cosigner::parse(&kept).unwrap();
        assert_eq!(read.verifier(), pq.verifier());
        assert!(matches!(read.signing, Signing::MlDsa44(_)));
        assert!(Cosigner::parse(&kept.replacen("+B", "+A", 1)).is_err(), "a changed seed");
        let classic = NoteSigner::from_seed("witness.example/w1", [0x22; 32]);
        let read = Cosigner::parse(&classic.encode()).unwrap();
        assert_eq!(read.verifier().encode(), VERIFIER);
        assert_eq!(read.encode_ml_dsa_44(), None);
        assert!(Cosigner::generate_ml_dsa_44(&"w".repeat(256)).is_err(), "the message holds 255");
        let both = Witnesses::of(vec![pq.verifier(), read.verifier(), pq.verifier()], None);
        assert_eq!(both.unwrap().keys.len(), 2);
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
