//! A slow disk and overload: the queue stays bounded, callers are refused rather than piled
//! up, memory stays flat, nothing answered is missing, and latency recovers.

use std::time::Duration;

use tonic::Code;

use super::load::Load;
use super::{Proc, decisions_on_trail};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn commits_slower_than_the_deadline_answer_unavailable_with_memory_flat() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("trail.db");
    let toml = "[writer]\ncommit_timeout_ms = 100\nqueue_capacity = 64\n";
    let proc = Proc::start_slow(&db, toml, 300).await;
    let rss_before = proc.rss_kib();

    let load = Load::start(&proc, 8).await;
    tokio::time::sleep(Duration::from_secs(3)).await;
    let rss_during = proc.rss_kib();
    let tally = load.stop().await;

    let (on_trail, _) = decisions_on_trail(&db);
    println!(
        "slow disk (300 ms commits, 100 ms deadline): {} UNAVAILABLE, {} RESOURCE_EXHAUSTED, {} \
         answered; RSS {rss_before} -> {rss_during} KiB",
        tally.refused(Code::Unavailable),
        tally.refused(Code::ResourceExhausted),
        tally.acked.len()
    );
    assert!(tally.refused(Code::Unavailable) > 0);
    assert_eq!(tally.allowed_unrecorded, 0);
    assert!(tally.acked.iter().all(|a| on_trail.contains(a)));
    assert!(rss_during < rss_before + 32 * 1024, "memory stays flat");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_overload_is_refused_with_resource_exhausted_and_latency_recovers() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("trail.db");
    // At most 4 appends per 50 ms commit: a sustainable rate of 80 calls/s.
    let toml = "[writer]\nmax_batch = 4\nqueue_capacity = 8\n";
    let proc = Proc::start_slow(&db, toml, 50).await;

    let calm = Load::start(&proc, 1).await;
    tokio::time::sleep(Duration::from_secs(1)).await;
    let calm = calm.stop().await;
    let rss_before = proc.rss_kib();

    let flood = Load::start(&proc, 64).await;
    tokio::time::sleep(Duration::from_secs(3)).await;
    let rss_during = proc.rss_kib();
    let flood = flood.stop().await;

    let after = Load::start(&proc, 1).await;
    tokio::time::sleep(Duration::from_secs(1)).await;
    let after = after.stop().await;

    let (on_trail, contiguous) = decisions_on_trail(&db);
    let offered = (flood.acked.len() as u64 + flood.refused(Code::ResourceExhausted)) / 3;
    println!(
        "overload: offered {offered}/s against a sustainable 80/s; {} answered ({}/s), {} \
         RESOURCE_EXHAUSTED; p50 latency calm {:?}, flooded {:?}, after {:?}; RSS {rss_before} \
         -> {rss_during} KiB",
        flood.acked.len(),
        flood.acked.len() / 3,
        flood.refused(Code::ResourceExhausted),
        calm.latency(0.5),
        flood.latency(0.5),
        after.latency(0.5),
    );
    // Alone this offers ~15 times the sustainable rate; beside the rest of the suite on two
    // cores, less. Four times is still an overload, which the refusals below confirm.
    assert!(offered >= 320, "at least four times the sustainable rate was offered");
    assert!(flood.refused(Code::ResourceExhausted) > 0);
    assert_eq!(flood.allowed_unrecorded, 0);
    let answered = calm.acked.iter().chain(&flood.acked).chain(&after.acked);
    assert!(answered.into_iter().all(|a| on_trail.contains(a)), "no answered call is missing");
    assert!(contiguous);
    assert!(rss_during < rss_before + 32 * 1024, "memory stays bounded");
    assert!(after.latency(0.5) < Duration::from_millis(250), "latency recovers");
}
