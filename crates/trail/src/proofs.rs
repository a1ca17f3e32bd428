//! The proofs file of `export --proofs`: one JSON line per exported row that the checkpoint
//! covers, in the export's order, with the row's RFC 6962 inclusion proof in the checkpoint's
//! tree (the hashes in base64, leaf to root):
//!
//! ```text
//! {"seq":12,"proof":["n1Jx…=","0mSo…="]}
//! ```
//!
//! A row's leaf is SHA-256(0x00 ‖ its `hash`, 32 raw bytes), at index `seq − 1`.

use std::io::{self, BufRead, Write};

use base64::Engine;
use base64::engine::general_purpose::STANDARD as BASE64;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::Hash;

#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Line {
    seq: i64,
    proof: Vec<String>,
}

/// Writes a proofs file and hashes it.
pub struct ProofsWriter<W> {
    out: W,
    hasher: Sha256,
}

impl<W: Write> ProofsWriter<W> {
    pub fn new(out: W) -> Self {
        Self { out, hasher: Sha256::new() }
    }

    /// Writes the proof of the row at `seq`.
    pub fn write(&mut self, seq: i64, proof: &[Hash]) -> io::Result<()> {
        let proof = proof.iter().map(|h| BASE64.encode(h)).collect();
        let mut line = serde_json::to_vec(&Line { seq, proof })?;
        line.push(b'\n');
        self.hasher.update(&line);
        self.out.write_all(&line)
    }

    /// The writer, flushed, and the hex SHA-256 of what was written.
    pub fn finish(mut self) -> io::Result<(W, String)> {
        self.out.flush()?;
        Ok((self.out, hex::encode(self.hasher.finalize())))
    }
}

/// Reads a proofs file line by line, hashing it.
pub struct ProofsReader<R> {
    lines: io::Lines<R>,
    hasher: Sha256,
    line: u64,
}

impl<R: BufRead> ProofsReader<R> {
    pub fn new(input: R) -> Self {
        Self { lines: input.lines(), hasher: Sha256::new(), line: 0 }
    }

    /// The next row's proof, `None` at the end; the error names the line.
    pub fn next_proof(&mut self) -> Result<Option<(i64, Vec<Hash>)>, String> {
        let Some(text) = self.lines.next() else { return Ok(None) };
        self.line += 1;
        let at = self.line;
        let text = text.map_err(|e| format!("proofs line {at}: {e}"))?;
        self.hasher.update(text.as_bytes());
        self.hasher.update(b"\n");
        let line: Line =
            serde_json::from_str(&text).map_err(|e| format!("proofs line {at}: {e}"))?;
        let proof = line
            .proof
            .iter()
            .map(|h| BASE64.decode(h).ok().and_then(|h| Hash::try_from(h).ok()))
            .collect::<Option<Vec<_>>>()
            .ok_or_else(|| format!("proofs line {at}: a hash is not 32 bytes of base64"))?;
        Ok(Some((line.seq, proof)))
    }

    /// The hex SHA-256 of the lines read (each with its newline).
    pub fn sha256(&self) -> String {
        hex::encode(self.hasher.clone().finalize())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn proofs_read_back_as_written_and_hash_alike() {
        let mut writer = ProofsWriter::new(Vec::new());
        writer.write(3, &[[1; 32], [2; 32]]).unwrap();
        writer.write(4, &[]).unwrap();
        let (bytes, sha) = writer.finish().unwrap();
        assert!(String::from_utf8_lossy(&bytes).starts_with("{\"seq\":3,\"proof\":[\"AQEB"));
        let mut reader = ProofsReader::new(bytes.as_slice());
        assert_eq!(reader.next_proof().unwrap(), Some((3, vec![[1; 32], [2; 32]])));
        assert_eq!(reader.next_proof().unwrap(), Some((4, vec![])));
        assert_eq!(reader.next_proof().unwrap(), None);
        assert_eq!(reader.sha256(), sha);
        let mut bad = ProofsReader::new(&b"{\"seq\":1,\"proof\":[\"AAAA\"]}\n"[..]);
        assert!(bad.next_proof().unwrap_err().contains("line 1"));
    }
}
