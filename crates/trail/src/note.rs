//! Signed notes (C2SP `signed-note`) with Ed25519 keys: the key formats of Go's
//! `golang.org/x/mod/sumdb/note` (which the Go checksum database, Sigsum and the tlog
//! witnesses use), signing a text, and opening a note with the keys one trusts.
//!
//! ```text
//! <text, ending in a newline>
//!
//! — <key name> <base64(key id, 4 bytes || Ed25519 signature, 64 bytes)>
//! ```
//!
//! The key id is the first 4 bytes of SHA-256(key name ‖ 0x0A ‖ 0x01 ‖ public key); a verifier
//! key reads `<name>+<key id, 8 hex digits>+<base64(0x01 ‖ public key)>`, a signing key
//! `PRIVATE+KEY+<name>+<key id>+<base64(0x01 ‖ seed)>`.

use base64::Engine;
use base64::engine::general_purpose::STANDARD as BASE64;
use ed25519_dalek::{Signature, Signer, SigningKey, Verifier as _, VerifyingKey};
use sha2::{Digest, Sha256};

/// The signature type of Ed25519 keys.
pub(super) const ED25519: u8 = 0x01;
/// What starts a signature line: an em dash and a space.
const DASH: &str = "\u{2014} ";

/// The most signature lines a note may have (as Go's `sumdb/note`): each known key's is
/// checked, so a note cannot make its reader verify without end.
const MAX_SIGNATURES: usize = 100;

/// Why a key or a note is refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NoteError {
    #[error("not a key: {0}")]
    Key(&'static str),
    #[error("not a signed note: {0}")]
    Malformed(&'static str),
    #[error("no signature by `{0}` verifies")]
    Unsigned(String),
}

/// A key's name, and its id (computed from the name and the public key).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyName {
    pub name: String,
    pub id: u32,
}

/// A key that signs notes.
pub struct NoteSigner {
    key: KeyName,
    signing: SigningKey,
}

/// A key that verifies notes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NoteVerifier {
    pub key: KeyName,
    verifying: VerifyingKey,
}

/// The id of the key `public` of signature type `kind` named `name`.
pub(super) fn key_id(name: &str, kind: u8, public: &[u8]) -> u32 {
    let mut hasher = Sha256::new();
    hasher.update(name.as_bytes());
    hasher.update([b'\n', kind]);
    hasher.update(public);
    let hash = hasher.finalize();
    u32::from_be_bytes([hash[0], hash[1], hash[2], hash[3]])
}

/// A key name: not empty, no `+`, no white space, no control characters.
pub(super) fn check_name(name: &str) -> Result<(), NoteError> {
    if name.is_empty() || name.chars().any(|c| c == '+' || c.is_whitespace() || c.is_control()) {
        return Err(NoteError::Key("a key name is not empty and has no `+` or white space"));
    }
    Ok(())
}

/// `<type> ‖ 32 bytes` from base64, for one of the types `kinds`: the type and the key.
pub(super) fn typed_key(text: &str, kinds: &[u8]) -> Result<(u8, [u8; 32]), NoteError> {
    let (kind, key) = typed_bytes(text, kinds)?;
    Ok((kind, key.try_into().map_err(|_| NoteError::Key("not 32 bytes"))?))
}

/// `<type> ‖ key` from base64, for one of the types `kinds`: the type and the key's bytes.
pub(super) fn typed_bytes(text: &str, kinds: &[u8]) -> Result<(u8, Vec<u8>), NoteError> {
    let bytes = BASE64.decode(text).map_err(|_| NoteError::Key("the key is not base64"))?;
    match bytes.split_first() {
        Some((kind, key)) if kinds.contains(kind) => Ok((*kind, key.to_vec())),
        _ => Err(NoteError::Key("not a key of this type")),
    }
}

pub(super) fn encode_key(kind: u8, key: &[u8]) -> String {
    let mut typed = vec![kind];
    typed.extend_from_slice(key);
    BASE64.encode(typed)
}

/// A signing key's name, id and base64 key: `PRIVATE+KEY+<name>+<id>+<base64>`.
pub(super) fn private_key_parts(text: &str) -> Result<(&str, &str, &str), NoteError> {
    let rest = text.trim().strip_prefix("PRIVATE+KEY+").ok_or(NoteError::Key("no PRIVATE+KEY+"))?;
    let mut parts = rest.splitn(3, '+');
    match (parts.next(), parts.next(), parts.next()) {
        (Some(name), Some(id), Some(key)) => Ok((name, id, key)),
        _ => Err(NoteError::Key("PRIVATE+KEY+<name>+<id>+<key>")),
    }
}

impl NoteSigner {
    /// A new key named `name`, from 32 random bytes.
    pub fn generate(name: &str) -> Result<Self, NoteError> {
        check_name(name)?;
        let mut seed = [0; 32];
        getrandom::fill(&mut seed).map_err(|_| NoteError::Key("no randomness to make a key"))?;
        Ok(Self::from_seed(name, seed))
    }

    pub(super) fn from_seed(name: &str, seed: [u8; 32]) -> Self {
        let signing = SigningKey::from_bytes(&seed);
        let id = key_id(name, ED25519, signing.verifying_key().as_bytes());
        Self { key: KeyName { name: name.to_owned(), id }, signing }
    }

    /// Reads a signing key: `PRIVATE+KEY+<name>+<id>+<base64>`.
    pub fn parse(text: &str) -> Result<Self, NoteError> {
        let (name, id, key) = private_key_parts(text)?;
        check_name(name)?;
        let signer = Self::from_seed(name, typed_key(key, &[ED25519])?.1);
        if format!("{:08x}", signer.key.id) != id {
            return Err(NoteError::Key("the key id does not match the key"));
        }
        Ok(signer)
    }

    /// The key as `PRIVATE+KEY+…`, to keep in a file.
    pub fn encode(&self) -> String {
        format!(
            "PRIVATE+KEY+{}+{:08x}+{}",
            self.key.name,
            self.key.id,
            encode_key(ED25519, &self.signing.to_bytes())
        )
    }

    /// The Ed25519 key itself, for the cosignatures a witness makes with it.
    pub(super) fn signing_key(&self) -> &SigningKey {
        &self.signing
    }

    /// The key's name and id.
    pub fn key(&self) -> &KeyName {
        &self.key
    }

    /// The key that verifies this key's notes.
    pub fn verifier(&self) -> NoteVerifier {
        NoteVerifier { key: self.key.clone(), verifying: self.signing.verifying_key() }
    }

    /// A signature line for `text`.
    pub fn sign_line(&self, text: &str) -> String {
        let signature = self.signing.sign(text.as_bytes());
        let mut bytes = self.key.id.to_be_bytes().to_vec();
        bytes.extend_from_slice(&signature.to_bytes());
        format!("{DASH}{} {}\n", self.key.name, BASE64.encode(bytes))
    }

    /// `text` signed: the note.
    pub fn sign(&self, text: &str) -> Result<String, NoteError> {
        check_text(text)?;
        Ok(format!("{text}\n{}", self.sign_line(text)))
    }
}

impl NoteVerifier {
    /// Reads a verifier key: `<name>+<id>+<base64>`.
    pub fn parse(text: &str) -> Result<Self, NoteError> {
        let mut parts = text.trim().splitn(3, '+');
        let (Some(name), Some(id), Some(key)) = (parts.next(), parts.next(), parts.next()) else {
            return Err(NoteError::Key("<name>+<id>+<key>"));
        };
        check_name(name)?;
        let (_, public) = typed_key(key, &[ED25519])?;
        let verifying = VerifyingKey::from_bytes(&public)
            .map_err(|_| NoteError::Key("not an Ed25519 point"))?;
        let key = KeyName { name: name.to_owned(), id: key_id(name, ED25519, &public) };
        if format!("{:08x}", key.id) != id {
            return Err(NoteError::Key("the key id does not match the key"));
        }
        Ok(Self { key, verifying })
    }

    /// The key as `<name>+<id>+<base64>`, to give to verifiers.
    pub fn encode(&self) -> String {
        format!(
            "{}+{:08x}+{}",
            self.key.name,
            self.key.id,
            encode_key(ED25519, self.verifying.as_bytes())
        )
    }

    /// Whether `signature` (64 bytes) is this key's over `text`.
    fn verifies(&self, text: &str, signature: &[u8]) -> bool {
        Signature::from_slice(signature)
            .is_ok_and(|s| self.verifying.verify(text.as_bytes(), &s).is_ok())
    }
}

/// A note taken apart: its text and its signature lines (name, key id, signature).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Note {
    pub text: String,
    pub signatures: Vec<(String, u32, Vec<u8>)>,
}

/// A note's text is not empty and ends in a newline (the last blank line of a note is the one
/// before its signatures).
fn check_text(text: &str) -> Result<(), NoteError> {
    if !text.ends_with('\n') || text == "\n" {
        return Err(NoteError::Malformed("the text must end in a newline"));
    }
    if text.chars().any(|c| c.is_control() && c != '\n') {
        return Err(NoteError::Malformed("the text has control characters"));
    }
    Ok(())
}

impl Note {
    /// Splits a note into its text and signature lines (not verified).
    pub fn parse(note: &str) -> Result<Self, NoteError> {
        let split = note
            .rfind("\n\n")
            .ok_or(NoteError::Malformed("no blank line before the signatures"))?;
        let (text, signatures) = (&note[..=split], &note[split + 2..]);
        check_text(text)?;
        if !signatures.ends_with('\n') {
            return Err(NoteError::Malformed("the last signature line has no newline"));
        }
        let mut parsed = Vec::new();
        if signatures.split_terminator('\n').nth(MAX_SIGNATURES).is_some() {
            return Err(NoteError::Malformed("more than 100 signatures"));
        }
        for line in signatures.split_terminator('\n') {
            let line = line
                .strip_prefix(DASH)
                .ok_or(NoteError::Malformed("a signature line starts with `— `"))?;
            let (name, signature) =
                line.split_once(' ').ok_or(NoteError::Malformed("`— <name> <signature>`"))?;
            let bytes = BASE64
                .decode(signature)
                .map_err(|_| NoteError::Malformed("a signature is not base64"))?;
            if bytes.len() < 5 {
                return Err(NoteError::Malformed("a signature is too short"));
            }
            let id = u32::from_be_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]);
            parsed.push((name.to_owned(), id, bytes[4..].to_vec()));
        }
        if parsed.is_empty() {
            return Err(NoteError::Malformed("no signature"));
        }
        Ok(Self { text: text.to_owned(), signatures: parsed })
    }

    /// Whether `verifier` signed the note: a signature of its (name, id) verifies, and none
    /// of them fails (C2SP signed-note: a failing signature by a known key rejects the note).
    pub fn signed_by(&self, verifier: &NoteVerifier) -> bool {
        let mut theirs = self
            .signatures
            .iter()
            .filter(|(name, id, _)| *name == verifier.key.name && *id == verifier.key.id)
            .peekable();
        theirs.peek().is_some()
            && theirs.all(|(_, _, signature)| verifier.verifies(&self.text, signature))
    }

    /// The note's text, once `verifier` is shown to have signed it.
    pub fn open(note: &str, verifier: &NoteVerifier) -> Result<Self, NoteError> {
        let note = Self::parse(note)?;
        if note.signed_by(verifier) {
            Ok(note)
        } else {
            Err(NoteError::Unsigned(verifier.key.name.clone()))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Go's `golang.org/x/mod/sumdb/note` example key pair (its package documentation).
    const GO_SIGNER: &str =
        "PRIVATE+KEY+PeterNeumann+c74f20a3+AYEKFALVFGyNhPJEMzD1QIDr+Y7hfZx09iUvxdXHKDFz";
    const GO_VERIFIER: &str = "PeterNeumann+c74f20a3+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW";
    /// C2SP signed-note's example verifier key and note.
    const SPEC_VERIFIER: &str =
        "example.com/foo+530d903a+AekyeRrm56hApGFkyQR4ZCbV54Id2LKaANYcrnKv3U2k";
    const SPEC_NOTE: &str = "This is an example message.\n\n\u{2014} example.com/foo \
        Uw2QOkn8srV1yJGh2VYRlL1Tnagv1YEq6TfXppzi2ONncAlTgK7Ztg1ERYNZXsYjOBH3mFXmRKuwHjG1Yu72IneyaQM=\n";

    #[test]
    fn gos_example_key_pair_reads_back_as_go_writes_it() {
        let signer = NoteSigner::parse(GO_SIGNER).unwrap();
        assert_eq!(signer.encode(), GO_SIGNER);
        assert_eq!(signer.verifier().encode(), GO_VERIFIER);
        assert_eq!(NoteVerifier::parse(GO_VERIFIER).unwrap(), signer.verifier());
    }

    #[test]
    fn the_specs_example_note_verifies() {
        let verifier = NoteVerifier::parse(SPEC_VERIFIER).unwrap();
        let note = Note::open(SPEC_NOTE, &verifier).unwrap();
        assert_eq!(note.text, "This is an example message.\n");
        let changed = SPEC_NOTE.replacen("This", "That", 1);
        assert!(Note::open(&changed, &verifier).is_err());
    }

    #[test]
    fn signing_is_deterministic_as_ed25519_is() {
        // A checkpoint signed with the seed 0x11 x 32, checked with Python's `cryptography`.
        let signer = NoteSigner::from_seed("example.com/toolgate", [0x11; 32]);
        assert_eq!(
            signer.verifier().encode(),
            "example.com/toolgate+b699eaba+AdBKsjJ0K7SrOhNovUYV5ObQIkq3GgFrr4UgozLJd4c3"
        );
        let note =
            signer.sign("example.com/toolgate\n8\nXcnaeacGWamtVZy3Ad7ZoqudgjqtL0lgz+Nw7/RgQyg=\n");
        let note = note.unwrap();
        // docs/trail-format.md shows this checkpoint as its worked example.
        assert!(include_str!("../../../docs/trail-format.md").contains(note.trim_end()));
        assert!(note.ends_with(
            "\n\n\u{2014} example.com/toolgate \
             tpnqupN7UVwsCRujFQUpoUgZ5MkXlVB/zpxVLzGzAb6GZkADNsDXCDZ0MeUKOJ56qEaQI/8kcRjft64eNmnZdSKRyw4=\n"
        ));
    }

    #[test]
    fn a_changed_note_or_another_key_does_not_verify() {
        let signer = NoteSigner::generate("toolgate/test").unwrap();
        let note = signer.sign("a\nb\n").unwrap();
        assert!(Note::open(&note, &signer.verifier()).is_ok());
        let changed = note.replacen("a\n", "c\n", 1);
        assert_eq!(
            Note::open(&changed, &signer.verifier()),
            Err(NoteError::Unsigned("toolgate/test".into()))
        );
        let other = NoteSigner::generate("toolgate/test").unwrap();
        assert!(Note::open(&note, &other.verifier()).is_err());
        assert!(NoteSigner::parse(&signer.encode()).is_ok());
        assert!(NoteVerifier::parse(&signer.verifier().encode()).is_ok());
    }

    #[test]
    fn malformed_notes_and_keys_are_refused_by_name() {
        for note in [
            "",
            "a\n",
            "a\n\n",
            "\n\n\u{2014} k AAAAAAA=\n",
            "a\n\nx\n",
            "a\n\n\u{2014} k !!!\n",
            "a\n\n\u{2014} k AAAA",
            "a\n\n\u{2014} k AAAAAAA=\r\n",
        ] {
            assert!(Note::parse(note).is_err(), "{note:?}");
        }
        let signer = NoteSigner::generate("k").unwrap();
        let line = signer.sign_line("a\n");
        let hundred = format!("a\n\n{}", line.repeat(100));
        assert!(Note::parse(&hundred).is_ok());
        assert!(Note::parse(&format!("{hundred}{line}")).is_err(), "101 signatures");
        assert!(NoteSigner::generate("has space").is_err());
        assert!(NoteSigner::generate("has+plus").is_err());
        assert!(
            NoteVerifier::parse(
                "PeterNeumann+c74f20a4+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW"
            )
            .is_err()
        );
        assert!(NoteSigner::generate("k").unwrap().sign("no newline").is_err());
    }
}
