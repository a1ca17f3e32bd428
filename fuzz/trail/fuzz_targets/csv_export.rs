//! The CSV reader of `verify --csv`. On arbitrary bytes: never a panic. On mutations of a real
//! export (bytes replaced, inserted or removed): without a manifest, a mutated export verifies
//! as intact only when its rows still say exactly what the trail's said (a needless quote, a
//! cut at a row's end: docs/csv-export.md) or are a prefix of them; with the export's manifest,
//! never (its hash covers every byte).
#![no_main]

use libfuzzer_sys::fuzz_target;
use sha2::{Digest, Sha256};
use toolgate_trail::csv::check_header;
use toolgate_trail::export::{CsvChecks, verify_csv};
use toolgate_trail::{Event, Manifest, Report};
use toolgate_trail_fuzz::{export, trail};

fn verify(csv: &[u8], manifest: Option<&Manifest>) -> Option<Report> {
    let checks = CsvChecks { manifest, ..CsvChecks::default() };
    verify_csv(csv, checks, |_| {}).ok()
}

/// The events a CSV's rows say, if every row reads.
fn rows(csv: &[u8]) -> Option<Vec<Event>> {
    let mut reader = csv::ReaderBuilder::new().has_headers(true).from_reader(csv);
    let header = check_header(reader.headers().ok()?).ok()?;
    reader.records().map(|row| header.parse(&row.ok()?).ok()).collect()
}

fn manifest(original: &[u8], events: &[Event]) -> Manifest {
    let (first, last) = (events.first().unwrap(), events.last().unwrap());
    serde_json::from_value(serde_json::json!({
        "format": toolgate_trail::MANIFEST_FORMAT,
        "filter": {},
        "first_seq": first.seq,
        "last_seq": last.seq,
        "rows": events.len(),
        "head_seq": last.seq,
        "head_hash": last.hash,
        "csv_sha256": hex::encode(Sha256::digest(original)),
        "bom": false,
        "exported_at": "2026-12-01T12:00:09.000000Z",
    }))
    .unwrap()
}

fuzz_target!(|data: &[u8]| {
    let Some((&mode, edits)) = data.split_first() else { return };
    if mode % 2 == 0 {
        verify(edits, None);
        return;
    }
    let events = trail();
    let original = export(&events);
    let manifest = manifest(&original, &events);
    assert!(verify(&original, Some(&manifest)).is_some_and(|r| r.intact()), "the export verifies");
    let mut mutated = original.clone();
    for edit in edits.chunks_exact(3) {
        let at = usize::from(u16::from_le_bytes([edit[0], edit[1]])) % (mutated.len() + 1);
        match edit[2] % 3 {
            0 if at < mutated.len() => mutated[at] = edit[2],
            1 => mutated.insert(at, edit[2]),
            _ if at < mutated.len() => {
                mutated.remove(at);
            }
            _ => {}
        }
    }
    if mutated == original {
        return;
    }
    if verify(&mutated, None).is_some_and(|r| r.intact()) {
        let said = rows(&mutated).expect("an intact export's rows read");
        assert!(
            said.len() <= events.len() && said[..] == events[..said.len()],
            "a changed export verified intact: {:?}",
            String::from_utf8_lossy(&mutated)
        );
    }
    let with_manifest = verify(&mutated, Some(&manifest));
    assert!(!with_manifest.is_some_and(|r| r.intact()), "the manifest let a changed export pass");
});
