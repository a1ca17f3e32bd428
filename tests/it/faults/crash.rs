//! Crash under load: SIGKILL at a random moment, restart, and every acknowledged decision is
//! on the trail, `seq` has no gap, and the chain verifies.

use std::collections::HashMap;
use std::time::Duration;

use super::load::Load;
use super::{Proc, decisions_on_trail, random_below};
use crate::helpers::verify;

/// Kills the server `kills` times under load; returns the acknowledged decisions lost.
async fn crash_under_load(kills: usize) -> usize {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("trail.db");
    let (mut acked, mut lost) = (0, 0);
    for _ in 0..kills {
        let mut proc = Proc::start(&db, "").await;
        let load = Load::start(&proc, 8).await;
        tokio::time::sleep(Duration::from_millis(150 + random_below(500))).await;
        proc.kill9();
        let tally = load.stop().await;
        assert_eq!(tally.allowed_unrecorded, 0);

        let (on_trail, contiguous) = decisions_on_trail(&db);
        let on_trail: HashMap<i64, String> = on_trail.into_iter().collect();
        lost += tally.acked.iter().filter(|(seq, id)| on_trail.get(seq) != Some(id)).count();
        acked += tally.acked.len();
        assert!(contiguous, "seq has a gap");
        assert_eq!(verify(&db).0, 0, "the chain verifies after the kill");
    }
    println!("crash under load: {kills} SIGKILLs, {acked} acknowledged decisions, {lost} lost");
    lost
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_acknowledged_decision_is_lost_when_the_server_is_killed() {
    assert_eq!(crash_under_load(3).await, 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "long version: 100 kills (docs/reliability.md)"]
async fn no_acknowledged_decision_is_lost_in_100_kills() {
    assert_eq!(crash_under_load(100).await, 0);
}
