//! The proofs file of `export --proofs`: for each exported row that the checkpoint covers, in
//! the export's order, the row's offline proof (C2SP `tlog-proof`, [`crate::tlog_proof`]) in
//! the checkpoint's tree, one after the other, so that any row travels alone with its proof:
//!
//! ```text
//! c2sp.org/tlog-proof@v1
//! extra …
//! index 11
//! n1Jx…=
//!
//! <the checkpoint, with its cosignatures>
//! c2sp.org/tlog-proof@v1
//! …
//! ```
//!
//! Exports made before it wrote one JSON line per row, `{"seq":12,"proof":["n1Jx…=", …]}`;
//! those still read. A row's leaf is SHA-256(0x00 ‖ its `hash`, 32 raw bytes), at index
//! `seq − 1`.

use std::io::{self, BufRead, Read, Write};

use base64::Engine;
use base64::engine::general_purpose::STANDARD as BASE64;
use serde::Deserialize;
use sha2::{Digest, Sha256};

use crate::checkpoint::Checkpoint;
use crate::tlog_proof::{HEADER, MAX_BYTES, TlogProof};
use crate::{Event, Hash};

/// A line of an older proofs file.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Line {
    seq: i64,
    proof: Vec<String>,
}

/// One row's proof, as read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RowProof {
    pub seq: i64,
    /// The inclusion proof in the checkpoint's tree.
    pub hashes: Vec<Hash>,
    /// What the proof says the row's `hash` is (SHA-256 of its extra data); `None` in the older
    /// form, which does not say.
    pub leaf_data: Option<Hash>,
    /// The checkpoint the proof carries (its signature not checked here); `None` in the older
    /// form, which carries none.
    pub checkpoint: Option<Checkpoint>,
}

/// Writes a proofs file and hashes it.
pub struct ProofsWriter<W> {
    out: W,
    hasher: Sha256,
    /// The signed checkpoint the proofs lead to, with its cosignatures.
    checkpoint: String,
}

impl<W: Write> ProofsWriter<W> {
    /// Proofs in the tree of the signed `checkpoint` note.
    pub fn new(out: W, checkpoint: String) -> Self {
        Self { out, hasher: Sha256::new(), checkpoint }
    }

    /// Writes the proof of the row `event`.
    pub fn write(&mut self, event: &Event, proof: Vec<Hash>) -> io::Result<()> {
        let bundle = TlogProof::of(event, proof, self.checkpoint.clone())
            .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))?;
        let text = bundle.encode();
        self.hasher.update(text.as_bytes());
        self.out.write_all(text.as_bytes())
    }

    /// The writer, flushed, and the hex SHA-256 of what was written.
    pub fn finish(mut self) -> io::Result<(W, String)> {
        self.out.flush()?;
        Ok((self.out, hex::encode(self.hasher.finalize())))
    }
}

/// Reads a proofs file proof by proof, in either form, hashing it.
pub struct ProofsReader<R> {
    input: R,
    /// The line read past the end of a bundle: the next one's header.
    peeked: Option<String>,
    hasher: Sha256,
    line: u64,
}

impl<R: BufRead> ProofsReader<R> {
    pub fn new(input: R) -> Self {
        Self { input, peeked: None, hasher: Sha256::new(), line: 0 }
    }

    /// The next line without its `\n`, its bytes hashed as they are; `None` at the end. A line
    /// is read up to [`MAX_BYTES`] (a longer one is refused before it is all in memory) and
    /// must end in `\n` and be UTF-8.
    fn next_line(&mut self) -> Result<Option<String>, String> {
        if let Some(line) = self.peeked.take() {
            return Ok(Some(line));
        }
        let mut bytes = Vec::new();
        let limit = MAX_BYTES as u64 + 1;
        let read = (&mut self.input).take(limit).read_until(b'\n', &mut bytes);
        let at = self.line + 1;
        match read.map_err(|e| format!("proofs line {at}: {e}"))? {
            0 => return Ok(None),
            n if n as u64 >= limit => return Err(format!("proofs line {at}: longer than 32 MiB")),
            _ => {}
        }
        self.line = at;
        self.hasher.update(&bytes);
        if bytes.pop() != Some(b'\n') {
            return Err(format!("proofs line {at}: the file ends inside it (no newline)"));
        }
        String::from_utf8(bytes).map(Some).map_err(|_| format!("proofs line {at}: not UTF-8"))
    }

    /// The next row's proof, `None` at the end; the error names the line.
    pub fn next_proof(&mut self) -> Result<Option<RowProof>, String> {
        let Some(first) = self.next_line()? else { return Ok(None) };
        let at = self.line;
        if first != HEADER {
            return older(&first).map(Some).map_err(|e| format!("proofs line {at}: {e}"));
        }
        let text = self.rest_of(first)?;
        let proof = TlogProof::parse(&text).map_err(|e| format!("proofs line {at}: {e}"))?;
        let seq = i64::try_from(proof.index)
            .map_err(|_| format!("proofs line {at}: index {} is too large", proof.index))?;
        let leaf_data = proof.extra.as_deref().map(|extra| Sha256::digest(extra).into());
        let checkpoint = Checkpoint::read(&proof.checkpoint)
            .map_err(|e| format!("proofs line {at}: the checkpoint: {e}"))?;
        Ok(Some(RowProof {
            seq: seq + 1,
            hashes: proof.hashes,
            leaf_data,
            checkpoint: Some(checkpoint),
        }))
    }

    /// The next tlog-proof's text and the line it starts on, `None` at the end (for reading a
    /// file of them one at a time: `verify --proof`).
    pub fn next_text(&mut self) -> Result<Option<(u64, String)>, String> {
        let Some(first) = self.next_line()? else { return Ok(None) };
        let at = self.line;
        if first != HEADER {
            return Err(format!("proofs line {at}: not `{HEADER}`"));
        }
        Ok(Some((at, self.rest_of(first)?)))
    }

    /// A tlog-proof's text, from its header line `first` up to the next header or the end.
    fn rest_of(&mut self, first: String) -> Result<String, String> {
        let at = self.line;
        let mut text = first + "\n";
        while let Some(line) = self.next_line()? {
            if line == HEADER {
                self.peeked = Some(line);
                break;
            }
            if text.len() + line.len() >= MAX_BYTES {
                return Err(format!("proofs line {at}: a proof larger than 32 MiB"));
            }
            text.push_str(&line);
            text.push('\n');
        }
        Ok(text)
    }

    /// The hex SHA-256 of the bytes read.
    pub fn sha256(&self) -> String {
        hex::encode(self.hasher.clone().finalize())
    }
}

/// A proof in the older form: one JSON line.
fn older(text: &str) -> Result<RowProof, String> {
    let line: Line = serde_json::from_str(text).map_err(|e| e.to_string())?;
    let hashes = line
        .proof
        .iter()
        .map(|h| BASE64.decode(h).ok().and_then(|h| Hash::try_from(h).ok()))
        .collect::<Option<Vec<_>>>()
        .ok_or("a hash is not 32 bytes of base64")?;
    Ok(RowProof { seq: line.seq, hashes, leaf_data: None, checkpoint: None })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::note::NoteSigner;
    use crate::{Chain, Kind, Record, decode};

    #[test]
    fn proofs_read_back_as_written_and_hash_alike() {
        let signer = NoteSigner::generate("toolgate/test").unwrap();
        let note = signer.sign("toolgate/test\n2\nAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=\n");
        let (first, chain) =
            Chain::default().link(Record::new(Kind::Decision), "a".into(), "t".into());
        let (second, _) = chain.link(Record::new(Kind::Decision), "b".into(), "t".into());
        let mut writer = ProofsWriter::new(Vec::new(), note.unwrap());
        writer.write(&first, vec![[1; 32]]).unwrap();
        writer.write(&second, vec![[2; 32]]).unwrap();
        let (bytes, sha) = writer.finish().unwrap();
        assert!(String::from_utf8_lossy(&bytes).starts_with("c2sp.org/tlog-proof@v1\nextra "));
        let mut reader = ProofsReader::new(bytes.as_slice());
        for (event, hash) in [(&first, [1; 32]), (&second, [2; 32])] {
            let read = reader.next_proof().unwrap().unwrap();
            assert_eq!((read.seq, read.hashes), (event.seq, vec![hash]));
            assert_eq!(read.leaf_data, decode(&event.hash));
        }
        assert_eq!(reader.next_proof().unwrap(), None);
        assert_eq!(reader.sha256(), sha);
    }

    #[test]
    fn the_older_json_lines_still_read() {
        let older = "{\"seq\":3,\"proof\":[\"AQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQE=\"]}\n{\"seq\":4,\"proof\":[]}\n";
        let mut reader = ProofsReader::new(older.as_bytes());
        let third = reader.next_proof().unwrap().unwrap();
        assert_eq!((third.seq, third.hashes, third.leaf_data), (3, vec![[1; 32]], None));
        assert_eq!(third.checkpoint, None);
        assert_eq!(reader.next_proof().unwrap().unwrap().seq, 4);
        assert_eq!(reader.next_proof().unwrap(), None);
        assert_eq!(reader.sha256(), hex::encode(Sha256::digest(older)));
        let mut bad = ProofsReader::new(&b"{\"seq\":1,\"proof\":[\"AAAA\"]}\n"[..]);
        assert!(bad.next_proof().unwrap_err().contains("line 1"));
    }
}
