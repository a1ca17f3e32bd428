//! Soak: half the sustainable rate for a while: resident memory, open file descriptors and the
//! WAL stay flat.

use std::time::{Duration, Instant};

use super::Proc;
use super::load::Load;

/// Measures the sustainable rate, then runs at half of it for `seconds`, sampling every
/// `seconds / 10`; returns the samples `(rss KiB, fds, wal KiB)`.
async fn soak(seconds: u64) -> Vec<Sample> {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("trail.db");
    let wal = dir.path().join("trail.db-wal");
    let proc = Proc::start(&db, "").await;
    let burst = Load::start(&proc, 16).await;
    tokio::time::sleep(Duration::from_secs(3)).await;
    let sustainable = burst.stop().await.acked.len() as u64 / 3;

    let clients = 8;
    let interval = Duration::from_secs_f64(clients as f64 / (sustainable as f64 / 2.0));
    let load = Load::paced(&proc, clients, interval).await;
    let started = Instant::now();
    let mut samples = Vec::new();
    for tick in 1..=10 {
        tokio::time::sleep_until((started + Duration::from_secs(seconds) * tick / 10).into()).await;
        let wal_kib = std::fs::metadata(&wal).map_or(0, |m| m.len() / 1024);
        samples.push((proc.rss_kib(), proc.fds(), wal_kib));
    }
    let tally = load.stop().await;
    println!(
        "soak: {seconds} s at {}/s (half of {sustainable}/s), {} calls; (RSS KiB, fds, WAL KiB) \
         every {} s: {samples:?}",
        sustainable / 2,
        tally.acked.len(),
        seconds / 10
    );
    samples
}

type Sample = (u64, usize, u64);

/// File descriptors flat and the WAL bounded in any run.
fn bounded(samples: &[Sample]) {
    let fds = |s: &[Sample]| s.iter().map(|s| s.1).max().unwrap();
    assert!(fds(&samples[5..]) <= fds(&samples[..5]) + 4, "fds flat: {samples:?}");
    assert!(samples.iter().all(|s| s.2 < 64 * 1024), "WAL bounded: {samples:?}");
}

/// A short run: memory within the writer's page cache (32 MiB, filled as the trail grows) and
/// some slack of where it started.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn half_the_sustainable_rate_keeps_fds_and_the_wal_flat_and_memory_bounded() {
    let samples = soak(20).await;
    bounded(&samples);
    assert!(samples.iter().all(|s| s.0 < samples[0].0 + 48 * 1024), "RSS bounded: {samples:?}");
}

/// The long run: memory rises to a plateau set by the writer's page cache (32 MiB) and the
/// session facts' budget (500,000 distinct calls), never past it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "long version: ten minutes (docs/reliability.md)"]
async fn ten_minutes_at_half_the_sustainable_rate_stay_flat() {
    let samples = soak(600).await;
    bounded(&samples);
    assert!(samples.iter().all(|s| s.0 < samples[0].0 + 64 * 1024), "RSS bounded: {samples:?}");
}
