//! The auditors' figures: how fast the first page of a query comes back, and how many events
//! per second an export and a verification get through, on a trail of a given size.

use std::path::Path;
use std::time::{Duration, Instant};

use crate::audit::{Anchors, Export, ExportError, verify_trail};
use crate::query::Filter;
use crate::store::Reader;

/// The figures.
#[derive(Debug)]
pub struct AuditFigures {
    pub events: u64,
    /// Median and slowest time to the first page (100 events), per query.
    pub first_page: Vec<(String, Duration, Duration)>,
    pub export_rows_per_s: f64,
    pub verify_events_per_s: f64,
    /// Median and slowest inclusion proof (with its root) of 1,000 events spread over the
    /// trail, in the tree of the whole trail.
    pub inclusion_proof: (Duration, Duration),
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

    let started = Instant::now();
    let report = verify_trail(&reader, 1, None, &Anchors::default(), |_| {}).await?;
    let verify_events_per_s = report.checked as f64 / started.elapsed().as_secs_f64();
    let size = reader.tree_size().await?;
    let mut times = Vec::with_capacity(1000);
    for i in 0..1000u64 {
        // Spread over the whole trail, deterministically.
        let seq = 1 + (i.wrapping_mul(2_654_435_761) % size.max(1));
        let started = Instant::now();
        reader.inclusion_proof(seq, size).await?;
        reader.root(size).await?;
        times.push(started.elapsed());
    }
    times.sort();
    let inclusion_proof = (times[times.len() / 2], times[times.len() - 1]);
    reader.close().await;
    Ok(AuditFigures { events, first_page, export_rows_per_s, verify_events_per_s, inclusion_proof })
}
