//! The fleet store as the place where a node's claims meet the evidence it shipped before: its
//! checkpoints are checked on arrival against the store's own tree of the node's events, its
//! witnesses' cosignatures follow them, and `verify --postgres --witness` demands them.

use std::time::{Duration, Instant};

use sqlx::Row;
use toolgate::config::{CheckpointsConfig, Config, FleetConfig};

use crate::checkpoints::rechain;
use crate::fleet::{FleetDb, Ingest, caught_up, cluster, decide_n, shipping};
use crate::helpers::{spawn_app_with, start, toolgate_async};
use crate::witnesses::{WitnessProc, cosigned_checkpoint, keygen, start_witness, witness_config};

fn checkpoints(key_file: &std::path::Path) -> CheckpointsConfig {
    CheckpointsConfig {
        key_file: Some(key_file.to_owned()),
        every_events: 5,
        every_ms: 200,
        ..CheckpointsConfig::default()
    }
}

async fn count(fleet: &FleetDb, sql: &'static str) -> i64 {
    sqlx::query(sql).fetch_one(&fleet.pool).await.unwrap().get(0)
}

/// A node's log key and a witness of it, running, and another witness's key that cosigns
/// nothing.
struct Witnessed {
    log_file: std::path::PathBuf,
    log_key: String,
    witness_key: String,
    absent_key: String,
    witness: WitnessProc,
}

fn witnessed(dir: &std::path::Path) -> Witnessed {
    let (log_file, log_key) = keygen(dir, "toolgate/node-a", false);
    let (witness_file, witness_key) = keygen(dir, "witness.test/w1", true);
    let (_, absent_key) = keygen(dir, "witness.test/w2", true);
    let witness = start_witness(&witness_file, &dir.join("w1.db"), &[&log_key], "127.0.0.1:0");
    Witnessed { log_file, log_key, witness_key, absent_key, witness }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn checkpoints_and_cosignatures_arrive_checked_and_verify_demands_them() {
    let dir = tempfile::tempdir().unwrap();
    let Witnessed { log_file, log_key, witness_key, absent_key, witness } = witnessed(dir.path());
    let fleet = FleetDb::new(&cluster()).await;
    let url = fleet.node_with_key("a", Some(&log_key)).await;
    let app = spawn_app_with(|c| {
        c.checkpoints = CheckpointsConfig {
            witnesses: vec![witness_config(&witness.url, &witness_key)],
            ..checkpoints(&log_file)
        };
        c.fleet = shipping("a", &url);
    })
    .await;
    decide_n(&app, 12).await;
    cosigned_checkpoint(&app.db, 2, 12).await;
    caught_up(&fleet, "a", &app.db).await;
    let deadline = Instant::now() + Duration::from_secs(20);
    // The cosignature of the last checkpoint the store holds, which `verify` demands: an
    // earlier checkpoint's arriving first is not enough.
    let last_cosigned = "SELECT count(*) FROM fleet_cosignatures WHERE node_id = 'a' AND seq =
        (SELECT max(seq) FROM fleet_events WHERE node_id = 'a' AND kind = 'checkpoint')";
    while count(&fleet, last_cosigned).await == 0 {
        assert!(Instant::now() < deadline, "no cosignature reached the store");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(fleet.alarms().await.is_empty(), "{:?}", fleet.alarms().await);
    // The store's tree covers every event it holds.
    let events = count(&fleet, "SELECT count(*) FROM fleet_events").await;
    assert_eq!(count(&fleet, "SELECT size FROM fleet_trees WHERE node_id = 'a'").await, events);
    assert!(
        count(&fleet, "SELECT count(*) FROM fleet_events WHERE kind = 'checkpoint'").await >= 1
    );

    let status = toolgate_async(&["fleet", "status", "--postgres", &fleet.url()]).await;
    let status = String::from_utf8_lossy(&status.stdout);
    assert!(status.contains(" by 1 witness(es), "), "{status}");
    let url = fleet.url();
    let out = toolgate_async(&["verify", "--postgres", &url, "--witness", &witness_key]).await;
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stdout));
    let both = ["--witness", &witness_key, "--witness", &absent_key];
    let out = toolgate_async(&[&["verify", "--postgres", &url][..], &both].concat()).await;
    assert_eq!(out.status.code(), Some(1));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("1 valid cosignature(s) by the witnesses given, 2 required"),
        "{stdout}"
    );
    app.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_checkpoint_that_is_not_the_root_of_the_shipped_events_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let (log_file, log_key) = keygen(dir.path(), "toolgate/node-a", false);
    // The node signs checkpoints before it ships anything.
    let app = spawn_app_with(|c| c.checkpoints = checkpoints(&log_file)).await;
    decide_n(&app, 12).await;
    let (dir2, db) = app.stop().await;
    // Its owner forges the first checkpoint's root, and recomputes the chain after it.
    let conn = rusqlite::Connection::open(&db).unwrap();
    let (seq, note): (i64, String) = conn
        .query_row(
            "SELECT seq, note FROM events WHERE kind = 'checkpoint' ORDER BY seq LIMIT 1",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    let mut lines: Vec<&str> = note.split('\n').collect();
    lines[2] = "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=";
    conn.execute_batch("DROP TRIGGER events_no_update;").unwrap();
    conn.execute("UPDATE events SET note = ?1 WHERE seq = ?2", (lines.join("\n"), seq)).unwrap();
    rechain(&conn, seq);
    drop(conn);

    let fleet = FleetDb::new(&cluster()).await;
    let url = fleet.node_with_key("a", Some(&log_key)).await;
    let config = Config { db: db.clone(), fleet: shipping("a", &url), ..Default::default() };
    let app = start(config, dir2).await;
    let alarms = fleet.first_alarms().await;
    let (node, at, what) = &alarms[0];
    assert_eq!((node.as_str(), *at), ("a", Some(seq)), "{what}");
    assert!(what.contains("a checkpoint whose root is not the root"), "{what}");
    assert!(fleet.events("a").await.is_empty(), "nothing of the batch merged");
    // The node keeps deciding.
    decide_n(&app, 2).await;
    app.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_checkpoint_not_signed_by_the_registered_key_is_refused_on_arrival() {
    let dir = tempfile::tempdir().unwrap();
    let (signing_file, _) = keygen(dir.path(), "toolgate/node-a", false);
    std::fs::create_dir(dir.path().join("other")).unwrap();
    let (_, registered) = keygen(&dir.path().join("other"), "toolgate/node-a", false);
    let fleet = FleetDb::new(&cluster()).await;
    // Registered with one key, signing with another (a node impersonated, or re-keyed behind
    // the operator's back); and one registered with none.
    let url_a = fleet.node_with_key("a", Some(&registered)).await;
    let url_b = fleet.node("b").await;
    for (node, url) in [("a", &url_a), ("b", &url_b)] {
        let app = spawn_app_with(|c| {
            c.checkpoints = checkpoints(&signing_file);
            c.fleet = shipping(node, url);
        })
        .await;
        decide_n(&app, 12).await;
        let deadline = Instant::now() + Duration::from_secs(30);
        let alarm = loop {
            let alarms = fleet.alarms().await;
            if let Some(alarm) = alarms.into_iter().find(|(n, _, _)| n == node) {
                break alarm;
            }
            assert!(Instant::now() < deadline, "node {node}: no alarm");
            tokio::time::sleep(Duration::from_millis(100)).await;
        };
        let first: i64 = rusqlite::Connection::open(&app.db)
            .unwrap()
            .query_row("SELECT min(seq) FROM events WHERE kind = 'checkpoint'", [], |r| r.get(0))
            .unwrap();
        assert_eq!(alarm.1, Some(first), "{alarm:?}");
        let expected = match node {
            "a" => "a checkpoint not signed by the node's registered key toolgate/node-a+",
            _ => "a checkpoint from a node registered without a verifier key",
        };
        assert!(alarm.2.contains(expected), "{alarm:?}");
        // Nothing of the refused batch is merged: the store ends before the checkpoint.
        let stored = fleet.events(node).await;
        assert!(stored.iter().all(|(seq, _)| *seq < first), "{stored:?}");
        decide_n(&app, 2).await;
        app.stop().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fleet_that_requires_witnesses_stores_only_through_a_checkpoint_they_cosigned() {
    let dir = tempfile::tempdir().unwrap();
    let Witnessed { log_file, log_key, witness_key, absent_key, witness } = witnessed(dir.path());
    let fleet = FleetDb::new(&cluster()).await;
    for (required, node) in [(&witness_key, "a"), (&absent_key, "b")] {
        // An ingest server of its own, requiring the one witness.
        let toml = format!("[ingest]\nwitnesses = [\"{required}\"]\n");
        let ingest = Ingest::start_with(&fleet.ingest_role_url(), &toml).await;
        let mut to = fleet.node_with_key(node, Some(&log_key)).await;
        to.ingest = ingest.url.clone();
        let app = spawn_app_with(|c| {
            c.checkpoints = CheckpointsConfig {
                witnesses: vec![witness_config(&witness.url, &witness_key)],
                ..checkpoints(&log_file)
            };
            // Batches of 3 events: the checkpoint the witness cosigned (the node's latest) is
            // past every batch but the last, and comes with it, proven to cover it.
            c.fleet = FleetConfig { batch_events: 3, ..shipping(node, &to) };
        })
        .await;
        decide_n(&app, 30).await;
        cosigned_checkpoint(&app.db, 1, 30).await;
        match node {
            // Its witness cosigns: the store catches up with the whole trail, and each batch
            // ended at a checkpoint the witness cosigned.
            "a" => caught_up(&fleet, node, &app.db).await,
            // A witness that never cosigns: the store holds nothing of it, and waits (no
            // alarm: waiting is no misbehaviour).
            _ => {
                tokio::time::sleep(Duration::from_secs(2)).await;
                assert!(fleet.events(node).await.is_empty());
            }
        }
        let head = "SELECT coalesce(max(seq), 0) FROM fleet_events WHERE node_id = $1";
        let head: i64 = sqlx::query(head).bind(node).fetch_one(&fleet.pool).await.unwrap().get(0);
        let cosigned = "SELECT count(*) FROM fleet_events e WHERE e.node_id = $1 AND e.seq = $2
            AND e.kind = 'checkpoint' AND EXISTS (SELECT 1 FROM fleet_cosignatures c
                                                  WHERE c.node_id = e.node_id AND c.seq = e.seq)";
        let cosigned: i64 = sqlx::query(cosigned)
            .bind(node)
            .bind(head)
            .fetch_one(&fleet.pool)
            .await
            .unwrap()
            .get(0);
        assert_eq!(cosigned, i64::from(node == "a"), "node {node}: head {head}");
        assert!(fleet.alarms().await.is_empty(), "{:?}", fleet.alarms().await);
        // The node decides on, whatever the fleet awaits.
        decide_n(&app, 2).await;
        app.stop().await;
    }
}
