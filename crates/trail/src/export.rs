//! The verification of a CSV export, as whoever receives one runs it: its rows as a chain (or,
//! filtered, each row's own hash and the links between consecutive rows), the file against its
//! manifest (every byte hashed, the manifest's signature), and each row a checkpoint covers
//! against the checkpoint's tree by its inclusion proof. Checking the rows against a trail the
//! verifier can read is the caller's part: [`ExportCheck`] hands it each row.

use std::io::{self, BufRead, BufReader, Read};

use sha2::{Digest, Sha256};

use crate::checkpoint::Checkpoint;
use crate::csv::{self, CsvError, Header};
use crate::proofs::{ProofsReader, RowProof};
use crate::{Anchors, Event, Manifest, Problem, Report, Verifier, decode, verify_inclusion};

/// What a CSV export is checked against, beyond its own rows.
#[derive(Default)]
pub struct CsvChecks<'a> {
    /// The export was filtered: gaps are expected.
    pub filtered: bool,
    /// The file must match this manifest (and its signature one of `anchors.keys`).
    pub manifest: Option<&'a Manifest>,
    /// Every row the checkpoint covers must be proven in its tree by `proofs`.
    pub anchors: Anchors,
    pub proofs: Option<ProofsReader<Box<dyn BufRead + Send>>>,
}

/// Verifies the CSV export read from `input` (see [`ExportCheck`]); `progress` is called with
/// the number of rows checked now and then.
pub fn verify_csv(
    input: impl Read,
    checks: CsvChecks<'_>,
    mut progress: impl FnMut(u64),
) -> Result<Report, CsvError> {
    let mut export = ExportCheck::new(input, checks)?;
    while export.next_row()?.is_some() {
        if export.checked() % PROGRESS == 0 {
            progress(export.checked());
        }
    }
    progress(export.checked());
    Ok(export.finish())
}

/// How many rows go between two calls of a verification's `progress`.
const PROGRESS: u64 = 1000;

/// A CSV export being verified, row by row.
///
/// A whole-trail export verifies as a chain: gaps are missing rows. With `filtered` (or a
/// manifest whose filter is not empty) gaps are expected, and each row's own hash, the links
/// between rows whose `seq` follow each other, and the order are checked. With a manifest, the
/// file must match it; with a checkpoint, every row it covers must be proven in its tree.
pub struct ExportCheck<'a, R: Read> {
    rows: ::csv::StringRecordsIntoIter<BufReader<HashingReader<R>>>,
    header: Header,
    /// The rows were written with CR LF line ends.
    crlf: bool,
    bom: bool,
    filtered: bool,
    manifest: Option<&'a Manifest>,
    anchors: Anchors,
    proofs: Option<ProofsReader<Box<dyn BufRead + Send>>>,
    /// A proof read ahead of its row (its row is missing from the file).
    pending: Option<RowProof>,
    verifier: Verifier,
    first_seq: Option<i64>,
    report: Report,
}

impl<'a, R: Read> ExportCheck<'a, R> {
    /// Reads the export's byte order mark and header.
    pub fn new(input: R, checks: CsvChecks<'a>) -> Result<Self, CsvError> {
        let CsvChecks { filtered, manifest, anchors, proofs } = checks;
        let filtered = filtered || manifest.is_some_and(|m| !m.filter.is_empty());
        let mut input = BufReader::new(HashingReader { inner: input, hasher: Sha256::new() });
        let bom = input.fill_buf().map_err(::csv::Error::from)?.starts_with(csv::BOM);
        if bom {
            input.consume(csv::BOM.len());
        }
        // The csv reader records a row's line before it consumes the `\n` of the CR LF that
        // ended the row before, so in a CR LF file (as toolgate writes them) it counts every
        // row after the header one line short. Problems name the physical line.
        let crlf = {
            let start = input.fill_buf().map_err(::csv::Error::from)?;
            start
                .iter()
                .position(|&b| b == b'\n')
                .is_some_and(|at| at > 0 && start[at - 1] == b'\r')
        };
        let mut rows = ::csv::ReaderBuilder::new()
            .has_headers(false)
            .flexible(true)
            .from_reader(input)
            .into_records();
        let guard = match manifest.map(|m| m.format.as_str()) {
            Some(crate::manifest::MANIFEST_FORMAT_V1) => csv::Guard::Leading,
            _ => csv::Guard::Fields,
        };
        let header = match rows.next() {
            Some(header) => csv::check_header(&header?)?.guarded(guard),
            None => return Err(CsvError::Header),
        };
        let report = Report { signatures_checked: !anchors.keys.is_empty(), ..Report::default() };
        Ok(Self {
            rows,
            header,
            crlf,
            bom,
            filtered,
            manifest,
            anchors,
            proofs,
            pending: None,
            verifier: if filtered { Verifier::filtered() } else { Verifier::default() },
            first_seq: None,
            report,
        })
    }

    /// Reads and checks the next row that reads (a row that does not is a problem), and hands
    /// it back, so that the caller can also check it against a trail of its own.
    pub fn next_row(&mut self) -> Result<Option<Event>, CsvError> {
        for row in self.rows.by_ref() {
            let event = match row.map_err(CsvError::from).and_then(|row| self.header.parse(&row)) {
                Ok(event) => event,
                Err(CsvError::Row { line, message }) => {
                    let line = line + u64::from(self.crlf);
                    self.report.problems.push(Problem::Unreadable { line, message });
                    continue;
                }
                Err(e) => return Err(e),
            };
            self.first_seq.get_or_insert(event.seq);
            if let Some(checkpoint) = &self.anchors.checkpoint {
                let proofs = self.proofs.as_mut();
                let proven = prove(&event, checkpoint, proofs, &mut self.pending, &mut self.report);
                self.report.problems.extend(proven);
            }
            self.report.problems.extend(self.verifier.check(&event));
            self.report.checked += 1;
            self.report.last = Some((event.seq, event.hash.clone()));
            return Ok(Some(event));
        }
        Ok(None)
    }

    /// Rows checked so far.
    pub fn checked(&self) -> u64 {
        self.report.checked
    }

    /// Adds a problem the caller found with a row.
    pub fn found(&mut self, problem: Problem) {
        self.report.problems.push(problem);
    }

    /// Reads the rest of the file and checks what only the whole file can show: its length
    /// against the checkpoint, the witnesses, the manifest.
    pub fn finish(mut self) -> Report {
        while let Ok(Some(_)) = self.next_row() {}
        let mut report = self.report;
        let last_seq = report.last.as_ref().map(|(seq, _)| *seq);
        if let Some(checkpoint) = &self.anchors.checkpoint {
            let rows_end = last_seq.unwrap_or(0).unsigned_abs();
            if !self.filtered && rows_end < checkpoint.size {
                report.problems.push(Problem::ShorterThanCheckpoint {
                    size: checkpoint.size,
                    events: rows_end,
                });
            }
        }
        report.problems.extend(self.anchors.too_few_cosignatures());
        let Some(manifest) = self.manifest else { return report };
        let mut claims = Vec::new();
        if let (Some(expected), Some(proofs)) = (&manifest.proofs_sha256, self.proofs.as_mut()) {
            // Read to the end, so that the hash covers the whole proofs file.
            while let Ok(Some(_)) = proofs.next_proof() {}
            claims.push(("proofs_sha256", *expected != proofs.sha256()));
        }
        if !self.anchors.keys.is_empty() {
            report.manifest_signed = true;
            if !manifest.signed_by(&self.anchors.keys) {
                report.problems.push(Problem::ManifestMismatch {
                    what:
                        "its signature is missing, not by a --key, or no longer matches its fields"
                            .into(),
                });
            }
        }
        if !self.filtered
            && let (Some(head), Some(last)) = (manifest.head_seq, last_seq)
            && last < head
        {
            report.problems.push(Problem::ManifestMismatch {
                what: format!(
                    "the export ends at seq {last}, before the head it claims (seq {head}): rows were cut off"
                ),
            });
        }
        // The whole file was read: the hash covers every byte of it.
        let sha256 =
            hex::encode(self.rows.into_reader().into_inner().into_inner().hasher.finalize());
        let mismatches = [
            ("csv_sha256", manifest.csv_sha256 != sha256),
            ("rows", manifest.rows != report.checked),
            ("first_seq", manifest.first_seq != self.first_seq),
            ("last_seq", manifest.last_seq != last_seq),
            ("bom", manifest.bom != self.bom),
        ]
        .into_iter()
        .chain(claims);
        for (what, differs) in mismatches {
            if differs {
                report.problems.push(Problem::ManifestMismatch {
                    what: format!("{what} differs from the file"),
                });
            }
        }
        report
    }
}

/// Checks the row `event` against `checkpoint`: proven by its proof when the checkpoint's tree
/// covers it (a problem otherwise), counted as uncovered when it does not cover it.
fn prove(
    event: &Event,
    checkpoint: &Checkpoint,
    proofs: Option<&mut ProofsReader<Box<dyn BufRead + Send>>>,
    pending: &mut Option<RowProof>,
    report: &mut Report,
) -> Vec<Problem> {
    let seq = event.seq;
    if seq < 1 || seq.unsigned_abs() > checkpoint.size {
        report.uncovered += 1;
        return Vec::new();
    }
    let mut problems = Vec::new();
    // The proofs are in the rows' order: skip those of rows missing from the file.
    let mut proof = None;
    if let Some(proofs) = proofs {
        while pending.as_ref().is_none_or(|p| p.seq < seq) {
            match proofs.next_proof() {
                Ok(Some(next)) => *pending = Some(next),
                Ok(None) => break,
                Err(message) => {
                    problems.push(Problem::Unreadable { line: 0, message });
                    break;
                }
            }
        }
        if pending.as_ref().is_some_and(|p| p.seq == seq) {
            proof = pending.take();
        }
    }
    // A proof that says what the row's hash is and which checkpoint it leads to (the
    // tlog-proof form) must say them right, or it would not prove this row when it travels alone.
    let proven = proof.zip(decode(&event.hash)).is_some_and(|(proof, hash)| {
        let leaf = crate::leaf_hash(&hash);
        proof.leaf_data.is_none_or(|data| data == hash)
            && proof.checkpoint.as_ref().is_none_or(|carried| carried == checkpoint)
            && verify_inclusion(
                &leaf,
                seq.unsigned_abs() - 1,
                checkpoint.size,
                &proof.hashes,
                &checkpoint.root,
            )
    });
    if proven {
        report.proven += 1;
    } else {
        problems.push(Problem::NotProven { seq });
    }
    problems
}

/// A reader that hashes what is read through it.
struct HashingReader<R> {
    inner: R,
    hasher: Sha256,
}

impl<R: Read> Read for HashingReader<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.hasher.update(&buf[..n]);
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;
    use std::convert::Infallible;

    use super::*;
    use crate::csv::CsvWriter;
    use crate::note::NoteSigner;
    use crate::proofs::ProofsWriter;
    use crate::{Chain, Filter, Frontier, Kind, MANIFEST_FORMAT, Record, Subtrees, leaf_hash};

    /// A trail of `n` events, its export, the proofs of every row in its tree, a checkpoint of
    /// that tree and the export's manifest, signed.
    fn exported(n: usize, signer: &NoteSigner) -> (Vec<u8>, Vec<u8>, Checkpoint, Manifest) {
        let (mut chain, mut events) = (Chain::default(), Vec::new());
        for i in 0..n {
            let mut record = Record::new(Kind::Decision);
            record.tool = Some(format!("tool, \"{i}\""));
            let ts = format!("2026-12-02T12:00:{i:02}.000000Z");
            let (event, next) = chain.link(record, format!("id-{i}"), ts);
            events.push(event);
            chain = next;
        }
        let mut csv = CsvWriter::new(Vec::new(), true).unwrap();
        let (mut tree, mut nodes) = (Frontier::default(), HashMap::new());
        for event in &events {
            csv.write(event).unwrap();
            nodes.extend(tree.push_leaf(leaf_hash(&decode(&event.hash).unwrap())));
        }
        let csv = csv.finish().unwrap();
        let mut subtrees = Subtrees::new(|node| Ok::<_, Infallible>(nodes[&node]));
        let checkpoint =
            Checkpoint { origin: "toolgate/test".into(), size: tree.size(), root: tree.root() };
        let mut proofs = ProofsWriter::new(Vec::new(), checkpoint.sign(signer).unwrap());
        for event in &events {
            let index = event.seq.unsigned_abs() - 1;
            proofs.write(event, subtrees.inclusion(index, tree.size()).unwrap()).unwrap();
        }
        let (proofs, proofs_sha256) = proofs.finish().unwrap();
        let last = events.last().unwrap();
        let mut manifest = Manifest {
            format: MANIFEST_FORMAT.into(),
            filter: Filter::default(),
            first_seq: Some(1),
            last_seq: Some(last.seq),
            rows: events.len() as u64,
            head_seq: Some(last.seq),
            head_hash: Some(last.hash.clone()),
            csv_sha256: hex::encode(Sha256::digest(&csv)),
            bom: true,
            exported_at: "2026-12-02T12:01:00.000000Z".into(),
            checkpoint: Some(checkpoint.sign(signer).unwrap()),
            proofs_file: Some("export.proofs".into()),
            proofs_sha256: Some(proofs_sha256),
            signature: None,
        };
        manifest.sign(signer).unwrap();
        (csv, proofs, checkpoint, manifest)
    }

    fn verify(
        csv: &[u8],
        proofs: &[u8],
        checkpoint: &Checkpoint,
        manifest: &Manifest,
        signer: &NoteSigner,
    ) -> Report {
        let proofs: Box<dyn BufRead + Send> = Box::new(io::Cursor::new(proofs.to_vec()));
        let anchors = Anchors {
            checkpoint: Some(checkpoint.clone()),
            keys: vec![signer.verifier()],
            ..Anchors::default()
        };
        let checks = CsvChecks {
            filtered: false,
            manifest: Some(manifest),
            anchors,
            proofs: Some(ProofsReader::new(proofs)),
        };
        verify_csv(csv, checks, |_| {}).unwrap()
    }

    #[test]
    fn an_export_verifies_with_its_manifest_proofs_and_checkpoint() {
        let signer = NoteSigner::generate("toolgate/test").unwrap();
        let (csv, proofs, checkpoint, manifest) = exported(5, &signer);
        let report = verify(&csv, &proofs, &checkpoint, &manifest, &signer);
        assert!(report.intact(), "{:?}", report.problems);
        assert_eq!((report.checked, report.proven, report.uncovered), (5, 5, 0));
        assert!(report.manifest_signed && report.signatures_checked);
    }

    #[test]
    fn a_changed_byte_a_lost_row_or_a_wrong_proof_is_found() {
        let signer = NoteSigner::generate("toolgate/test").unwrap();
        let (csv, proofs, checkpoint, manifest) = exported(5, &signer);
        let mut changed = csv.clone();
        let at = changed.len() - 10;
        changed[at] ^= 1;
        let report = verify(&changed, &proofs, &checkpoint, &manifest, &signer);
        assert!(!report.intact());
        let cut = &csv[..csv[..csv.len() - 2].iter().rposition(|&b| b == b'\n').unwrap() + 1];
        let report = verify(cut, &proofs, &checkpoint, &manifest, &signer);
        assert!(report.problems.iter().any(|p| matches!(p, Problem::ShorterThanCheckpoint { .. })));
        assert!(report.problems.iter().any(|p| matches!(p, Problem::ManifestMismatch { .. })));
        let (_, other_proofs, ..) = exported(6, &signer);
        let report = verify(&csv, &other_proofs, &checkpoint, &manifest, &signer);
        assert!(report.problems.iter().any(|p| matches!(p, Problem::NotProven { .. })));
        // A row's proof that carries another row's event: its hashes still prove the row, but
        // alone it would prove the other one.
        let text = String::from_utf8(proofs.clone()).unwrap();
        let extras: Vec<&str> = text.lines().filter(|l| l.starts_with("extra ")).collect();
        let swapped = text.replacen(extras[0], extras[1], 1);
        let report = verify(&csv, swapped.as_bytes(), &checkpoint, &manifest, &signer);
        assert!(report.problems.iter().any(|p| matches!(p, Problem::NotProven { seq: 1 })));
        // A row's proof that carries another checkpoint than the export's.
        let other_note = Checkpoint { size: 99, ..checkpoint.clone() }.sign(&signer).unwrap();
        let ours = checkpoint.sign(&signer).unwrap();
        let first = text.find(&ours).unwrap();
        let moved = format!("{}{other_note}{}", &text[..first], &text[first + ours.len()..]);
        let report = verify(&csv, moved.as_bytes(), &checkpoint, &manifest, &signer);
        assert!(report.problems.iter().any(|p| matches!(p, Problem::NotProven { seq: 1 })));
        let other = NoteSigner::generate("toolgate/test").unwrap();
        let report = verify(&csv, &proofs, &checkpoint, &manifest, &other);
        assert!(report.problems.iter().any(|p| matches!(p, Problem::ManifestMismatch { .. })));
    }
}
