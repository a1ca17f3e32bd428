//! The auditors' figures: how fast the first page of a query comes back, how many events per
//! second an export (with and without each row's tlog-proof) and a verification get through,
//! and how long one event's proofs take, on a trail of a given size.

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use crate::audit::{Export, ExportError, verify_trail};

use crate::store::Reader;
use crate::trail::Anchors;
use crate::trail::Filter;
use crate::trail::tlog_proof::TlogProof;

/// The figures.
#[derive(Debug)]
pub struct AuditFigures {
    pub events: u64,
    /// Median and slowest time to the first page (100 events), per query.
    pub first_page: Vec<(String, Duration, Duration)>,
    pub export_rows_per_s: f64,
    /// The same export writing each row's tlog-proof beside it (in the tree of the whole
    /// trail), and the proofs file's bytes per row.
    pub export_with_proofs_rows_per_s: f64,
    pub proof_bytes_per_row: f64,
    pub verify_events_per_s: f64,
    /// Median and slowest inclusion proof (with its root) of 1,000 events spread over the
    /// trail, in the tree of the whole trail.
    pub inclusion_proof: (Duration, Duration),
    /// Median and slowest offline proof (tlog-proof: the event read and encoded, its inclusion
    /// proof, the bundle written) of the same 1,000 events.
    pub tlog_proof: (Duration, Duration),
}

/// A checkpoint note of the size a signed one has, for proofs whose signature the bench does
/// not check (a bench trail signs none).
const NOTE: &str = "toolgate/bench\n1\nAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=\n\n\u{2014} toolgate/bench \
    AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=\n";

/// A writer that counts what it is given, shared with whoever reads the count.
#[derive(Debug, Clone, Default)]
struct Counted(Arc<AtomicU64>);

impl Counted {
    fn total(&self) -> u64 {
        self.0.load(Ordering::Relaxed)
    }
}

impl std::io::Write for Counted {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.fetch_add(buf.len() as u64, Ordering::Relaxed);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Measures the trail at `db` (already filled).
pub async fn measure(db: &Path) -> Result<AuditFigures, ExportError> {
    let reader = Reader::open(db).await?;
    let events = reader.count(&Filter::default()).await?;
    let queries = [
        (
            "session",
            Filter { session_id: Some(format!("prefill-{}", events / 200)), ..Filter::default() },
        ),
        ("actor", Filter { actor_id: Some("agent-7".into()), ..Filter::default() }),
        ("tool", Filter { tool: Some("read".into()), ..Filter::default() }),
    ];
    let mut first_page = Vec::new();
    // Oldest first and newest first: on a trail being written, the newest events are those
    // after the index's watermark, which a read scans.
    for (name, filter) in queries {
        for newest in [false, true] {
            let mut times = Vec::new();
            for _ in 0..21 {
                let started = Instant::now();
                match newest {
                    false => reader.query(&filter, 0, 100).await?,
                    true => reader.query_newest(&filter, 0, 100).await?,
                };
                times.push(started.elapsed());
            }
            times.sort();
            let name = format!("{name}{}", if newest { ", newest first" } else { "" });
            first_page.push((name, times[times.len() / 2], times[times.len() - 1]));
        }
    }

    let started = Instant::now();
    let mut export = Export::new(std::io::sink(), Filter::default(), false)?;
    while export.next_page(&crate::audit::Local::new(reader.clone(), None)).await? {}
    let export_rows_per_s = export.rows as f64 / started.elapsed().as_secs_f64();

    let size = reader.tree_size().await?;
    let started = Instant::now();
    let bytes = Counted::default();
    let mut export = Export::new(std::io::sink(), Filter::default(), false)?.with_proofs(
        Box::new(bytes.clone()),
        NOTE.to_owned(),
        size,
    );
    while export.next_page(&crate::audit::Local::new(reader.clone(), None)).await? {}
    let export_with_proofs_rows_per_s = export.rows as f64 / started.elapsed().as_secs_f64();
    let proof_bytes_per_row = bytes.total() as f64 / export.rows.max(1) as f64;

    let started = Instant::now();
    let report = verify_trail(&reader, 1, None, &Anchors::default(), |_| {}).await?;
    let verify_events_per_s = report.checked as f64 / started.elapsed().as_secs_f64();
    let mut times = Vec::with_capacity(1000);
    let mut bundles = Vec::with_capacity(1000);
    for i in 0..1000u64 {
        // Spread over the whole trail, deterministically.
        let seq = 1 + (i.wrapping_mul(2_654_435_761) % size.max(1));
        let started = Instant::now();
        reader.inclusion_proof(seq, size).await?;
        reader.root(size).await?;
        times.push(started.elapsed());
        let started = Instant::now();
        let event = reader.event(seq.cast_signed()).await?;
        let hashes = reader.inclusion_proof(seq, size).await?;
        if let Some(proof) = event.and_then(|e| TlogProof::of(&e, hashes, NOTE.to_owned()).ok()) {
            std::hint::black_box(proof.encode());
        }
        bundles.push(started.elapsed());
    }
    let median_and_slowest = |mut times: Vec<Duration>| {
        times.sort();
        (times[times.len() / 2], times[times.len() - 1])
    };
    let (inclusion_proof, tlog_proof) = (median_and_slowest(times), median_and_slowest(bundles));
    reader.close().await;
    Ok(AuditFigures {
        events,
        first_page,
        export_rows_per_s,
        export_with_proofs_rows_per_s,
        proof_bytes_per_row,
        verify_events_per_s,
        inclusion_proof,
        tlog_proof,
    })
}
