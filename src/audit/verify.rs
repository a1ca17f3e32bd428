//! Verification of the trail (a `seq` range of it) and of a CSV export, reporting every broken
//! place rather than the first.

use std::io::{self, BufRead, BufReader, Read};

use sha2::{Digest, Sha256};

use super::Manifest;
use crate::store::{PAGE, Reader, StoreError};
use crate::trail::csv::{self, CsvError};
use futures_util::StreamExt;

use crate::trail::{Event, Problem, Verifier, decode};

/// What a verification found.
#[derive(Debug, Default)]
pub struct Report {
    /// Events (or rows) checked.
    pub checked: u64,
    pub problems: Vec<Problem>,
    /// The last event checked: its `seq` and `hash`.
    pub last: Option<(i64, String)>,
}

impl Report {
    /// Whether nothing is wrong.
    pub fn intact(&self) -> bool {
        self.problems.is_empty()
    }
}

/// Why a verification could not be carried out (as opposed to finding problems).
#[derive(Debug, thiserror::Error)]
pub enum VerifyError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(transparent)]
    Csv(#[from] CsvError),
}

/// Verifies the trail's events from `from` to `to` (the head when `None`). `progress` is
/// called with the number of events checked after each page.
pub async fn verify_trail(
    reader: &Reader,
    from: i64,
    to: Option<i64>,
    mut progress: impl FnMut(u64),
) -> Result<Report, StoreError> {
    let from = from.max(1);
    let mut report = Report::default();
    let mut verifier = if from == 1 {
        Verifier::default()
    } else {
        match reader.event(from - 1).await? {
            Some(before) => Verifier::starting_at(from, decode(&before.hash).unwrap_or_default()),
            None => {
                report.problems.push(Problem::Gap { from: from - 1, to: from - 1 });
                Verifier::starting_unlinked(from)
            }
        }
    };
    // Up to the head as it is now; events appended meanwhile are for the next verification.
    let head = reader.head().await?.map_or(0, |h| h.seq);
    let last = to.map_or(head, |to| to.min(head));
    let page = i64::from(PAGE);
    let ranges =
        (from..=last).step_by(PAGE as usize).map(|first| (first, (first + page - 1).min(last)));
    // Two pages are read at once, on two connections, while the one before is checked.
    let mut pages = futures_util::stream::iter(ranges)
        .map(|(first, last)| {
            let reader = reader.clone();
            async move { reader.links(first, last).await }
        })
        .buffered(2);
    while let Some(links) = pages.next().await {
        let links = links?;
        for link in &links {
            report.problems.extend(verifier.check_link(link));
        }
        report.checked += links.len() as u64;
        if let Some(link) = links.last() {
            report.last = Some((link.seq, link.hash.map(hex::encode).unwrap_or_default()));
        }
        progress(report.checked);
    }
    Ok(report)
}

fn check(verifier: &mut Verifier, report: &mut Report, event: Event) {
    report.problems.extend(verifier.check(&event));
    report.checked += 1;
    report.last = Some((event.seq, event.hash));
}

/// Verifies a CSV export read from `input`.
///
/// A whole-trail export verifies as a chain: gaps are missing rows. With `filtered` (or a
/// manifest whose filter is not empty) gaps are expected, and each row's own hash, the links
/// between rows whose `seq` follow each other, and the order are checked. With `trail`, every
/// row must also stand unchanged in that trail; with `manifest`, the file must match it.
pub async fn verify_csv(
    input: impl Read,
    filtered: bool,
    trail: Option<&Reader>,
    manifest: Option<&Manifest>,
    mut progress: impl FnMut(u64),
) -> Result<Report, VerifyError> {
    let filtered = filtered || manifest.is_some_and(|m| !m.filter.is_empty());
    let mut verifier = if filtered { Verifier::filtered() } else { Verifier::default() };
    let mut report = Report::default();
    let mut input = BufReader::new(HashingReader { inner: input, hasher: Sha256::new() });
    let bom =
        input.fill_buf().map_err(::csv::Error::from).map_err(CsvError::from)?.starts_with(csv::BOM);
    if bom {
        input.consume(csv::BOM.len());
    }
    let mut rows = ::csv::ReaderBuilder::new()
        .has_headers(false)
        .flexible(true)
        .from_reader(input)
        .into_records();
    match rows.next() {
        Some(header) => csv::check_header(&header.map_err(CsvError::from)?)?,
        None => return Err(CsvError::Header.into()),
    }
    let mut first_seq = None;
    for row in rows.by_ref() {
        let event = match row.map_err(CsvError::from).and_then(|row| csv::parse(&row)) {
            Ok(event) => event,
            Err(CsvError::Row { line, message }) => {
                report.problems.push(Problem::Unreadable { line, message });
                continue;
            }
            Err(e) => return Err(e.into()),
        };
        first_seq.get_or_insert(event.seq);
        if let Some(trail) = trail {
            match trail.event(event.seq).await? {
                None => report.problems.push(Problem::NotInTrail { seq: event.seq }),
                Some(stored) if stored != event => {
                    report.problems.push(Problem::DiffersFromTrail { seq: event.seq });
                }
                Some(_) => {}
            }
        }
        check(&mut verifier, &mut report, event);
        if report.checked % u64::from(PAGE) == 0 {
            progress(report.checked);
        }
    }
    progress(report.checked);
    if let Some(manifest) = manifest {
        // The whole file was read: the hash covers every byte of it.
        let sha256 = hex::encode(rows.into_reader().into_inner().into_inner().hasher.finalize());
        let last_seq = report.last.as_ref().map(|(seq, _)| *seq);
        let mismatches = [
            ("csv_sha256", manifest.csv_sha256 != sha256),
            ("rows", manifest.rows != report.checked),
            ("first_seq", manifest.first_seq != first_seq),
            ("last_seq", manifest.last_seq != last_seq),
            ("bom", manifest.bom != bom),
        ];
        for (what, differs) in mismatches {
            if differs {
                report.problems.push(Problem::ManifestMismatch {
                    what: format!("{what} differs from the file"),
                });
            }
        }
    }
    Ok(report)
}

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
