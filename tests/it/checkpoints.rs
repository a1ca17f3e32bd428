//! Signed checkpoints against an auditor's tampering: a real server signs checkpoints as its
//! trail grows; then, on copies of the trail with its triggers dropped, every tampering that
//! the chain alone missed is caught against a checkpoint kept elsewhere, and with the trail's
//! own checkpoints where they cover it.

use std::path::{Path, PathBuf};

use rusqlite::Connection;
use rusqlite::types::ValueRef;
use toolgate::config::CheckpointsConfig;
use toolgate::trail::{COLUMNS, Cells, Event, Value, column_list, decode, event_hash};

use base64::Engine;
use sha2::{Digest, Sha256};
use toolgate::proto::audit_client::AuditClient;
use toolgate::proto::{CheckpointRequest, ConsistencyProofRequest, InclusionProofRequest};
use toolgate::trail::{Hash, verify_consistency, verify_inclusion};

use crate::helpers::{TestApp, request, spawn_app_with};

fn toolgate(args: &[&str]) -> std::process::Output {
    assert_cmd::Command::cargo_bin("toolgate").unwrap().args(args).output().unwrap()
}

/// A trail of 40 decisions with checkpoints every 10 events, its verifier key, and the
/// checkpoint `toolgate checkpoint` printed at the end, saved to a file.
struct Signed {
    _dir: tempfile::TempDir,
    db: PathBuf,
    key: String,
    checkpoint: PathBuf,
}

/// A server signing checkpoints every 10 events, with 40 decisions on its trail, and the
/// verifier key.
pub async fn signing_app(dir: &Path) -> (TestApp, String) {
    let key_file = dir.join("log.key");
    let out = toolgate(&["keygen", "--name", "toolgate/test", "--out", key_file.to_str().unwrap()]);
    assert!(out.status.success());
    let key = String::from_utf8(out.stdout).unwrap().trim().to_owned();
    let app = spawn_app_with(|c| {
        c.checkpoints = CheckpointsConfig {
            key_file: Some(key_file.clone()),
            every_events: 10,
            every_ms: 600_000,
            ..CheckpointsConfig::default()
        };
    })
    .await;
    for _ in 0..40 {
        app.client.clone().decide(request("read")).await.unwrap();
    }
    (app, key)
}

/// `every_events` is a promise, not a hint: under a burst that the writer commits in groups
/// of many events, no more than `every_events` events ever go between two checkpoints.
#[tokio::test]
async fn a_burst_never_stretches_the_gap_between_checkpoints() {
    let dir = tempfile::tempdir().unwrap();
    let (app, _key) = signing_app(dir.path()).await;
    let calls = (0..400).map(|i| {
        let mut client = app.client.clone();
        let mut call = request("read");
        call.session_id = format!("burst-{}", i % 40);
        async move { client.decide(call).await.unwrap() }
    });
    futures_util::future::join_all(calls).await;
    let (_tmp, db) = app.stop().await;
    let all = events(&Connection::open(&db).unwrap());
    assert!(all.len() > 440, "the burst is on the trail");
    let mut covered = 0;
    for event in &all {
        if event.record.kind == toolgate::trail::Kind::Checkpoint {
            assert!(event.seq - covered <= 11, "a checkpoint at {} after {covered}", event.seq);
            covered = event.seq;
        }
    }
    assert_eq!(all.last().unwrap().seq, covered, "the last checkpoint covers every event");
}

async fn signed_trail() -> Signed {
    let dir = tempfile::tempdir().unwrap();
    let (app, key) = signing_app(dir.path()).await;
    let (tmp, db) = app.stop().await;
    let printed = toolgate(&["checkpoint", "--db", db.to_str().unwrap()]);
    assert!(printed.status.success(), "{}", String::from_utf8_lossy(&printed.stderr));
    let checkpoint = tmp.path().join("saved.checkpoint");
    std::fs::write(&checkpoint, &printed.stdout).unwrap();
    drop(dir);
    Signed { _dir: tmp, db, key, checkpoint }
}

/// A copy of the trail with its triggers dropped, changed by `tamper`.
fn tampered(signed: &Signed, name: &str, tamper: impl FnOnce(&Connection)) -> PathBuf {
    let copy = signed.db.with_file_name(format!("{name}.db"));
    let conn = Connection::open(&signed.db).unwrap();
    conn.execute("VACUUM INTO ?1", [copy.to_str().unwrap()]).unwrap();
    let conn = Connection::open(&copy).unwrap();
    conn.execute_batch(
        "DROP TRIGGER events_no_update; DROP TRIGGER events_no_delete;
         DROP TRIGGER events_no_replace; DROP TRIGGER tree_nodes_no_delete;",
    )
    .unwrap();
    tamper(&conn);
    copy
}

pub fn events(conn: &Connection) -> Vec<Event> {
    let sql = format!("SELECT {} FROM events ORDER BY seq", column_list());
    let mut stmt = conn.prepare(&sql).unwrap();
    let mut rows = stmt.query([]).unwrap();
    let mut events = Vec::new();
    while let Some(row) = rows.next().unwrap() {
        let mut cells: Cells<'_> = [None; COLUMNS.len()];
        for (i, cell) in cells.iter_mut().enumerate() {
            *cell = match row.get_ref(i).unwrap() {
                ValueRef::Integer(n) => Some(Value::Integer(n)),
                ValueRef::Text(t) => Some(Value::Text(t)),
                _ => None,
            };
        }
        events.push(Event::from_cells(&cells).unwrap());
    }
    events
}

/// Recomputes `prev_hash` and `hash` of every event from `from` on, as a forger would.
pub fn rechain(conn: &Connection, from: i64) {
    let all = events(conn);
    let mut prev = decode(&all[from as usize - 2].hash).unwrap();
    for mut event in all.into_iter().skip(from as usize - 1) {
        event.prev_hash = hex::encode(prev);
        prev = event_hash(&prev, &event);
        conn.execute(
            "UPDATE events SET prev_hash = ?1, hash = ?2 WHERE seq = ?3",
            rusqlite::params![event.prev_hash, hex::encode(prev), event.seq],
        )
        .unwrap();
    }
}

fn verify(db: &Path, extra: &[&str]) -> (Option<i32>, String) {
    let mut args = vec!["verify", "--db", db.to_str().unwrap()];
    args.extend_from_slice(extra);
    let out = toolgate(&args);
    let said = String::from_utf8(out.stdout).unwrap() + &String::from_utf8(out.stderr).unwrap();
    (out.status.code(), said)
}

#[tokio::test]
async fn the_trail_signs_checkpoints_that_verify() {
    let signed = signed_trail().await;
    let key = signed.key.as_str();
    let checkpoint = signed.checkpoint.to_str().unwrap();

    let (code, out) = verify(&signed.db, &["--key", key, "--checkpoint", checkpoint]);

    assert_eq!(code, Some(0), "{out}");
    assert!(out.contains("on the trail match its tree (signed)"), "{out}");
    let saved = std::fs::read_to_string(&signed.checkpoint).unwrap();
    assert!(saved.starts_with("toolgate/test\n"), "{saved}");
    assert!(saved.contains("\n\n\u{2014} toolgate/test "), "{saved}");
}

#[tokio::test]
async fn every_tampering_the_chain_missed_is_caught_against_a_saved_checkpoint() {
    let signed = signed_trail().await;
    let anchored =
        ["--key", signed.key.as_str(), "--checkpoint", signed.checkpoint.to_str().unwrap()];
    let last = events(&Connection::open(&signed.db).unwrap()).len() as i64;

    let cut = tampered(&signed, "cut", |c| {
        c.execute("DELETE FROM events WHERE seq > ?1", [last - 3]).unwrap();
    });
    let rewritten = tampered(&signed, "rewritten", |c| {
        c.execute("UPDATE events SET tool = 'bash' WHERE seq = 5", []).unwrap();
        rechain(c, 5);
    });
    let forged = tampered(&signed, "forged", |c| {
        // Cut the last real events and put forged ones with a valid chain in their place.
        c.execute("UPDATE events SET actor_id = 'mallory' WHERE seq > ?1", [last - 5]).unwrap();
        rechain(c, last - 4);
    });

    for (name, db, expected) in [
        ("tail cut off", &cut, "the trail is shorter than the checkpoint"),
        ("rewritten and rehashed", &rewritten, "differs from the checkpoint's"),
        ("forged with a valid chain", &forged, "differs from the checkpoint's"),
    ] {
        let (chain_only, _) = verify(db, &[]);
        let (code, out) = verify(db, &anchored);
        assert_eq!(code, Some(1), "{name}: {out}");
        assert!(out.contains(expected), "{name}: {out}");
        if name == "tail cut off" {
            assert_eq!(chain_only, Some(0), "the chain alone cannot see a cut tail");
        }
    }
    // The trail's own checkpoints catch a rewrite they cover, even without the saved one.
    let (code, out) = verify(&rewritten, &["--key", signed.key.as_str()]);
    assert_eq!(code, Some(1), "{out}");
    assert!(out.contains("differs from this checkpoint's"), "{out}");
}

#[tokio::test]
async fn a_checkpoint_signed_by_another_key_or_changed_is_refused() {
    let signed = signed_trail().await;
    let other = signed.db.with_file_name("other.key");
    let out = toolgate(&["keygen", "--name", "toolgate/test", "--out", other.to_str().unwrap()]);
    let other_key = String::from_utf8(out.stdout).unwrap().trim().to_owned();
    let changed = signed.checkpoint.with_file_name("changed.checkpoint");
    let text = std::fs::read_to_string(&signed.checkpoint).unwrap();
    let mut lines: Vec<_> = text.split('\n').map(str::to_owned).collect();
    lines[1] = (lines[1].parse::<u64>().unwrap() - 1).to_string();
    std::fs::write(&changed, lines.join("\n")).unwrap();

    let (foreign, out) = verify(
        &signed.db,
        &["--key", &other_key, "--checkpoint", signed.checkpoint.to_str().unwrap()],
    );
    let (edited, _) =
        verify(&signed.db, &["--key", &signed.key, "--checkpoint", changed.to_str().unwrap()]);
    let (stored, stored_out) = verify(&signed.db, &["--key", &other_key]);

    assert_ne!(foreign, Some(0), "{out}");
    assert!(out.contains("is not signed by any --key"), "{out}");
    assert_ne!(edited, Some(0));
    assert_eq!(stored, Some(1), "the trail's checkpoints are not the other key's: {stored_out}");
    assert!(stored_out.contains("the checkpoint does not verify"), "{stored_out}");
}

/// A checkpoint refused for its text says so, not that a key did not sign it.
#[tokio::test]
async fn a_checkpoint_that_does_not_read_is_refused_for_its_text() {
    let signed = signed_trail().await;
    let key_file = signed.db.with_file_name("padded.key");
    let out = toolgate(&["keygen", "--name", "toolgate/test", "--out", key_file.to_str().unwrap()]);
    let key = String::from_utf8(out.stdout).unwrap().trim().to_owned();
    let signer =
        toolgate::trail::note::NoteSigner::parse(&std::fs::read_to_string(&key_file).unwrap())
            .unwrap();
    let text = std::fs::read_to_string(&signed.checkpoint).unwrap();
    let lines: Vec<_> = text.split('\n').collect();
    let padded = format!("{}\n0{}\n{}\n", lines[0], lines[1], lines[2]);
    let padded_file = signed.checkpoint.with_file_name("padded.checkpoint");
    std::fs::write(&padded_file, signer.sign(&padded).unwrap()).unwrap();

    let (code, out) =
        verify(&signed.db, &["--key", &key, "--checkpoint", padded_file.to_str().unwrap()]);

    assert_ne!(code, Some(0), "{out}");
    assert!(out.contains("leading zeros"), "{out}");
    assert!(!out.contains("--key"), "{out}");
}

#[tokio::test]
async fn verifying_past_the_last_event_says_the_events_are_missing() {
    let signed = signed_trail().await;
    let last = events(&Connection::open(&signed.db).unwrap()).len();

    let (code, out) = verify(&signed.db, &["--to", &(last + 3).to_string()]);

    assert_eq!(code, Some(1), "{out}");
    assert!(out.contains(&format!("seq {}..{}: missing", last + 1, last + 3)), "{out}");
}

fn root_of(note: &str) -> Hash {
    let root = note.lines().nth(2).unwrap();
    base64::engine::general_purpose::STANDARD.decode(root).unwrap().try_into().unwrap()
}

fn hash(bytes: &[u8]) -> Hash {
    bytes.try_into().unwrap()
}

#[tokio::test]
async fn the_audit_api_serves_checkpoints_and_proofs_that_verify_against_them() {
    let dir = tempfile::tempdir().unwrap();
    let (app, _) = signing_app(dir.path()).await;
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    let mut audit = AuditClient::new(app.channel.clone());

    let first_seq: i64 = Connection::open(&app.db)
        .unwrap()
        .query_row("SELECT min(seq) FROM events WHERE kind = 'checkpoint'", [], |r| r.get(0))
        .unwrap();
    let first_seq = first_seq.unsigned_abs();
    let latest = audit
        .checkpoint(CheckpointRequest { size: 0, ..Default::default() })
        .await
        .unwrap()
        .into_inner();
    let first =
        audit.checkpoint(CheckpointRequest { size: first_seq - 1, ..Default::default() }).await;
    let missing = audit
        .checkpoint(CheckpointRequest { size: first_seq, ..Default::default() })
        .await
        .unwrap_err();
    let event_hash: String = Connection::open(&app.db)
        .unwrap()
        .query_row("SELECT hash FROM events WHERE seq = 7", [], |r| r.get(0))
        .unwrap();
    let included = audit
        .inclusion_proof(InclusionProofRequest { seq: 7, tree_size: latest.size })
        .await
        .unwrap()
        .into_inner();
    let consistent = audit
        .consistency_proof(ConsistencyProofRequest {
            old_size: first_seq - 1,
            new_size: latest.size,
        })
        .await
        .unwrap()
        .into_inner();
    let refused =
        audit.inclusion_proof(InclusionProofRequest { seq: 0, tree_size: 0 }).await.unwrap_err();

    let url = app.url.clone();
    let printed = tokio::task::spawn_blocking(move || toolgate(&["checkpoint", "--server", &url]))
        .await
        .unwrap();
    // A later checkpoint may have come meanwhile: the one printed is the one of its size.
    let printed = String::from_utf8(printed.stdout).unwrap();
    let size: u64 = printed.lines().nth(1).unwrap().parse().unwrap();
    let kept = audit
        .checkpoint(CheckpointRequest { size, ..Default::default() })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(printed, kept.note, "the CLI prints it as kept");
    assert_eq!(latest.seq, latest.size + 1);
    assert!(latest.size >= 30, "one every 10 events: {}", latest.size);
    let root = root_of(&latest.note);
    assert_eq!(hash(&included.root), root, "the proof's root is the signed one");
    let mut leaf = Sha256::new();
    leaf.update([0]);
    leaf.update(hex::decode(&event_hash).unwrap());
    let leaf: Hash = leaf.finalize().into();
    assert_eq!(hash(&included.leaf_hash), leaf);
    let path: Vec<Hash> = included.hashes.iter().map(|h| hash(h)).collect();
    assert!(verify_inclusion(&leaf, 6, latest.size, &path, &root));
    let first = first.unwrap().into_inner();
    assert_eq!(first.size, first_seq - 1);
    let old_root = root_of(&first.note);
    assert_eq!(hash(&consistent.old_root), old_root);
    let path: Vec<Hash> = consistent.hashes.iter().map(|h| hash(h)).collect();
    assert!(verify_consistency(first.size, latest.size, &old_root, &root, &path));
    assert_eq!(missing.code(), tonic::Code::NotFound);
    assert_eq!(refused.code(), tonic::Code::InvalidArgument);
    assert!(refused.message().starts_with("seq:"), "{}", refused.message());
}

#[tokio::test]
async fn a_rotated_key_leaves_old_checkpoints_verifying_with_the_old_key() {
    let dir = tempfile::tempdir().unwrap();
    let (old_app, old_key) = signing_app(dir.path()).await;
    let (tmp, db) = old_app.stop().await;
    let printed = toolgate(&["checkpoint", "--db", db.to_str().unwrap()]);
    let old_checkpoint = tmp.path().join("old.checkpoint");
    std::fs::write(&old_checkpoint, &printed.stdout).unwrap();
    // The same trail, now signed with a new key.
    let new_dir = tempfile::tempdir().unwrap();
    let new_key_file = new_dir.path().join("new.key");
    let out =
        toolgate(&["keygen", "--name", "toolgate/test", "--out", new_key_file.to_str().unwrap()]);
    let new_key = String::from_utf8(out.stdout).unwrap().trim().to_owned();
    let mut config = toolgate::config::Config { db: db.clone(), ..Default::default() };
    config.checkpoints =
        CheckpointsConfig { key_file: Some(new_key_file), every_events: 10, ..Default::default() };
    let app = crate::helpers::start(config, tmp).await;
    for _ in 0..15 {
        app.client.clone().decide(request("read")).await.unwrap();
    }
    let (_tmp, db) = app.stop().await;
    let old_checkpoint = old_checkpoint.to_str().unwrap();

    let (both, out) = verify(&db, &["--key", &old_key, "--key", &new_key]);
    let (new_only, new_out) = verify(&db, &["--key", &new_key]);
    let (old_saved, saved_out) =
        verify(&db, &["--key", &old_key, "--key", &new_key, "--checkpoint", old_checkpoint]);

    assert_eq!(both, Some(0), "{out}");
    assert!(out.contains("0 events after the last one"), "the shutdown signed the end: {out}");
    assert_eq!(new_only, Some(1), "the old checkpoints are not the new key's: {new_out}");
    assert_eq!(old_saved, Some(0), "a checkpoint kept from before the rotation: {saved_out}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_crash_between_checkpoints_is_covered_by_the_next_one() {
    let dir = tempfile::tempdir().unwrap();
    let key_file = dir.path().join("log.key");
    let out = toolgate(&["keygen", "--name", "toolgate/test", "--out", key_file.to_str().unwrap()]);
    let key = String::from_utf8(out.stdout).unwrap().trim().to_owned();
    let db = dir.path().join("trail.db");
    // No checkpoint falls due while the test runs: only the shutdown signs one.
    let toml = format!(
        "[checkpoints]\nkey_file = \"{}\"\nevery_events = 100000\nevery_ms = 600000\n",
        key_file.display()
    );
    async fn run(db: &Path, toml: &str, decisions: usize, crash: bool) {
        let mut proc = crate::faults::Proc::start(db, toml).await;
        let mut gate = proc.gate().await;
        for _ in 0..decisions {
            gate.decide(request("read")).await.unwrap();
        }
        drop(gate);
        if crash {
            proc.kill9();
        } else {
            proc.sigterm();
            proc.exited_within(std::time::Duration::from_secs(10)).expect("exits on SIGTERM");
        }
    }
    run(&db, &toml, 5, false).await;
    run(&db, &toml, 5, true).await;
    let (_, uncovered) = verify(&db, &["--key", &key]);
    run(&db, &toml, 3, false).await;

    let (code, out) = verify(&db, &["--key", &key]);

    // The second run's policy load and its 5 decisions.
    assert!(
        uncovered.contains(" 6 events after the last one"),
        "the crash left events uncovered: {uncovered}"
    );
    assert_eq!(code, Some(0), "{out}");
    assert!(out.contains(" 0 events after the last one"), "{out}");
}

#[tokio::test]
async fn a_trail_without_its_tree_gets_it_built_when_it_is_opened() {
    // A trail as it was before the tree (or whose tree was lost): events, no tree nodes.
    let signed = signed_trail().await;
    let bare = tampered(&signed, "bare", |c| {
        c.execute("DELETE FROM tree_nodes", []).unwrap();
    });
    // The saved checkpoint is the shutdown's, the last event: it covers the events before it.
    let covered = events(&Connection::open(&bare).unwrap()).len() as u64 - 1;

    let dir = tempfile::tempdir().unwrap();
    let config = toolgate::config::Config { db: bare.clone(), ..Default::default() };
    let app = crate::helpers::start(config, dir).await;
    let mut audit = AuditClient::new(app.channel.clone());
    let proof = audit
        .inclusion_proof(InclusionProofRequest { seq: 3, tree_size: covered })
        .await
        .unwrap()
        .into_inner();
    app.stop().await;
    let (code, out) =
        verify(&bare, &["--key", &signed.key, "--checkpoint", signed.checkpoint.to_str().unwrap()]);

    let path: Vec<Hash> = proof.hashes.iter().map(|h| hash(h)).collect();
    assert!(verify_inclusion(&hash(&proof.leaf_hash), 2, covered, &path, &hash(&proof.root)));
    let saved = std::fs::read_to_string(&signed.checkpoint).unwrap();
    assert_eq!(hash(&proof.root), root_of(&saved), "the rebuilt tree has the signed root");
    assert_eq!(code, Some(0), "{out}");
}
