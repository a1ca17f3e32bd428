//! The wire format of a witness's `add-checkpoint` (C2SP `tlog-witness`), shared by the
//! sidecar that submits and the witness that answers: the request body is an old size line, up
//! to 63 consistency proof lines, an empty line, then the signed checkpoint.
//!
//! ```text
//! old 20
//! PlRNCrwHpqhGrupue0L7gxbjbMiKA9temvuZZDDpkaw=
//!
//! toolgate/node-1
//! 27
//! …
//! ```

use base64::Engine;
use base64::engine::general_purpose::STANDARD as BASE64;

use crate::Hash;

/// The content type of a 409 answer, whose body is the size the witness holds and a newline.
pub const SIZE_CONTENT_TYPE: &str = "text/x.tlog.size";

/// At most this many proof lines (a proof of a tree of 2^63 leaves is shorter).
const MAX_PROOF: usize = 63;

/// A parsed `add-checkpoint` request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AddCheckpoint {
    /// The size of the checkpoint the proof starts from.
    pub old: u64,
    pub proof: Vec<Hash>,
    /// The signed checkpoint, as a note.
    pub note: String,
}

impl AddCheckpoint {
    /// The request body for `note`, with the consistency proof from `old`.
    pub fn body(old: u64, proof: &[Hash], note: &str) -> String {
        let mut body = format!("old {old}\n");
        for hash in proof {
            body.push_str(&BASE64.encode(hash));
            body.push('\n');
        }
        body.push('\n');
        body.push_str(note);
        body
    }

    /// Reads a request body; the error says what is wrong with it (a 400 answer).
    pub fn parse(body: &[u8]) -> Result<Self, &'static str> {
        let body = std::str::from_utf8(body).map_err(|_| "the body is not UTF-8")?;
        let (old, mut rest) = body.split_once('\n').ok_or("no old size line")?;
        let old = old.strip_prefix("old ").ok_or("the first line is `old <size>`")?;
        if old.is_empty()
            || !old.bytes().all(|b| b.is_ascii_digit())
            || (old.len() > 1 && old.starts_with('0'))
        {
            return Err("the old size is a decimal without leading zeros");
        }
        let old = old.parse().map_err(|_| "the old size is too large")?;
        let mut proof = Vec::new();
        loop {
            let (line, next) =
                rest.split_once('\n').ok_or("no empty line before the checkpoint")?;
            rest = next;
            if line.is_empty() {
                break;
            }
            if proof.len() == MAX_PROOF {
                return Err("more than 63 proof lines");
            }
            let hash = BASE64.decode(line).ok().and_then(|h| Hash::try_from(h).ok());
            proof.push(hash.ok_or("a proof line is not 32 bytes of base64")?);
        }
        Ok(Self { old, proof, note: rest.to_owned() })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_body_reads_back_as_it_was_written() {
        let note = "o\n2\nAAAA\n\n\u{2014} o AAAA\n";
        let body = AddCheckpoint::body(1, &[[3; 32]], note);
        assert!(body.starts_with("old 1\nAwMD"));
        assert_eq!(
            AddCheckpoint::parse(body.as_bytes()),
            Ok(AddCheckpoint { old: 1, proof: vec![[3; 32]], note: note.to_owned() })
        );
        let first = AddCheckpoint::parse(b"old 0\n\nnote\n").unwrap();
        assert_eq!((first.old, first.proof.len(), first.note.as_str()), (0, 0, "note\n"));
    }

    #[test]
    fn malformed_bodies_are_refused() {
        let long = format!("old 1\n{}\nnote\n", format!("{}\n", BASE64.encode([0; 32])).repeat(64));
        for body in [
            "".to_owned(),
            "old 01\n\nnote\n".to_owned(),
            "old -1\n\nnote\n".to_owned(),
            "old\n\nnote\n".to_owned(),
            "new 1\n\nnote\n".to_owned(),
            "old 1\nAAAA\n\nnote\n".to_owned(),
            "old 1\nnote\n".to_owned(),
            "old 99999999999999999999\n\nnote\n".to_owned(),
            long,
        ] {
            assert!(AddCheckpoint::parse(body.as_bytes()).is_err(), "{body:?}");
        }
        assert!(AddCheckpoint::parse(b"old 1\n\xff\n\n").is_err());
    }
}
