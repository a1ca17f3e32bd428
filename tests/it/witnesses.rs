//! Witnesses: a real `toolgate witness serve` process and real sidecars that submit their
//! checkpoints to it. The witness cosigns each extension, the cosignatures are kept and printed
//! with the checkpoint, `verify` demands k of n of them, a witness that is down delays no
//! decision and is caught up later with a consistency proof, and a forked log is refused and
//! recorded.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use toolgate::config::{CheckpointsConfig, WitnessConfig};

use crate::helpers::{TestApp, request, spawn_app_with, toolgate, toolgate_async};

/// A key made by `toolgate keygen` (with `--witness` for a witness): the file and the printed
/// verifier key.
pub fn keygen(dir: &Path, name: &str, witness: bool) -> (PathBuf, String) {
    let file = dir.join(format!("{}.key", name.replace('/', "_")));
    let mut args = vec!["keygen", "--name", name, "--out", file.to_str().unwrap()];
    if witness {
        args.push("--witness");
    }
    let out = toolgate(&args);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    (file, String::from_utf8(out.stdout).unwrap().trim().to_owned())
}

/// A witness process; killed when dropped.
pub struct WitnessProc {
    child: Child,
    pub url: String,
}

impl Drop for WitnessProc {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

pub fn start_witness(key: &Path, state: &Path, logs: &[&str], listen: &str) -> WitnessProc {
    let mut command = Command::new(assert_cmd::cargo::cargo_bin("toolgate"));
    command.args(["witness", "serve", "--listen", listen, "--key", key.to_str().unwrap()]);
    command.args(["--state", state.to_str().unwrap()]);
    for log in logs {
        command.args(["--log", log]);
    }
    let mut child = command.stdout(Stdio::piped()).stderr(Stdio::null()).spawn().unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap()).read_line(&mut line).unwrap();
    let url = line.trim().rsplit(' ').next().unwrap().to_owned();
    assert!(url.starts_with("http://127.0.0.1:"), "{line}");
    WitnessProc { child, url }
}

async fn sidecar(log_key: &Path, witnesses: Vec<WitnessConfig>) -> TestApp {
    let key_file = log_key.to_owned();
    spawn_app_with(move |c| {
        c.checkpoints = CheckpointsConfig {
            key_file: Some(key_file),
            every_events: 5,
            every_ms: 200,
            witnesses,
            ..CheckpointsConfig::default()
        };
    })
    .await
}

pub fn witness_config(url: &str, key: &str) -> WitnessConfig {
    WitnessConfig { url: url.to_owned(), key: key.to_owned(), timeout_ms: 2000 }
}

/// `toolgate checkpoint --db`, once it carries at least `lines` signature lines and covers at
/// least `size` events.
pub async fn cosigned_checkpoint(db: &Path, lines: usize, size: u64) -> String {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let out = toolgate_async(&["checkpoint", "--db", db.to_str().unwrap()]).await;
        let note = String::from_utf8(out.stdout).unwrap();
        let covered = note.lines().nth(1).and_then(|s| s.parse::<u64>().ok()).unwrap_or(0);
        if note.matches('\u{2014}').count() >= lines && covered >= size {
            return note;
        }
        assert!(Instant::now() < deadline, "no cosigned checkpoint of {size} events: {note}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

async fn decide_n(app: &TestApp, n: usize) {
    for _ in 0..n {
        app.client.clone().decide(request("read")).await.unwrap();
    }
}

/// A sidecar whose checkpoints a witness cosigns, with 12 decisions on its trail and the first
/// cosigned checkpoint of them, the log's and the witness's verifier keys, and the key of a
/// witness that never cosigns.
pub struct Witnessed {
    pub dir: tempfile::TempDir,
    pub log_key: String,
    pub witness_key: String,
    pub absent_key: String,
    pub note: String,
    pub app: TestApp,
    pub witness: WitnessProc,
}

pub async fn witnessed() -> Witnessed {
    let dir = tempfile::tempdir().unwrap();
    let (log_file, log_key) = keygen(dir.path(), "toolgate/node-1", false);
    let (witness_file, witness_key) = keygen(dir.path(), "witness.test/w1", true);
    let (_, absent_key) = keygen(dir.path(), "witness.test/w2", true);
    let witness =
        start_witness(&witness_file, &dir.path().join("w1.db"), &[&log_key], "127.0.0.1:0");
    let app = sidecar(&log_file, vec![witness_config(&witness.url, &witness_key)]).await;
    decide_n(&app, 12).await;
    let note = cosigned_checkpoint(&app.db, 2, 12).await;
    Witnessed { dir, log_key, witness_key, absent_key, note, app, witness }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_witness_cosigns_the_trail_and_verify_demands_k_of_n() {
    let Witnessed { dir, log_key, witness_key, absent_key, note, app, witness: _witness } =
        witnessed().await;
    assert!(note.contains("\n\u{2014} witness.test/w1 "), "{note}");
    let saved = dir.path().join("saved.checkpoint");
    std::fs::write(&saved, &note).unwrap();

    let db = app.db.to_str().unwrap().to_owned();
    let saved = saved.to_str().unwrap();
    let verify = |extra: &[&str]| {
        let mut args = vec!["verify", "--db", &db, "--checkpoint", saved, "--key", &log_key];
        args.extend_from_slice(extra);
        toolgate(&args)
    };
    let out = tokio::task::block_in_place(|| verify(&["--witness", &witness_key]));
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stdout));
    let both = ["--witness", &witness_key, "--witness", &absent_key];
    let out = tokio::task::block_in_place(|| verify(&both));
    assert_eq!(out.status.code(), Some(1));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("1 valid cosignature(s) by the witnesses given, 2 required"),
        "{stdout}"
    );
    // The same key twice is one witness.
    let twice = ["--witness", &witness_key, "--witness", &witness_key, "--witnesses-required", "2"];
    let out = tokio::task::block_in_place(|| verify(&twice));
    assert_eq!(out.status.code(), Some(2), "{}", String::from_utf8_lossy(&out.stdout));
    let one_of_two = [&both[..], &["--witnesses-required", "1"]].concat();
    let out = tokio::task::block_in_place(|| verify(&one_of_two));
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stdout));
    app.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_post_quantum_witness_cosigns_and_verify_and_proofs_demand_its_form() {
    let dir = tempfile::tempdir().unwrap();
    let (log_file, log_key) = keygen(dir.path(), "toolgate/node-1", false);
    let pq_file = dir.path().join("pq.key");
    let out = toolgate_async(&[
        "keygen",
        "--witness",
        "--algorithm",
        "ml-dsa-44",
        "--name",
        "witness.test/pq",
        "--out",
        pq_file.to_str().unwrap(),
    ])
    .await;
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let pq_key = String::from_utf8(out.stdout).unwrap().trim().to_owned();
    // An ML-DSA-44 verifier key: type 0x06 and 1312 bytes of public key.
    let typed = pq_key.splitn(3, '+').nth(2).unwrap();
    assert!(typed.starts_with('B') && typed.len() > 1700, "{pq_key}");
    let (_, classic_key) = keygen(dir.path(), "witness.test/w1", true);
    let witness = start_witness(&pq_file, &dir.path().join("pq.db"), &[&log_key], "127.0.0.1:0");
    let app = sidecar(&log_file, vec![witness_config(&witness.url, &pq_key)]).await;
    decide_n(&app, 12).await;
    let note = cosigned_checkpoint(&app.db, 2, 12).await;
    assert!(note.contains("\n\u{2014} witness.test/pq "), "{note}");
    let saved = dir.path().join("saved.checkpoint");
    std::fs::write(&saved, &note).unwrap();
    let (db, saved) = (app.db.to_str().unwrap().to_owned(), saved.to_str().unwrap().to_owned());
    let verify = |extra: Vec<String>| {
        let mut args = vec!["verify", "--db", &db, "--checkpoint", &saved, "--key", &log_key];
        args.extend(extra.iter().map(String::as_str));
        toolgate(&args)
    };
    let out = tokio::task::block_in_place(|| verify(vec!["--witness".into(), pq_key.clone()]));
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stdout));
    // Demanding the Ed25519 witness too: one of two.
    let both = vec!["--witness".into(), pq_key.clone(), "--witness".into(), classic_key];
    let out = tokio::task::block_in_place(|| verify(both));
    assert_eq!(out.status.code(), Some(1), "{}", String::from_utf8_lossy(&out.stdout));

    // An event's offline proof carries the post-quantum cosignature and verify --proof counts it.
    let size = note.lines().nth(1).unwrap().to_owned();
    let proof = dir.path().join("seq-2.tlog-proof");
    let proof = proof.to_str().unwrap();
    let out = toolgate_async(&["proof", "2", "--db", &db, "--size", &size, "-o", proof]).await;
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let out =
        toolgate_async(&["verify", "--proof", proof, "--key", &log_key, "--witness", &pq_key])
            .await;
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success() && said.contains("cosigned by 1 of the 1 witnesses"), "{said}");
    app.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_witness_that_is_down_delays_nothing_and_is_caught_up_with_a_proof() {
    let dir = tempfile::tempdir().unwrap();
    let (log_file, log_key) = keygen(dir.path(), "toolgate/node-2", false);
    let (witness_file, witness_key) = keygen(dir.path(), "witness.test/w1", true);
    let state = dir.path().join("w1.db");
    let witness = start_witness(&witness_file, &state, &[&log_key], "127.0.0.1:0");
    let url = witness.url.clone();
    let app = sidecar(&log_file, vec![witness_config(&url, &witness_key)]).await;
    decide_n(&app, 6).await;
    let first = cosigned_checkpoint(&app.db, 2, 6).await;
    let first_size: u64 = first.lines().nth(1).unwrap().parse().unwrap();
    drop(witness);
    // With the witness gone, decisions are answered as fast as ever.
    let started = Instant::now();
    decide_n(&app, 30).await;
    assert!(started.elapsed() < Duration::from_secs(5), "{:?}", started.elapsed());
    // Back on the same port and state: the sidecar submits its latest checkpoint with a
    // consistency proof from the size the witness holds, and gets it cosigned.
    let listen = url.trim_start_matches("http://");
    let _witness = start_witness(&witness_file, &state, &[&log_key], listen);
    let later = cosigned_checkpoint(&app.db, 2, first_size + 30).await;
    assert!(later.contains("\u{2014} witness.test/w1 "), "{later}");
    let shown = toolgate_async(&["witness", "log", "--state", state.to_str().unwrap()]).await;
    assert!(shown.status.success(), "no refusal was kept");
    let shown = String::from_utf8(shown.stdout).unwrap();
    assert!(shown.contains("log \"toolgate/node-2\" size "), "{shown}");
    app.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_forked_log_is_refused_and_the_refusal_kept() {
    let dir = tempfile::tempdir().unwrap();
    let (log_file, log_key) = keygen(dir.path(), "toolgate/node-3", false);
    let (witness_file, witness_key) = keygen(dir.path(), "witness.test/w1", true);
    let state = dir.path().join("w1.db");
    let witness = start_witness(&witness_file, &state, &[&log_key], "127.0.0.1:0");
    let honest = sidecar(&log_file, vec![witness_config(&witness.url, &witness_key)]).await;
    decide_n(&honest, 6).await;
    cosigned_checkpoint(&honest.db, 2, 6).await;
    honest.stop().await;
    // The same key on a fresh trail: another history under the same origin, and longer.
    let fork = sidecar(&log_file, vec![witness_config(&witness.url, &witness_key)]).await;
    decide_n(&fork, 40).await;
    // The fork's first checkpoints may be smaller than the one cosigned, and are refused as
    // a rollback (409); once it is larger, its consistency proof cannot hold (422).
    let deadline = Instant::now() + Duration::from_secs(20);
    let shown = loop {
        let out = toolgate_async(&["witness", "log", "--state", state.to_str().unwrap()]).await;
        let shown = String::from_utf8(out.stdout).unwrap();
        if !out.status.success() && shown.contains("\"toolgate/node-3\" 422") {
            break shown;
        }
        assert!(Instant::now() < deadline, "the fork was not refused: {shown}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    assert!(shown.contains("REFUSED"), "{shown}");
    let note = toolgate_async(&["checkpoint", "--db", fork.db.to_str().unwrap()]).await;
    let note = String::from_utf8(note.stdout).unwrap();
    assert!(!note.contains("witness.test/w1"), "the fork was cosigned: {note}");
    fork.stop().await;
}
