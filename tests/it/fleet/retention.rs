//! The fleet store's retention against a real PostgreSQL, a real ingest server and a real
//! sidecar archiving its trail: an old partition leaves the store only once the node's events
//! in it are in the node's archive exactly, covered by a signed checkpoint the store keeps,
//! and no legal hold is in force; the drop is recorded, `verify --postgres` goes on from the
//! cut, and the node keeps shipping after it.

use std::path::Path;
use std::time::{Duration, Instant};

use sqlx::Row;
use toolgate::trail::checkpoint::Checkpoint;

use crate::archive::{archived, config};
use crate::fleet::{FleetDb, caught_up, cluster, decide_n, shipping};
use crate::helpers::{start, toolgate_async};
use crate::witnesses::keygen;

/// Re-partitions a fresh store so that the events arriving in the next `seconds[0]` seconds go
/// to `fleet_events_old`, those until `seconds[1]` to `fleet_events_mid`, and those after to
/// `fleet_events_new` (to the month the store made next): what months do, in seconds. Returns
/// the two cuts' times.
async fn split(fleet: &FleetDb, seconds: [u32; 2]) -> [String; 2] {
    let at = |s: u32| {
        sqlx::query(
            "SELECT to_char((now() + $1 * interval '1 second') AT TIME ZONE 'UTC',
                            'YYYY-MM-DD HH24:MI:SS.US+00')",
        )
        .bind(f64::from(s))
        .fetch_one(&fleet.pool)
    };
    let (first, second): (String, String) =
        (at(seconds[0]).await.unwrap().get(0), at(seconds[1]).await.unwrap().get(0));
    let sql = format!(
        "ALTER TABLE fleet_events DETACH PARTITION fleet_events_before;
         DROP TABLE fleet_events_before;
         CREATE TABLE fleet_events_old (LIKE fleet_events INCLUDING DEFAULTS);
         ALTER TABLE fleet_events ATTACH PARTITION fleet_events_old
             FOR VALUES FROM (MINVALUE) TO ('{first}');
         CREATE TABLE fleet_events_mid (LIKE fleet_events INCLUDING DEFAULTS);
         ALTER TABLE fleet_events ATTACH PARTITION fleet_events_mid
             FOR VALUES FROM ('{first}') TO ('{second}');
         CREATE TABLE fleet_events_new (LIKE fleet_events INCLUDING DEFAULTS);
         DO $$ BEGIN
             EXECUTE format('ALTER TABLE fleet_events ATTACH PARTITION fleet_events_new
                             FOR VALUES FROM (%L) TO (%L)', '{second}'::timestamptz,
                            date_trunc('month', now(), 'UTC') + interval '1 month');
         END $$;"
    );
    sqlx::raw_sql(sqlx::AssertSqlSafe(sql)).execute(&fleet.pool).await.unwrap();
    [first, second]
}

/// Waits until the store's clock is past `at`.
async fn past(fleet: &FleetDb, at: &str) {
    let deadline = Instant::now() + Duration::from_secs(30);
    while number(fleet, &format!("SELECT count(*) FILTER (WHERE now() > '{at}')")).await == 0 {
        assert!(Instant::now() < deadline);
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

async fn number(fleet: &FleetDb, sql: &str) -> i64 {
    sqlx::query(sqlx::AssertSqlSafe(sql.to_owned())).fetch_one(&fleet.pool).await.unwrap().get(0)
}

async fn exists(fleet: &FleetDb, table: &str) -> bool {
    sqlx::query("SELECT to_regclass($1) IS NOT NULL")
        .bind(format!("public.{table}"))
        .fetch_one(&fleet.pool)
        .await
        .unwrap()
        .get(0)
}

/// `toolgate fleet ARGS… --postgres URL`: exit code and stdout.
async fn fleet_cli(fleet: &FleetDb, args: &[&str]) -> (i32, String) {
    let url = fleet.url();
    let out = toolgate_async(&[&["fleet"], args, &["--postgres", &url]].concat()).await;
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr);
    (out.status.code().unwrap_or(-1), format!("{stdout}{stderr}"))
}

/// A copy of the archive at `from`, at `to`, with the object of its first tile under `under`
/// (`tile/entries`, `toolgate/events`) changed by `change`.
fn tampered(from: &Path, to: &Path, under: &str, change: impl FnOnce(&mut Vec<u8>)) {
    let copy = std::process::Command::new("cp").arg("-r").arg(from).arg(to).status().unwrap();
    assert!(copy.success());
    let note = std::fs::read_to_string(to.join("checkpoint")).unwrap();
    let object = match Checkpoint::read(&note).unwrap().size {
        256.. => to.join(format!("{under}/000")),
        width => to.join(format!("{under}/000.p/{width}")),
    };
    let mut bytes = std::fs::read(&object).unwrap();
    change(&mut bytes);
    std::fs::write(&object, bytes).unwrap();
}

/// Registers `archive` as node a's, and expects `fleet prune` to keep the old partition,
/// saying `why`.
async fn kept_for(fleet: &FleetDb, archive: &Path, why: &str) {
    let url = format!("file://{}", archive.display());
    let (code, out) = fleet_cli(fleet, &["archive", "--node", "a", "--url", &url]).await;
    assert_eq!(code, 0, "{out}");
    let (code, out) = fleet_cli(fleet, &["prune", "--max-age-days", "0"]).await;
    assert_eq!(code, 1, "{out}");
    assert!(out.contains(why), "{out}");
    assert!(exists(fleet, "fleet_events_old").await);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_old_partition_goes_only_archived_verified_covered_and_unheld() {
    let dir = tempfile::tempdir().unwrap();
    let (key_file, key) = keygen(dir.path(), "toolgate/node-a", false);
    let (_, witness) = keygen(dir.path(), "witness.test/w1", true);
    let archive = dir.path().join("archive");
    let fleet = FleetDb::new(&cluster()).await;
    let cuts = split(&fleet, [6, 10]).await;
    let to = fleet.node_with_key("a", Some(&key)).await;
    let trail = tempfile::tempdir().unwrap();
    let mut node = config(trail.path(), &key_file, &archive);
    node.checkpoints.every_events = 10;
    node.fleet = shipping("a", &to);
    let app = start(node, trail).await;

    // The first events arrive before the first cut, the next before the second, the rest
    // after it. The writer's checkpoint of the last of each comes within its 200 ms.
    decide_n(&app, 40).await;
    tokio::time::sleep(Duration::from_secs(1)).await;
    caught_up(&fleet, "a", &app.db).await;
    let old = number(&fleet, "SELECT count(*) FROM fleet_events_old").await;
    assert!(old >= 40, "{old} events before the cut");
    past(&fleet, &cuts[0]).await;
    decide_n(&app, 20).await;
    tokio::time::sleep(Duration::from_secs(1)).await;
    caught_up(&fleet, "a", &app.db).await;
    let mid = old + number(&fleet, "SELECT count(*) FROM fleet_events_mid").await;
    assert!(mid >= old + 20, "{mid}");
    past(&fleet, &cuts[1]).await;
    decide_n(&app, 40).await;
    archived(&archive, mid.unsigned_abs() + 10).await;
    caught_up(&fleet, "a", &app.db).await;
    assert_eq!(number(&fleet, "SELECT count(*) FROM fleet_events_old").await, old);
    let prune = ["prune", "--max-age-days", "0"];

    // No archive known: kept.
    let (code, out) = fleet_cli(&fleet, &prune).await;
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("kept fleet_events_old: node \"a\": no archive registered"), "{out}");

    // An archive that does not hold the events as the store does: kept. Its first event's
    // row changed (the header is the first line), or a byte of its first leaf (after the
    // entry's 2-byte length).
    let events = dir.path().join("tampered-events");
    tampered(&archive, &events, "toolgate/events", |bytes| {
        let row = bytes.iter().position(|b| *b == b'\n').unwrap();
        let at = row + bytes[row..].windows(4).position(|w| w == b"read").unwrap();
        bytes[at + 1] = b'E';
    });
    kept_for(&fleet, &events, "not the trail's events").await;
    let bundle = dir.path().join("tampered-bundle");
    tampered(&archive, &bundle, "tile/entries", |bytes| bytes[2] ^= 1);
    kept_for(&fleet, &bundle, "not the trail's leaves").await;

    // The real archive, under a legal hold: kept, and said so.
    let url = format!("file://{}", archive.display());
    let (code, out) = fleet_cli(&fleet, &["archive", "--node", "a", "--url", &url]).await;
    assert_eq!(code, 0, "{out}");
    let (code, out) = fleet_cli(&fleet, &["hold", "--reason", "case 7"]).await;
    assert_eq!(code, 0, "{out}");
    let (code, out) = fleet_cli(&fleet, &prune).await;
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("a legal hold is in force") && out.contains("case 7"), "{out}");
    assert!(exists(&fleet, "fleet_events_old").await);
    let (code, out) = fleet_cli(&fleet, &["hold", "--release", "--reason", "case 7 closed"]).await;
    assert_eq!(code, 0, "{out}");

    // A witness required that never cosigned: kept.
    let (code, out) = fleet_cli(&fleet, &[&prune[..], &["--witness", &witness]].concat()).await;
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("with 1 of the witnesses' cosignatures"), "{out}");

    // A dry run says what would go, each partition after the one before, and nothing goes.
    let (code, out) = fleet_cli(&fleet, &[&prune[..], &["--dry-run"]].concat()).await;
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("would drop fleet_events_old"), "{out}");
    assert!(out.contains("would drop fleet_events_mid"), "{out}");
    assert!(out.contains(&format!("node \"a\": seq {}–{mid}, covered", old + 1)), "{out}");
    assert!(exists(&fleet, "fleet_events_old").await);

    // Then it goes, recorded.
    let (code, out) = fleet_cli(&fleet, &prune).await;
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("dropped fleet_events_old"), "{out}");
    assert!(out.contains(&format!("node \"a\": seq 1–{old}, covered by the checkpoint")), "{out}");
    assert!(out.contains("dropped fleet_events_mid"), "{out}");
    assert!(!exists(&fleet, "fleet_events_old").await);
    assert!(!exists(&fleet, "fleet_events_mid").await);
    let recorded = "SELECT first_seq * 1000000 + through_seq FROM fleet_prunes
                    WHERE node_id = 'a' AND partition_name = 'fleet_events_old'";
    assert_eq!(number(&fleet, recorded).await, 1_000_000 + old);
    let recorded = "SELECT first_seq * 1000000 + through_seq FROM fleet_prunes
                    WHERE node_id = 'a' AND partition_name = 'fleet_events_mid'";
    assert_eq!(number(&fleet, recorded).await, (old + 1) * 1_000_000 + mid);
    assert_eq!(number(&fleet, "SELECT min(seq) FROM fleet_events").await, mid + 1);
    let held = "SELECT count(*) FROM fleet_holds";
    assert_eq!(number(&fleet, held).await, 2, "both changes of the hold are kept");

    // The store verifies from the cut, and the node ships on after it.
    let verify = ["verify", "--postgres", &fleet.url(), "--node", "a"];
    let out = toolgate_async(&verify).await;
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}");
    assert!(stdout.contains(&format!("seq 1–{mid} were dropped from the store by retention")));
    decide_n(&app, 20).await;
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let head = number(&fleet, "SELECT max(seq) FROM fleet_events").await;
        let here = rusqlite::Connection::open(&app.db)
            .unwrap()
            .query_row("SELECT max(seq) FROM events", [], |r| r.get::<_, i64>(0))
            .unwrap();
        if head == here {
            break;
        }
        assert!(Instant::now() < deadline, "the store holds up to {head}, the trail {here}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let out = toolgate_async(&verify).await;
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stdout));
    assert!(fleet.alarms().await.is_empty(), "{:?}", fleet.alarms().await);
    app.stop().await;
}
