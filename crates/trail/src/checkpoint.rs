//! Checkpoints (C2SP `tlog-checkpoint`): the signed head of a Merkle tree as a note whose text
//! is three lines, the log's origin, the tree's size and its root hash:
//!
//! ```text
//! toolgate/node-1
//! 120
//! 5pWUlq6q8c9bPoxrVzU0jUbXSlGGeK2z7WX8Q0gGXxw=
//!
//! — toolgate/node-1 Az3nAf…
//! ```

use base64::Engine;
use base64::engine::general_purpose::STANDARD as BASE64;

use crate::Hash;
use crate::note::{Note, NoteError, NoteSigner, NoteVerifier};

/// A tree head: what a checkpoint says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Checkpoint {
    pub origin: String,
    pub size: u64,
    pub root: Hash,
}

/// Why a checkpoint is refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CheckpointError {
    #[error(transparent)]
    Note(#[from] NoteError),
    #[error("not a checkpoint: {0}")]
    Malformed(&'static str),
}

impl Checkpoint {
    /// The note's text: origin, size and root, each on its line.
    pub fn text(&self) -> String {
        format!("{}\n{}\n{}\n", self.origin, self.size, BASE64.encode(self.root))
    }

    /// The checkpoint signed by `signer`: the note, as it is kept and shown.
    pub fn sign(&self, signer: &NoteSigner) -> Result<String, NoteError> {
        signer.sign(&self.text())
    }

    /// Reads a checkpoint from a note's text (extension lines after the third are allowed and
    /// ignored, as the spec says, if none is empty).
    pub fn from_text(text: &str) -> Result<Self, CheckpointError> {
        let mut lines = text.split('\n');
        let (Some(origin), Some(size), Some(root)) = (lines.next(), lines.next(), lines.next())
        else {
            return Err(CheckpointError::Malformed("three lines: origin, size, root"));
        };
        if origin.is_empty() {
            return Err(CheckpointError::Malformed("the origin is empty"));
        }
        let valid_size = !size.is_empty()
            && size.bytes().all(|b| b.is_ascii_digit())
            && (size == "0" || !size.starts_with('0'));
        let size =
            size.parse().ok().filter(|_| valid_size).ok_or(CheckpointError::Malformed(
                "the size is not a decimal without leading zeros",
            ))?;
        let root = BASE64
            .decode(root)
            .ok()
            .and_then(|r| Hash::try_from(r).ok())
            .ok_or(CheckpointError::Malformed("the root is not 32 bytes of base64"))?;
        // C2SP tlog-checkpoint: extension lines are not empty (an empty one would read, to
        // some, as the end of the text), and the text ends in a newline.
        let rest: Vec<&str> = lines.collect();
        match rest.split_last() {
            Some((&"", extensions)) if extensions.iter().all(|l| !l.is_empty()) => {}
            _ => {
                return Err(CheckpointError::Malformed(
                    "an empty extension line, or no newline at the end",
                ));
            }
        }
        Ok(Self { origin: origin.to_owned(), size, root })
    }

    /// Opens a signed checkpoint: its signature by `verifier`, then its text.
    pub fn open(note: &str, verifier: &NoteVerifier) -> Result<Self, CheckpointError> {
        Self::from_text(&Note::open(note, verifier)?.text)
    }

    /// Reads a signed checkpoint's text without checking any signature (the signature is
    /// checked where a key is known).
    pub fn read(note: &str) -> Result<Self, CheckpointError> {
        Self::from_text(&Note::parse(note)?.text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_checkpoint_signs_and_opens_as_the_spec_writes_it() {
        let signer = NoteSigner::generate("toolgate/test").unwrap();
        let checkpoint = Checkpoint { origin: "toolgate/test".into(), size: 8, root: [7; 32] };
        let note = checkpoint.sign(&signer).unwrap();
        assert!(note.starts_with("toolgate/test\n8\nBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwc=\n\n\u{2014} toolgate/test "));
        assert_eq!(Checkpoint::open(&note, &signer.verifier()).unwrap(), checkpoint);
        let forged = note.replacen("\n8\n", "\n9\n", 1);
        assert!(Checkpoint::open(&forged, &signer.verifier()).is_err());
        assert_eq!(Checkpoint::read(&forged).unwrap().size, 9, "read alone checks no signature");
    }

    #[test]
    fn malformed_texts_are_refused() {
        let root = BASE64.encode([0; 32]);
        for text in [
            format!("\n1\n{root}\n"),
            format!("o\n01\n{root}\n"),
            format!("o\n-1\n{root}\n"),
            format!("o\n1\n{}\n", BASE64.encode([0; 31])),
            "o\n1\n".to_owned(),
            format!("o\n1\n{root}"),
            // Found by the `notes` fuzz target: a blank line inside the text, with what looks
            // like a signature line after it.
            format!("o\n5\n{root}\n\n\u{2014} o AAAA\n"),
            format!("o\n5\n{root}\nextension\n\n"),
        ] {
            assert!(Checkpoint::from_text(&text).is_err(), "{text:?}");
        }
        assert_eq!(Checkpoint::from_text(&format!("o\n0\n{root}\nextension\n")).unwrap().size, 0);
    }
}
