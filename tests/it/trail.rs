//! The trail under concurrency, tampering and restarts.

use std::collections::BTreeSet;
use std::process::Command;

use toolgate::proto::Outcome;

use crate::helpers::{request, rows, spawn_app, start, verify};

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_decides_are_all_committed_in_one_contiguous_chain() {
    let app = spawn_app().await;

    let tasks: Vec<_> = (0..32)
        .map(|task| {
            let mut client = app.client.clone();
            tokio::spawn(async move {
                let mut seqs = Vec::new();
                for i in 0..16 {
                    if task * 16 + i >= 500 {
                        break;
                    }
                    let mut req = request("read");
                    req.session_id = format!("session-{task}");
                    req.args_json = format!(r#"{{"path":"src/main.rs","call":{i}}}"#);
                    let answer = client.decide(req).await.unwrap().into_inner();
                    assert_eq!(answer.outcome(), Outcome::Allow);
                    seqs.push(answer.seq as i64);
                }
                seqs
            })
        })
        .collect();
    let mut answered = BTreeSet::new();
    for task in tasks {
        answered.extend(task.await.unwrap());
    }

    assert_eq!(answered.len(), 500);
    let stored = rows(&app.db);
    let seqs: Vec<i64> = stored.iter().map(|r| r.seq).collect();
    assert_eq!(seqs, (1..=501).collect::<Vec<_>>(), "seq is contiguous from 1");
    assert!(answered.iter().all(|seq| stored[*seq as usize - 1].kind == "decision"));
    let (code, out) = verify(&app.db);
    assert_eq!(code, 0, "{out}");
    assert!(out.starts_with("intact: 501 events"), "{out}");
}

#[tokio::test]
async fn update_delete_and_replace_through_sql_are_refused() {
    let mut app = spawn_app().await;
    app.decide(request("read")).await;
    let conn = rusqlite::Connection::open(&app.db).unwrap();

    let update = conn.execute("UPDATE events SET outcome = 'deny' WHERE seq = 2", []);
    let delete = conn.execute("DELETE FROM events WHERE seq = 1", []);
    let replace = conn.execute(
        "INSERT OR REPLACE INTO events (seq, event_id, ts, kind, prev_hash, hash)
         VALUES (2, 'x', 'now', 'decision', 'p', 'h')",
        [],
    );

    for (what, result) in [("update", update), ("delete", delete), ("replace", replace)] {
        let err = result.unwrap_err().to_string();
        assert!(err.contains("append-only"), "{what}: {err}");
    }
    assert_eq!(rows(&app.db)[1].outcome.as_deref(), Some("allow"));
}

#[tokio::test]
async fn verify_names_an_edited_row_and_a_deleted_row_after_the_triggers_are_dropped() {
    let mut app = spawn_app().await;
    for _ in 0..8 {
        app.decide(request("read")).await;
    }
    let (_dir, db) = app.stop().await;
    let sql = "DROP TRIGGER events_no_update; DROP TRIGGER events_no_delete;
               UPDATE events SET outcome = 'deny' WHERE seq = 3;
               DELETE FROM events WHERE seq = 6;";

    let edited = Command::new("sqlite3").arg(&db).arg(sql).status().unwrap();
    let (code, out) = verify(&db);

    assert!(edited.success());
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("BROKEN seq 3: hash mismatch"), "{out}");
    assert!(out.contains("BROKEN seq 6: missing"), "{out}");
    assert!(out.contains("broken: 2 problem(s) in 8 events"), "{out}");
}

#[tokio::test]
async fn verify_names_a_row_whose_hash_was_recomputed_by_the_link_after_it() {
    let mut app = spawn_app().await;
    for _ in 0..4 {
        app.decide(request("read")).await;
    }
    let (_dir, db) = app.stop().await;
    let sql = "DROP TRIGGER events_no_update;
               UPDATE events SET hash = '00' || substr(hash, 3) WHERE seq = 2;";

    Command::new("sqlite3").arg(&db).arg(sql).status().unwrap();
    let (code, out) = verify(&db);

    assert_eq!(code, 1, "{out}");
    assert!(out.contains("BROKEN seq 2: hash mismatch"), "{out}");
    assert!(out.contains("BROKEN seq 3: broken link"), "{out}");
}

#[tokio::test]
async fn a_restart_continues_the_chain() {
    let mut app = spawn_app().await;
    let before = app.decide(request("read")).await;
    let (dir, db) = app.stop().await;
    let config = toolgate::config::Config { db: db.clone(), ..Default::default() };

    let mut app = start(config, dir).await;
    let after = app.decide(request("read")).await;

    assert_eq!(before.seq, 2);
    assert_eq!(after.seq, 4, "a policy_loaded event at seq 3, then the decision");
    let kinds: Vec<_> = rows(&db).into_iter().map(|r| r.kind).collect();
    assert_eq!(kinds, ["policy_loaded", "decision", "policy_loaded", "decision"]);
    let (code, out) = verify(&db);
    assert_eq!(code, 0, "{out}");
}

/// The WAL's size now (0 when there is none).
fn wal_bytes(db: &std::path::Path) -> u64 {
    std::fs::metadata(db.with_extension("db-wal")).map_or(0, |m| m.len())
}

/// Decides from 16 callers until `events` more are on the trail; returns the largest WAL seen.
async fn write_load(app: &crate::helpers::TestApp, events: usize) -> u64 {
    let tasks: Vec<_> = (0..16)
        .map(|task| {
            let mut client = app.client.clone();
            tokio::spawn(async move {
                for i in 0..events / 16 {
                    let mut req = request("read");
                    req.session_id = format!("session-{task}-{i}");
                    req.args_json = format!(r#"{{"path":"src/main.rs","call":{i}}}"#);
                    client.decide(req).await.unwrap();
                }
            })
        })
        .collect();
    let mut largest = 0;
    while !tasks.iter().all(|t| t.is_finished()) {
        largest = largest.max(wal_bytes(&app.db));
        tokio::time::sleep(std::time::Duration::from_millis(2)).await;
    }
    largest
}

/// The writer empties the WAL between groups once it passes 4 MiB (src/store/wal.rs), and a
/// reader that holds on to older frames only defers that until it lets go.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_wal_stays_within_its_bound_and_a_reader_only_defers_its_emptying() {
    const BOUND: u64 = 4 << 20;
    let app = spawn_app().await;
    let largest = write_load(&app, 4000).await;
    // One group's frames may land past the bound before the writer sees it.
    assert!(largest < 2 * BOUND, "the WAL reached {largest} bytes");

    let reader = rusqlite::Connection::open(&app.db).unwrap();
    reader.execute_batch("BEGIN; SELECT count(*) FROM events;").unwrap();
    let held = write_load(&app, 4000).await;
    assert!(held > 2 * BOUND, "a reader on old frames kept the WAL at {held} bytes");
    reader.execute_batch("COMMIT").unwrap();
    write_load(&app, 160).await;
    assert!(wal_bytes(&app.db) < 2 * BOUND, "{} bytes once the reader let go", wal_bytes(&app.db));
    let (code, out) = verify(&app.db);
    assert_eq!(code, 0, "{out}");
}
