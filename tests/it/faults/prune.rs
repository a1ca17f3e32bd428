//! Retention under faults, against the real binary: killed in the middle of a prune and in the
//! middle of an upload, nothing is lost and nothing leaves the file that is not archived; under
//! load with a size bound, the file stays flat while decisions never stop.

use std::path::PathBuf;
use std::time::Duration;

use super::Proc;
use super::load::Load;
use crate::helpers::{eventually, toolgate};
use crate::retention::{pruned, read};

/// A key, an archive directory and the configuration of a server that archives there,
/// checkpoints every `every` events (or 200 ms) and applies `retention` (a TOML table body).
struct Setup {
    dir: tempfile::TempDir,
    key: String,
    url: String,
}

impl Setup {
    fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let key_file = dir.path().join("log.key");
        let out =
            toolgate(&["keygen", "--name", "toolgate/test", "--out", key_file.to_str().unwrap()]);
        let key = String::from_utf8(out.stdout).unwrap().trim().to_owned();
        let url = format!("file://{}", dir.path().join("archive").display());
        Self { dir, key, url }
    }

    fn db(&self) -> PathBuf {
        self.dir.path().join("trail.db")
    }

    fn toml(&self, every: u64, retention: &str) -> String {
        let key_file = self.dir.path().join("log.key");
        format!(
            "[checkpoints]\nkey_file = {:?}\nevery_events = {every}\nevery_ms = 200\n\n\
             [archive]\nurl = {:?}\n\n[retention]\nmin_age_minutes = 0\n{retention}\n",
            key_file.display().to_string(),
            self.url
        )
    }

    async fn start(&self, toml: &str, env: &[(&str, &str)]) -> Proc {
        Proc::start_with_env(&self.db(), self.dir.path(), toml, env).await
    }

    /// `toolgate verify` of the trail joined to the archive: its exit code and what it said.
    fn verify(&self) -> (i32, String) {
        let db = self.db();
        let args = ["verify", "--db", db.to_str().unwrap(), "--key", &self.key];
        let out = toolgate(&[&args[..], &["--archive", &self.url]].concat());
        (out.status.code().unwrap(), String::from_utf8_lossy(&out.stdout).into_owned())
    }

    /// Every seq from 1 to the head, in the archive or in the file; the head.
    fn whole(&self) -> i64 {
        let (through, _) = pruned(&self.db());
        let out = toolgate(&["archive", "get", "--url", &self.url, "--to", &through.to_string()]);
        let got = self.dir.path().join("archived.csv");
        std::fs::write(&got, out.stdout).unwrap();
        let out = toolgate(&["verify", "--csv", got.to_str().unwrap()]);
        let said = String::from_utf8_lossy(&out.stdout);
        // An export from seq 1 with no gap: every pruned event, in one chain.
        let whole = format!("intact: {through} events, head seq {through} ");
        assert!(through == 0 || said.contains(&whole), "{said}");
        let conn = read(&self.db());
        let (first, last, count): (i64, i64, i64) = conn
            .query_row("SELECT min(seq), max(seq), count(*) FROM events", [], |r| {
                Ok((r.get(0)?, r.get(1)?, r.get(2)?))
            })
            .unwrap();
        // The file holds the rest, from the cut on (or from before it, when the process was
        // stopped in the middle of the prune's deletions), without a gap.
        assert!(first <= through + 1, "events {}..{first} are nowhere", through + 1);
        assert_eq!(count, last - first + 1, "the file has a gap");
        last
    }
}

/// Polls `done` every 20 ms until it holds, for `limit` at most.
async fn until(limit: Duration, what: &str, mut done: impl FnMut() -> bool) {
    let check = async || if done() { Ok(()) } else { Err(()) };
    let reached = eventually(limit, Duration::from_millis(20), check).await;
    assert!(reached.is_ok(), "not within {limit:?}: {what}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn killed_in_the_middle_of_a_prune_it_finishes_it_and_loses_nothing() {
    let setup = Setup::new();
    let retention = "max_age_days = 0.00001\nsegment_events = 4000\ncheck_every_ms = 100";
    let toml = setup.toml(500, retention);
    // Each batch of deletions (2,000 rows) waits 300 ms: a prune of thousands takes seconds.
    let mut proc = setup.start(&toml, &[("TOOLGATE_FAULT_PRUNE_PAUSE_MS", "300")]).await;
    let load = Load::start(&proc, 4).await;
    let db = setup.db();
    // The prune is recorded and its rows half deleted, while calls keep coming.
    until(Duration::from_secs(60), "a prune in the middle of its deletions", || {
        let (through, first) = pruned(&db);
        first > 1 && first <= through
    })
    .await;
    proc.kill9();
    let acked = load.stop().await.acked;
    let (through, first) = pruned(&db);
    assert!(first > 1 && first <= through, "killed mid-prune: {first}..{through}");

    let proc = setup.start(&toml, &[]).await;
    until(Duration::from_secs(30), "the prune finished", || {
        let (through, first) = pruned(&db);
        first == through + 1
    })
    .await;
    drop(proc);
    let head = setup.whole();
    assert!(acked.iter().all(|(seq, _)| *seq <= head), "every answered call is kept");
    let (code, said) = setup.verify();
    assert_eq!(code, 0, "{said}");
    println!("prune killed at seq {first} of 1..{through}, finished after restart; head {head}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn killed_in_the_middle_of_an_upload_the_archive_resumes_and_verifies() {
    let setup = Setup::new();
    let toml = setup.toml(1000, "legal_hold = true");
    let mut proc = setup.start(&toml, &[]).await;
    let load = Load::start(&proc, 8).await;
    let archive = setup.dir.path().join("archive");
    // Killed once the archive has some tiles and the trail is ahead of it.
    until(Duration::from_secs(30), "a first tile archived", || {
        archive.join("tile/entries/002").is_file()
    })
    .await;
    proc.kill9();
    let acked = load.stop().await.acked;
    let proc = setup.start(&toml, &[]).await;
    let head = read(&setup.db()).query_row("SELECT max(seq) FROM events", [], |r| r.get(0));
    let head: i64 = head.unwrap();
    until(Duration::from_secs(30), "the archive caught up", || {
        let note = std::fs::read_to_string(archive.join("checkpoint")).unwrap_or_default();
        let checkpoint = toolgate::trail::checkpoint::Checkpoint::read(&note);
        checkpoint.is_ok_and(|c| c.size >= head.unsigned_abs())
    })
    .await;
    drop(proc);
    let db = setup.db();
    let (url, key, db) = (&setup.url, &setup.key, db.to_str().unwrap());
    let out = toolgate(&["archive", "verify", "--url", url, "--key", key, "--db", db]);
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{said}");
    let (decisions, contiguous) = super::decisions_on_trail(&setup.db());
    assert!(contiguous);
    assert!(acked.iter().all(|(seq, _)| decisions.iter().any(|(s, _)| s == seq)));
    println!("upload killed with {} acknowledged; archive verifies: {said}", acked.len());
}

/// Decisions at full rate with the file bounded to `max_bytes`: once the first prune came
/// (however long the archive took to catch up on this machine), the trail file's size every
/// second for `seconds`, and the calls answered.
async fn bounded_run(seconds: u64, max_bytes: u64) -> (Vec<u64>, usize, Setup) {
    let setup = Setup::new();
    let retention = format!("max_bytes = {max_bytes}\nsegment_events = 1000\ncheck_every_ms = 500");
    let proc = setup.start(&setup.toml(1000, &retention), &[]).await;
    let load = Load::start(&proc, 8).await;
    let started = std::time::Instant::now();
    while pruned(&setup.db()).0 == 0 {
        assert!(started.elapsed() < Duration::from_secs(300), "nothing was pruned in 300 s");
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    let mut sizes = Vec::new();
    for _ in 0..seconds {
        tokio::time::sleep(Duration::from_secs(1)).await;
        sizes.push(std::fs::metadata(setup.db()).unwrap().len());
    }
    let tally = load.stop().await;
    drop(proc);
    assert!(tally.refused.is_empty(), "every call answered: {:?}", tally.refused);
    (sizes, tally.acked.len(), setup)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn under_load_a_size_bound_keeps_the_file_flat_and_decisions_go_on() {
    let max = 1 << 20;
    let (sizes, calls, setup) = bounded_run(20, max).await;
    println!("file bytes every second, bound {max}, {calls} calls: {sizes:?}");
    let (through, _) = pruned(&setup.db());
    assert!(through > 0, "nothing was pruned: {sizes:?}");
    // Once pruning runs, the file stays within the bound and what arrives between two prunes
    // (the archive publishes at most once a second: about a megabyte here at full rate), and
    // does not grow: the last quarter is not half again as large as the second.
    let last = &sizes[sizes.len() / 2..];
    assert!(last.iter().all(|s| *s < 3 * max), "{sizes:?}");
    let mean = |part: &[u64]| part.iter().sum::<u64>() / part.len() as u64;
    let quarter = sizes.len() / 4;
    let (second, fourth) = (&sizes[quarter..2 * quarter], &sizes[3 * quarter..]);
    assert!(mean(fourth) < mean(second) * 3 / 2, "{sizes:?}");
    setup.whole();
    let (code, said) = setup.verify();
    assert_eq!(code, 0, "{said}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "long version: five minutes (BENCHMARKS.md, retention)"]
async fn five_minutes_under_load_with_a_size_bound_stay_flat() {
    let max = 16 << 20;
    let (sizes, calls, setup) = bounded_run(300, max).await;
    println!("file bytes every second, bound {max}, {calls} calls: {sizes:?}");
    assert!(sizes[sizes.len() / 3..].iter().all(|s| *s < 2 * max), "{sizes:?}");
    setup.whole();
    assert_eq!(setup.verify().0, 0);
}
