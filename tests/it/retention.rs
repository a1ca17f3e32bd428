//! Retention against a real server and a local-directory archive: old events leave the file
//! once archived and verified there and signed; the rest verifies alone and, with the archive,
//! as one history; a legal hold stops pruning; an archive that does not hold the events as the
//! trail does stops it too; `archive get` reads pruned events back, and every read (query,
//! proofs, an export that proves itself) reaches them through the archive.

use std::path::Path;
use std::time::{Duration, Instant};

use rusqlite::{Connection, OpenFlags};
use toolgate::config::{Config, RetentionConfig};
use toolgate::proto::audit_client::AuditClient;
use toolgate::proto::{
    CheckpointRequest, ConsistencyProofRequest, Filter, InclusionProofRequest, QueryRequest,
    TlogProofRequest,
};
use toolgate::trail::checkpoint::Checkpoint;
use toolgate::trail::{Hash, verify_consistency, verify_inclusion};

use crate::helpers::{request, start, toolgate};

/// One second, in days.
const SECOND: f64 = 1.0 / 86_400.0;

/// Checkpoints every 100 events, archived to `archive`, events older than a second pruned in
/// segments of 100 or more (unless `hold`).
fn config(dir: &Path, key_file: &Path, archive: &Path, hold: bool) -> Config {
    Config {
        retention: RetentionConfig {
            max_age_days: Some(SECOND),
            segment_events: 100,
            legal_hold: hold,
            check_every_ms: 100,
            min_age_minutes: 0,
            ..RetentionConfig::default()
        },
        ..crate::archive::config(dir, key_file, archive)
    }
}

pub(crate) fn read(db: &Path) -> Connection {
    Connection::open_with_flags(db, OpenFlags::SQLITE_OPEN_READ_ONLY).unwrap()
}

/// The last seq pruned (0: none) and the first seq the file holds.
pub(crate) fn pruned(db: &Path) -> (i64, i64) {
    let conn = read(db);
    let through = conn.query_row("SELECT coalesce(max(through), 0) FROM pruned", [], |r| r.get(0));
    let first = conn.query_row("SELECT min(seq) FROM events", [], |r| r.get(0));
    (through.unwrap(), first.unwrap())
}

/// Waits (20 s at most) until at least `events` are pruned and their rows deleted.
async fn pruned_at_least(db: &Path, events: i64) -> i64 {
    let started = Instant::now();
    loop {
        let (through, first) = pruned(db);
        if through >= events && first == through + 1 {
            return through;
        }
        assert!(started.elapsed() < Duration::from_secs(20), "pruned through {through}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

fn keygen(dir: &Path) -> (std::path::PathBuf, String) {
    let key_file = dir.join("log.key");
    let out = toolgate(&["keygen", "--name", "toolgate/test", "--out", key_file.to_str().unwrap()]);
    (key_file, String::from_utf8(out.stdout).unwrap().trim().to_owned())
}

fn run(args: &[&str]) -> (i32, String) {
    let out = toolgate(args);
    let said = String::from_utf8_lossy(&out.stdout).into_owned();
    (out.status.code().unwrap(), said + &String::from_utf8_lossy(&out.stderr))
}

/// A server pruning its trail into a local-directory archive, and what it was set up with.
struct Pruning {
    dir: tempfile::TempDir,
    key_file: std::path::PathBuf,
    /// The log's verifier key.
    key: String,
    archive: std::path::PathBuf,
    url: String,
    app: crate::helpers::TestApp,
}

/// A server that took 600 decisions and pruned at least 300 events.
async fn pruning_600() -> Pruning {
    let dir = tempfile::tempdir().unwrap();
    let (key_file, key) = keygen(dir.path());
    let archive = dir.path().join("archive");
    let url = format!("file://{}", archive.display());
    let trail = tempfile::tempdir().unwrap();
    let mut app = start(config(trail.path(), &key_file, &archive, false), trail).await;
    for _ in 0..600 {
        app.decide(request("read")).await;
    }
    pruned_at_least(&app.db, 300).await;
    Pruning { dir, key_file, key, archive, url, app }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn old_events_leave_the_file_once_archived_and_the_rest_verifies_as_one_history() {
    let Pruning { dir, key_file, key, archive, url, mut app } = pruning_600().await;
    // Decisions are answered (and recorded) while and after the file is pruned.
    for _ in 0..50 {
        app.decide(request("read")).await;
    }
    // A proof of an event kept is given. The last event: a prune always ends before it.
    let mut audit = AuditClient::new(app.channel.clone());
    let head: i64 =
        read(&app.db).query_row("SELECT max(seq) FROM events", [], |r| r.get(0)).unwrap();
    let kept = InclusionProofRequest { seq: head.unsigned_abs(), tree_size: 0 };
    audit.inclusion_proof(kept).await.unwrap();
    let db = app.db.clone();
    let (_dir, _) = app.stop().await;
    let (through, _) = pruned(&db);

    // What is left: the prune's event, the frontier of the tree, nothing below.
    let conn = read(&db);
    let (kind, recorded): (String, String) = conn
        .query_row(
            "SELECT kind, request FROM events WHERE kind = 'prune' ORDER BY seq DESC",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    assert_eq!(kind, "prune");
    assert!(recorded.contains(&format!("\"through\":{through}")), "{recorded}");
    let first_kept: String =
        conn.query_row("SELECT kind FROM events ORDER BY seq LIMIT 1", [], |r| r.get(0)).unwrap();
    assert_eq!(first_kept, "checkpoint", "a prune ends where a signed checkpoint begins");
    let old_nodes: i64 = conn
        .query_row("SELECT count(*) FROM tree_nodes WHERE leaf < ?1", [through], |r| r.get(0))
        .unwrap();
    // The frontier's, and one per 256 leaves (the levels of the archive's hash tiles).
    assert!(old_nodes <= 64 + through / 255, "{old_nodes} nodes of pruned leaves kept");
    drop(conn);

    // The file alone verifies from the first event it keeps, and says where the rest is.
    let db_arg = db.to_str().unwrap();
    let (code, said) = run(&["verify", "--db", db_arg, "--key", &key]);
    assert_eq!(code, 0, "{said}");
    assert!(said.contains(&format!("seq 1–{through} were pruned")), "{said}");
    // With the archive: one history, each part named.
    let (code, said) = run(&["verify", "--db", db_arg, "--key", &key, "--archive", &url]);
    assert_eq!(code, 0, "{said}");
    assert!(said.contains(&format!("seq 1–{through}: in the archive")), "{said}");

    // Pruned events read back from the archive, as an export that verifies.
    let (code, csv) = run(&["archive", "get", "--url", &url, "--from", "1", "--to", "10"]);
    assert_eq!(code, 0, "{csv}");
    // Ten rows (a checkpoint's note among them spans lines inside its quotes).
    let rows = csv::Reader::from_reader(csv.as_bytes()).records().count();
    assert_eq!(rows, 10, "{csv}");
    let got = dir.path().join("got.csv");
    std::fs::write(&got, &csv).unwrap();
    let (code, said) = run(&["verify", "--csv", got.to_str().unwrap()]);
    assert_eq!(code, 0, "{said}");

    // Without its archive, a server refuses a proof of a pruned event, saying why.
    let bare = tempfile::tempdir().unwrap();
    std::fs::copy(&db, bare.path().join("trail.db")).unwrap();
    let unarchived = Config { db: bare.path().join("trail.db"), ..Config::default() };
    let app = start(unarchived, bare).await;
    let mut audit = AuditClient::new(app.channel.clone());
    let refused =
        audit.inclusion_proof(InclusionProofRequest { seq: 1, tree_size: 0 }).await.unwrap_err();
    assert_eq!(refused.code(), tonic::Code::FailedPrecondition, "{refused:?}");
    assert!(refused.message().contains("were pruned from this trail"), "{refused:?}");
    app.stop().await;

    // The server starts again on the pruned file, goes on chaining, and it all verifies.
    let trail = tempfile::tempdir().unwrap();
    std::fs::copy(&db, trail.path().join("trail.db")).unwrap();
    let mut app = start(config(trail.path(), &key_file, &archive, true), trail).await;
    for _ in 0..20 {
        app.decide(request("read")).await;
    }
    let db = app.db.clone();
    let (_trail, _) = app.stop().await;
    let (code, said) =
        run(&["verify", "--db", db.to_str().unwrap(), "--key", &key, "--archive", &url]);
    assert_eq!(code, 0, "{said}");

    // An archived event changed: the joined verification names the archive.
    let events = archive.join("toolgate/events/000");
    let text = std::fs::read_to_string(&events).unwrap();
    std::fs::write(&events, text.replacen("read", "reed", 1)).unwrap();
    let (code, said) =
        run(&["verify", "--db", db.to_str().unwrap(), "--key", &key, "--archive", &url]);
    assert_eq!(code, 1, "{said}");
    assert!(said.contains("BROKEN archive: toolgate/events/000"), "{said}");
}

/// A server under a legal hold that took 400 decisions, its key file and its directory (the
/// archive in it).
async fn held_with_400() -> (tempfile::TempDir, std::path::PathBuf, crate::helpers::TestApp) {
    let dir = tempfile::tempdir().unwrap();
    let (key_file, _) = keygen(dir.path());
    let archive = dir.path().join("archive");
    let trail = tempfile::tempdir().unwrap();
    let mut app = start(config(trail.path(), &key_file, &archive, true), trail).await;
    for _ in 0..400 {
        app.decide(request("read")).await;
    }
    (dir, key_file, app)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn nothing_younger_than_the_minimum_age_is_pruned_however_full_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let (key_file, _) = keygen(dir.path());
    let archive = dir.path().join("archive");
    let trail = tempfile::tempdir().unwrap();
    let mut config = config(trail.path(), &key_file, &archive, false);
    // Every rule presses, but the default minimum age (an hour) keeps it all.
    config.retention.max_bytes = Some(1);
    config.retention.min_age_minutes = RetentionConfig::default().min_age_minutes;
    let mut app = start(config, trail).await;
    for _ in 0..400 {
        app.decide(request("read")).await;
    }
    crate::archive::archived(&archive, 400).await;
    tokio::time::sleep(Duration::from_secs(2)).await;
    assert_eq!(pruned(&app.db), (0, 1), "pruned events younger than an hour");
    app.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_legal_hold_stops_pruning_and_lifting_it_lets_it_go_on() {
    let (dir, key_file, app) = held_with_400().await;
    let archive = dir.path().join("archive");
    // Long enough for every rule but the hold: old, archived, in segments of 100.
    tokio::time::sleep(Duration::from_secs(3)).await;
    assert_eq!(pruned(&app.db), (0, 1), "nothing is pruned under a legal hold");
    let (trail, db) = app.stop().await;
    let mut app = start(config(trail.path(), &key_file, &archive, false), trail).await;
    app.decide(request("read")).await;
    pruned_at_least(&db, 300).await;
    app.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn nothing_leaves_the_file_that_the_archive_does_not_hold_as_the_trail_does() {
    // Archived under a hold, then an archived event is changed behind the server's back.
    let (dir, key_file, app) = held_with_400().await;
    let archive = dir.path().join("archive");
    crate::archive::archived(&archive, 400).await;
    let (trail, db) = app.stop().await;
    let events = archive.join("toolgate/events/000");
    let text = std::fs::read_to_string(&events).unwrap();
    std::fs::write(&events, text.replacen("read", "reed", 1)).unwrap();
    let mut app = start(config(trail.path(), &key_file, &archive, false), trail).await;
    app.decide(request("read")).await;
    tokio::time::sleep(Duration::from_secs(3)).await;
    assert_eq!(pruned(&db), (0, 1), "pruned what the archive holds otherwise");
    app.stop().await;
}

/// Every seq a query answers, paging with `page_size` in the order asked.
async fn seqs(
    audit: &mut AuditClient<tonic::transport::Channel>,
    filter: Option<Filter>,
    newest_first: bool,
) -> Vec<u64> {
    let (mut seqs, mut page_token) = (Vec::new(), String::new());
    loop {
        let ask = QueryRequest { filter: filter.clone(), page_size: 97, page_token, newest_first };
        let page = audit.query(ask).await.unwrap().into_inner();
        seqs.extend(page.events.iter().map(|e| e.seq));
        if page.next_page_token.is_empty() {
            return seqs;
        }
        page_token = page.next_page_token;
    }
}

fn hash(bytes: &[u8]) -> Hash {
    bytes.try_into().unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_read_reaches_what_a_prune_took_through_the_archive() {
    let Pruning { dir, key_file, key, archive, url, app } = pruning_600().await;
    let through = pruned(&app.db).0.unsigned_abs();
    let mut audit = AuditClient::new(app.channel.clone());

    // Queries page across the cut in both orders, as if nothing had left the file.
    let up = seqs(&mut audit, None, false).await;
    assert!(up.len() as u64 > through + 100, "{} events, pruned through {through}", up.len());
    assert_eq!(up, (1..=up.len() as u64).collect::<Vec<_>>());
    let mut down = seqs(&mut audit, None, true).await;
    down.retain(|&seq| seq <= *up.last().unwrap());
    down.reverse();
    assert_eq!(down, up);
    let decisions = Filter { kind: "decision".into(), ..Filter::default() };
    let decided = seqs(&mut audit, Some(decisions), false).await;
    assert!(decided.len() >= 600 && decided.iter().any(|&seq| seq <= through), "{decided:?}");

    // A pruned event's proofs, against the latest signed checkpoint.
    let latest = audit.checkpoint(CheckpointRequest::default()).await.unwrap().into_inner();
    let checkpoint = Checkpoint::read(&latest.note).unwrap();
    let size = checkpoint.size;
    assert!(size > through, "{size}");
    for seq in [1, through / 2, through] {
        let ask = InclusionProofRequest { seq, tree_size: size };
        let proof = audit.inclusion_proof(ask).await.unwrap().into_inner();
        let path: Vec<Hash> = proof.hashes.iter().map(|h| hash(h)).collect();
        assert_eq!(hash(&proof.root), checkpoint.root);
        let leaf = hash(&proof.leaf_hash);
        assert!(verify_inclusion(&leaf, seq - 1, size, &path, &checkpoint.root), "{seq}");
    }
    for old in [1, 77, 256, through] {
        let ask = ConsistencyProofRequest { old_size: old, new_size: size };
        let proof = audit.consistency_proof(ask).await.unwrap().into_inner();
        let path: Vec<Hash> = proof.hashes.iter().map(|h| hash(h)).collect();
        let old_root = hash(&proof.old_root);
        assert!(verify_consistency(old, size, &old_root, &checkpoint.root, &path), "{old}");
    }
    // A pruned event's offline proof, from the server and from the file and the archive: the
    // event itself is read back from the archive, and the proof verifies alone.
    let ask = TlogProofRequest { seq: 1, tree_size: size };
    let by_server = audit.tlog_proof(ask).await.unwrap().into_inner().proof;
    let (_trail, db) = app.stop().await;
    let bundle = dir.path().join("first.tlog-proof");
    let (db_arg, size_arg) = (db.to_str().unwrap(), size.to_string());
    let args = ["proof", "1", "--db", db_arg, "--archive", &url, "--size", &size_arg];
    let (code, said) = run(&[&args[..], &["-o", bundle.to_str().unwrap()]].concat());
    assert_eq!(code, 0, "{said}");
    assert_eq!(std::fs::read_to_string(&bundle).unwrap(), by_server);
    let (code, said) = run(&["verify", "--proof", bundle.to_str().unwrap(), "--key", &key]);
    assert_eq!(code, 0, "{said}");
    assert!(said.starts_with("proven: seq 1 (policy_loaded)"), "{said}");
    let (code, said) = run(&["proof", "1", "--db", db_arg, "--size", &size_arg]);
    assert_ne!(code, 0, "without the archive the pruned event is not there: {said}");
    assert!(said.contains("pruned"), "{said}");

    // An export of the whole trail, read from the file and the archive, proves every row.
    let (csv, manifest, proofs) =
        (dir.path().join("t.csv"), dir.path().join("t.json"), dir.path().join("t.proofs"));
    let (code, said) = run(&[
        "export",
        "--db",
        db.to_str().unwrap(),
        "--archive",
        &url,
        "--output",
        csv.to_str().unwrap(),
        "--manifest",
        manifest.to_str().unwrap(),
        "--proofs",
        proofs.to_str().unwrap(),
        "--sign-key",
        key_file.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{said}");
    let head: i64 = read(&db).query_row("SELECT max(seq) FROM events", [], |r| r.get(0)).unwrap();
    let written: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&manifest).unwrap()).unwrap();
    assert_eq!(written["first_seq"], 1, "{written}");
    assert_eq!((written["rows"].as_i64(), written["last_seq"].as_i64()), (Some(head), Some(head)));
    let (code, said) = crate::export_proofs::verify(&csv, &manifest, &key);
    assert_eq!(code, Some(0), "{said}");
    assert!(said.contains("rows proven in the checkpoint's tree"), "{said}");
    // Without the archive, a query of the file starts where the file does (the last prune's
    // cut: the server went on pruning while it was read).
    let (code, said) = run(&["query", "--db", db.to_str().unwrap(), "--json"]);
    assert_eq!(code, 0, "{said}");
    let first = said.lines().next().unwrap_or_default();
    assert!(first.contains(&format!("\"seq\":{}", pruned(&db).0 + 1)), "{first}");

    // An archived event changed: a read through the archive refuses it, naming the object.
    let events = archive.join("toolgate/events/000");
    let text = std::fs::read_to_string(&events).unwrap();
    std::fs::write(&events, text.replacen("read", "reed", 1)).unwrap();
    let (code, said) = run(&["query", "--db", db.to_str().unwrap(), "--archive", &url, "--json"]);
    assert_ne!(code, 0, "{said}");
    assert!(said.contains("toolgate/events/000"), "{said}");
}
