//! The archive in a local directory: a real server publishes its trail as tlog-tiles while it
//! takes calls; `toolgate archive verify` proves it without the trail, and finds a changed
//! event, a changed tile and a missing bundle; after a restart the archive resumes where it
//! stood and still verifies.

use std::path::Path;
use std::time::{Duration, Instant};

use tlog_tiles::{TileHashReader, TileReader};
use toolgate::config::{ArchiveConfig, CheckpointsConfig, Config};
use toolgate::trail::checkpoint::Checkpoint;

use crate::helpers::{request, start, toolgate};

/// A server's configuration: checkpoints every 100 events, archived to `archive`.
pub(crate) fn config(dir: &Path, key_file: &Path, archive: &Path) -> Config {
    Config {
        db: dir.join("trail.db"),
        checkpoints: CheckpointsConfig {
            key_file: Some(key_file.to_owned()),
            every_events: 100,
            every_ms: 200,
            ..CheckpointsConfig::default()
        },
        archive: ArchiveConfig {
            url: Some(format!("file://{}", archive.display())),
            ..ArchiveConfig::default()
        },
        ..Config::default()
    }
}

/// The size of the archive's checkpoint once it is at least `size` (within 20 s).
pub(crate) async fn archived(archive: &Path, size: u64) -> u64 {
    let started = Instant::now();
    loop {
        let held = std::fs::read_to_string(archive.join("checkpoint")).ok();
        let archived = held.and_then(|note| Checkpoint::read(&note).ok()).map_or(0, |c| c.size);
        if archived >= size {
            return archived;
        }
        assert!(started.elapsed() < Duration::from_secs(20), "archived {archived} of {size}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// The archive's hash tiles as a tlog-tiles client reads them (its `Tile::path` is Go sumdb's
/// `tile/<H>/<L>/…`; C2SP's drops the height, fixed at 8).
struct Tiles<'a>(&'a Path);

impl TileReader for Tiles<'_> {
    fn height(&self) -> u8 {
        8
    }

    fn read_tiles(&self, tiles: &[tlog_tiles::Tile]) -> Result<Vec<Vec<u8>>, tlog_tiles::Error> {
        let read = |t: &tlog_tiles::Tile| {
            std::fs::read(self.0.join(t.path().replacen("tile/8/", "tile/", 1)))
        };
        tiles.iter().map(|t| read(t).map_err(|_| tlog_tiles::Error::InvalidTile)).collect()
    }

    fn save_tiles(&self, _tiles: &[tlog_tiles::Tile], _data: &[Vec<u8>]) {}
}

/// Proves leaves `n` of the archive's checkpoint with the independent client: each leaf's
/// data (its event's chain hash, from the entry bundle) is in the signed tree.
fn prove_with_a_tlog_client(archive: &Path, leaves: &[u64]) {
    let note = std::fs::read_to_string(archive.join("checkpoint")).unwrap();
    let checkpoint = Checkpoint::read(&note).unwrap();
    let (size, root) = (checkpoint.size, tlog_tiles::Hash(checkpoint.root));
    let tiles = Tiles(archive);
    let hashes = TileHashReader::new(size, root, &tiles);
    for &n in leaves {
        let bundle = std::fs::read(archive.join(format!("tile/entries/{:03}", n / 256)))
            .or_else(|_| {
                let width = size - n / 256 * 256;
                std::fs::read(archive.join(format!("tile/entries/{:03}.p/{width}", n / 256)))
            })
            .unwrap();
        let at = usize::try_from(n % 256).unwrap() * 34;
        assert_eq!(&bundle[at..at + 2], &[0, 32]);
        let leaf = tlog_tiles::record_hash(&bundle[at + 2..at + 34]);
        let proof = tlog_tiles::prove_record(size, n, &hashes).unwrap();
        tlog_tiles::check_record(&proof, size, root, n, leaf).unwrap();
    }
}

/// `archive verify`, against the checkpoint in `anchor` when given.
fn verify_against(archive: &Path, key: &str, anchor: Option<&Path>) -> (i32, String) {
    let url = format!("file://{}", archive.display());
    let mut args = vec!["archive", "verify", "--url", &url, "--key", key];
    let anchor = anchor.map(|a| a.to_str().unwrap().to_owned());
    if let Some(anchor) = &anchor {
        args.extend(["--checkpoint", anchor]);
    }
    let out = toolgate(&args);
    (out.status.code().unwrap(), String::from_utf8_lossy(&out.stdout).into_owned())
}

/// Keeps the archive's checkpoint as it is now, as an auditor would keep it elsewhere.
/// Copies the archive's checkpoint to `kept` and returns its size: the archive goes on growing
/// (each checkpoint is itself an event), so a size read before the copy may already be old.
fn keep_checkpoint(archive: &Path, kept: &Path) -> u64 {
    std::fs::copy(archive.join("checkpoint"), kept).unwrap();
    Checkpoint::read(&std::fs::read_to_string(kept).unwrap()).unwrap().size
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_trail_archived_as_tiles_verifies_without_it_and_tampering_is_found() {
    let dir = tempfile::tempdir().unwrap();
    let (key_file, archive) = (dir.path().join("log.key"), dir.path().join("archive"));
    let out = toolgate(&["keygen", "--name", "toolgate/test", "--out", key_file.to_str().unwrap()]);
    let key = String::from_utf8(out.stdout).unwrap().trim().to_owned();

    let trail = tempfile::tempdir().unwrap();
    let mut app = start(config(trail.path(), &key_file, &archive), trail).await;
    for _ in 0..300 {
        app.decide(request("read")).await;
    }
    archived(&archive, 300).await;
    // Stopped, so that the archive holds still while it is read: every checkpoint is itself
    // an event, and a running server's archive goes on growing.
    let (trail, _) = app.stop().await;
    let kept = dir.path().join("kept.checkpoint");
    let size = keep_checkpoint(&archive, &kept);
    for object in ["tile/0/000", "tile/entries/000", "toolgate/events/000"] {
        assert!(archive.join(object).is_file(), "{object}");
    }
    let partial = format!("tile/0/001.p/{}", size - 256);
    assert!(archive.join(&partial).is_file(), "{partial}");
    assert!(
        archive.join(format!("tile/1/000.p/{}", size / 256)).is_file(),
        "level 1's partial tile"
    );
    let verify = |archive: &Path, key: &str| verify_against(archive, key, Some(&kept));
    let (code, said) = verify(&archive, &key);
    assert_eq!(code, 0, "{said}");
    assert!(said.contains(&format!("ok: {size} events")), "{said}");
    prove_with_a_tlog_client(&archive, &[0, 1, 255, 256, size - 1]);

    // A restart resumes from the archive's checkpoint: the full tiles it wrote are written
    // again only if they are the same.
    let mut app = start(config(trail.path(), &key_file, &archive), trail).await;
    for _ in 0..300 {
        app.decide(request("read")).await;
    }
    archived(&archive, 600).await;
    let (trail, _) = app.stop().await;
    let old = dir.path().join("old.checkpoint");
    std::fs::copy(&kept, &old).unwrap();
    let size = keep_checkpoint(&archive, &kept);
    let (code, said) = verify(&archive, &key);
    assert_eq!(code, 0, "{said}");
    assert!(said.contains(&format!("ok: {size} events")), "{said}");
    assert!(archive.join("tile/0/001").is_file(), "the tile partial before the restart, full now");
    prove_with_a_tlog_client(&archive, &[0, 300, 511, 512, size - 1]);

    // An event changed in the archive: its row no longer hashes to its leaf.
    let events = archive.join("toolgate/events/001");
    let original = std::fs::read_to_string(&events).unwrap();
    std::fs::write(&events, original.replacen(",read,", ",bash,", 1)).unwrap();
    let (code, said) = verify(&archive, &key);
    assert_eq!(code, 1, "{said}");
    assert!(said.contains("toolgate/events/001: seq"), "{said}");
    // A row whose seq is the least i64: found, not a crash.
    std::fs::write(&events, original.replacen("\r\n257,", "\r\n-9223372036854775808,", 1)).unwrap();
    let (code, said) = verify(&archive, &key);
    assert_eq!(code, 1, "{said}");
    assert!(said.contains("seq -9223372036854775808: its hash is not its leaf's data"), "{said}");
    std::fs::write(&events, original).unwrap();

    // A hash tile changed: not what the leaves make.
    let tile = archive.join("tile/0/000");
    let original = std::fs::read(&tile).unwrap();
    let mut changed = original.clone();
    changed[40] ^= 1;
    std::fs::write(&tile, &changed).unwrap();
    let (code, said) = verify(&archive, &key);
    assert_eq!(code, 1, "{said}");
    assert!(said.contains("tile/0/000: hashes other than the leaves make"), "{said}");
    std::fs::write(&tile, original).unwrap();

    // A bundle gone.
    std::fs::remove_file(archive.join("tile/entries/001")).unwrap();
    let (code, said) = verify(&archive, &key);
    assert_eq!(code, 1, "{said}");
    assert!(said.contains("tile/entries/001: missing"), "{said}");

    // Another log's key does not open the checkpoint.
    let other = dir.path().join("other.key");
    let out = toolgate(&["keygen", "--name", "toolgate/test", "--out", other.to_str().unwrap()]);
    let other = String::from_utf8(out.stdout).unwrap().trim().to_owned();
    let (code, said) = verify_against(&archive, &other, None);
    assert_eq!(code, 1, "{said}");
    assert!(said.starts_with("checkpoint: "), "{said}");
    drop(trail);
}

/// The review's attack: the archive's checkpoint swapped for an older one signed by the same
/// key. Its tree of that size is whole (the partial tiles of every publication stay), so it
/// proves an older, shorter archive: refused against any newer checkpoint the auditor has (the
/// trail's, or one kept elsewhere), and never "ok" without one.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_archive_rolled_back_to_an_older_checkpoint_is_refused_and_never_ok_alone() {
    let dir = tempfile::tempdir().unwrap();
    let (key_file, archive) = (dir.path().join("log.key"), dir.path().join("archive"));
    let out = toolgate(&["keygen", "--name", "toolgate/test", "--out", key_file.to_str().unwrap()]);
    let key = String::from_utf8(out.stdout).unwrap().trim().to_owned();
    let trail = tempfile::tempdir().unwrap();
    let db = trail.path().join("trail.db");
    let mut app = start(config(trail.path(), &key_file, &archive), trail).await;
    for _ in 0..300 {
        app.decide(request("read")).await;
    }
    archived(&archive, 300).await;
    let (old, newer) = (dir.path().join("old.checkpoint"), dir.path().join("newer.checkpoint"));
    keep_checkpoint(&archive, &old);
    for _ in 0..700 {
        app.decide(request("read")).await;
    }
    archived(&archive, 1000).await;
    let size = keep_checkpoint(&archive, &newer);
    let (_trail, _) = app.stop().await;
    assert_eq!(verify_against(&archive, &key, Some(&newer)).0, 0);

    std::fs::copy(&old, archive.join("checkpoint")).unwrap();
    let (code, said) = verify_against(&archive, &key, Some(&newer));
    assert_eq!(code, 1, "{said}");
    assert!(
        said.contains(&format!("proves {size}: the archive is rolled back or behind")),
        "{said}"
    );
    let url = format!("file://{}", archive.display());
    let against_the_trail = toolgate(&[
        "archive",
        "verify",
        "--url",
        &url,
        "--key",
        &key,
        "--db",
        db.to_str().unwrap(),
    ]);
    let said = String::from_utf8_lossy(&against_the_trail.stdout);
    assert_eq!(against_the_trail.status.code(), Some(1), "{said}");
    assert!(said.contains("rolled back or behind"), "{said}");
    let (code, said) = verify_against(&archive, &key, None);
    assert_eq!(code, 1, "{said}");
    assert!(said.starts_with("unanchored: ") && !said.contains("ok:"), "{said}");
    // An older checkpoint the archive reaches is fine: it proves the archive's start.
    keep_checkpoint(&archive, &newer);
    std::fs::copy(&newer, archive.join("checkpoint")).unwrap();
    assert_eq!(verify_against(&archive, &key, Some(&old)).0, 0);
}

/// An S3-speaking server: moto's standalone server (`moto[server]` from PyPI; scripts/test
/// installs it and names it in `TOOLGATE_TEST_S3_SERVER`) on an ephemeral port, with an empty
/// private bucket (with Object Lock enabled when `locked`); stopped when dropped.
struct S3 {
    child: std::process::Child,
    endpoint: String,
}

impl S3 {
    async fn start(bucket: &str, locked: bool) -> Self {
        let server = std::env::var("TOOLGATE_TEST_S3_SERVER").expect(
            "TOOLGATE_TEST_S3_SERVER is not set: the archive's S3 test needs moto's server; run \
             scripts/test, which installs it",
        );
        let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let child = std::process::Command::new(server)
            .args(["-H", "127.0.0.1", "-p", &port.to_string()])
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        let s3 = Self { child, endpoint: format!("http://127.0.0.1:{port}") };
        let started = Instant::now();
        loop {
            if s3.bucket(bucket, locked).await {
                return s3;
            }
            assert!(started.elapsed() < Duration::from_secs(30), "moto's server did not start");
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }
}

impl S3 {
    /// Makes a bucket; whether it was made.
    async fn bucket(&self, bucket: &str, locked: bool) -> bool {
        let make = reqwest::Client::new().put(format!("{}/{bucket}", self.endpoint));
        let make = make.header("x-amz-bucket-object-lock-enabled", locked.to_string());
        make.send().await.is_ok_and(|answer| answer.status().is_success())
    }

    /// The size of the archive's checkpoint at `prefix` in `bucket` (0: none).
    async fn archived(&self, bucket: &str, prefix: &str) -> u64 {
        let url = format!("{}/{bucket}/{prefix}/checkpoint", self.endpoint);
        let got = reqwest::Client::new().get(url).header("authorization", FAKE).send().await;
        let note = got.unwrap().text().await.unwrap();
        Checkpoint::read(&note).map_or(0, |c| c.size)
    }

    /// The keys of the objects under `prefix` in `bucket` (at most 1,000).
    async fn keys(&self, bucket: &str, prefix: &str) -> Vec<String> {
        let url = format!("{}/{bucket}?list-type=2&prefix={prefix}", self.endpoint);
        let listed = reqwest::get(url).await.unwrap().text().await.unwrap();
        listed
            .split("<Key>")
            .skip(1)
            .filter_map(|k| k.split("</Key>").next())
            .map(Into::into)
            .collect()
    }
}

impl Drop for S3 {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The real binary on the trail in `dir` with `toml` and the S3 credentials in its
/// environment, after `calls` decisions of `tool`.
async fn serve_and_decide(dir: &Path, toml: &str, calls: usize, tool: &str) -> crate::faults::Proc {
    let proc = crate::faults::Proc::start_with_env(&dir.join("trail.db"), dir, toml, &AWS).await;
    let mut gate = proc.gate().await;
    for _ in 0..calls {
        gate.decide(request(tool)).await.unwrap();
    }
    proc
}

/// Whether the archive's object `key` is one its tree of `size` leaves needs: its checkpoint,
/// and the full and partial tiles (hash tiles, entry bundles, events) of that size.
fn covered(key: &str, size: u64) -> bool {
    let Some(path) = key.split_once('/').map(|(_, path)| path) else { return false };
    if path == "checkpoint" {
        return true;
    }
    let (level, tile) = match path.split_once("tile/").map(|(_, t)| t) {
        Some(tile) if !path.starts_with("toolgate/") => tile.split_once('/').unwrap(),
        _ => ("0", path.strip_prefix("toolgate/events/").unwrap()),
    };
    let shift = if level == "entries" { 0 } else { 8 * level.parse::<u32>().unwrap() };
    let (index, width) = match tile.split_once(".p/") {
        Some((index, width)) => (index, width.parse().unwrap()),
        None => (tile, 256),
    };
    let index: u64 = index.replace(['x', '/'], "").parse().unwrap();
    let nodes = size >> shift;
    match width {
        256 => (index + 1) * 256 <= nodes,
        width => index * 256 + width == nodes,
    }
}

/// A request's authorization as moto takes it (it checks no signature), for what the tests do
/// behind toolgate's back.
const FAKE: &str = "AWS4-HMAC-SHA256 Credential=test/20261203/us-east-1/s3/aws4_request, \
                    SignedHeaders=host, Signature=0";

/// Credentials moto takes (it checks none): from the environment, as in production.
const AWS: [(&str, &str); 2] = [("AWS_ACCESS_KEY_ID", "test"), ("AWS_SECRET_ACCESS_KEY", "test")];

/// `toolgate archive <command> --url URL` with the S3 options, and its exit code and stdout.
fn s3_archive(command: &str, s3: &S3, url: &str, key: Option<&str>) -> (i32, String) {
    s3_archive_with(command, s3, url, key, &[])
}

fn s3_archive_with(
    command: &str,
    s3: &S3,
    url: &str,
    key: Option<&str>,
    extra: &[&str],
) -> (i32, String) {
    let endpoint = format!("aws_endpoint={}", s3.endpoint);
    let mut args = vec!["archive", command, "--url", url, "--option", &endpoint];
    args.extend(["--option", "aws_allow_http=true", "--option", "aws_region=us-east-1"]);
    if let Some(key) = key {
        args.extend(["--key", key]);
    }
    args.extend(extra);
    let out =
        assert_cmd::Command::cargo_bin("toolgate").unwrap().envs(AWS).args(&args).output().unwrap();
    (out.status.code().unwrap(), String::from_utf8_lossy(&out.stdout).into_owned())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_archive_in_s3_verifies_and_another_trail_cannot_overwrite_it() {
    let s3 = S3::start("toolgate-archive", false).await;
    let dir = tempfile::tempdir().unwrap();
    let key_file = dir.path().join("log.key");
    let out = toolgate(&["keygen", "--name", "toolgate/test", "--out", key_file.to_str().unwrap()]);
    let key = String::from_utf8(out.stdout).unwrap().trim().to_owned();
    let url = "s3://toolgate-archive/node-1";
    let toml = format!(
        "[checkpoints]\nkey_file = {key_file:?}\nevery_events = 100\nevery_ms = 200\n\
         [archive]\nurl = {url:?}\n\
         options = {{ aws_endpoint = {:?}, aws_allow_http = \"true\", aws_region = \"us-east-1\" }}\n",
        s3.endpoint
    );

    let first = dir.path().join("first");
    std::fs::create_dir(&first).unwrap();
    let proc = serve_and_decide(&first, &toml, 300, "read").await;
    let started = Instant::now();
    loop {
        let (code, listed) = s3_archive("list", &s3, url, None);
        let size = listed.lines().find_map(|l| l.strip_prefix("events 1 through "));
        if code == 0 && size.is_some_and(|s| s.parse::<u64>().unwrap() >= 300) {
            break;
        }
        assert!(started.elapsed() < Duration::from_secs(30), "not archived: {listed}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    drop(proc);
    // The auditor keeps the archive's checkpoint (as a witness would): what it verifies against.
    let note = format!("{}/toolgate-archive/node-1/checkpoint", s3.endpoint);
    let note = reqwest::Client::new().get(note).header("authorization", FAKE).send().await;
    let kept = dir.path().join("kept.checkpoint");
    std::fs::write(&kept, note.unwrap().bytes().await.unwrap()).unwrap();
    let kept = ["--checkpoint", kept.to_str().unwrap()];
    let (code, said) = s3_archive_with("verify", &s3, url, Some(&key), &kept);
    assert_eq!(code, 0, "{said}");

    // Someone else wrote the next full tile's bundle first (moto checks no signature): the
    // conditional write finds it, it is not what the trail holds, and the upload stops there,
    // said in the log and on /metrics until an operator moves the object aside.
    let planted = format!("{}/toolgate-archive/node-1/tile/entries/001", s3.endpoint);
    let put = reqwest::Client::new().put(&planted).header("authorization", FAKE).body(vec![0; 34]);
    assert!(put.send().await.unwrap().status().is_success());
    let side = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap();
    let watched = format!("http_listen = \"{side}\"\n{toml}");
    let proc = serve_and_decide(&first, &watched, 300, "read").await;
    let log = first.join("server.log");
    let started = Instant::now();
    while !std::fs::read_to_string(&log)
        .unwrap()
        .contains("already holds a different tile/entries/001")
    {
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "{}",
            std::fs::read_to_string(&log).unwrap()
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let metrics = format!("http://{side}/metrics");
    let refusing = || async {
        let said = reqwest::get(&metrics).await.unwrap().text().await.unwrap();
        said.lines().find_map(|l| l.strip_prefix("toolgate_archive_refusing ")).map(str::to_owned)
    };
    assert_eq!(refusing().await.as_deref(), Some("1"), "the conflict is on /metrics");
    let (_, held) = s3_archive("list", &s3, url, None);
    let size: u64 =
        held.lines().find_map(|l| l.strip_prefix("events 1 through ")).unwrap().parse().unwrap();
    assert!(size < 512, "no checkpoint past the planted tile: {held}");
    let (code, said) = s3_archive_with("verify", &s3, url, Some(&key), &kept);
    assert_eq!(code, 0, "{said}");
    // The operator's step: the planted object moved aside, the upload goes on by itself.
    let delete = reqwest::Client::new().delete(&planted).header("authorization", FAKE);
    assert!(delete.send().await.unwrap().status().is_success());
    let started = Instant::now();
    while s3.archived("toolgate-archive", "node-1").await < 512 {
        assert!(started.elapsed() < Duration::from_secs(60), "the upload did not go on");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    assert_eq!(refusing().await.as_deref(), Some("0"));
    drop(proc);
    let (_, held) = s3_archive("list", &s3, url, None);

    // Another trail, signed with the same key, pointed at the same archive: it refuses to
    // write there, and the archive stays as it was.
    let second = dir.path().join("second");
    std::fs::create_dir(&second).unwrap();
    let proc = serve_and_decide(&second, &toml, 400, "write").await;
    tokio::time::sleep(Duration::from_secs(2)).await;
    drop(proc);
    assert_eq!(s3_archive("list", &s3, url, None).1, held);
    let (code, said) = s3_archive_with("verify", &s3, url, Some(&key), &kept);
    assert_eq!(code, 0, "{said}");
    let log = std::fs::read_to_string(second.join("server.log")).unwrap();
    assert!(log.contains("not of this trail"), "{log}");

    // A secret in the options is refused: secrets come from the environment.
    for secret in ["aws_secret_access_key=x", "token=x", "sse_customer_key_base64=x"] {
        let out = toolgate(&["archive", "list", "--url", url, "--option", secret]);
        assert!(String::from_utf8_lossy(&out.stderr).contains("holds a secret"), "{secret}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_archive_with_object_lock_locks_every_object_it_writes() {
    let s3 = S3::start("toolgate-locked", true).await;
    let dir = tempfile::tempdir().unwrap();
    let key_file = dir.path().join("log.key");
    toolgate(&["keygen", "--name", "toolgate/test", "--out", key_file.to_str().unwrap()]);
    let toml = |bucket: &str| {
        format!(
            "[checkpoints]\nkey_file = {key_file:?}\nevery_events = 100\nevery_ms = 200\n\
             [archive]\nurl = \"s3://{bucket}/node-1\"\nlock_days = 30\n\
             options = {{ aws_endpoint = {:?}, aws_allow_http = \"true\", aws_region = \"us-east-1\" }}\n",
            s3.endpoint
        )
    };
    let locked = dir.path().join("locked");
    std::fs::create_dir(&locked).unwrap();
    let proc = serve_and_decide(&locked, &toml("toolgate-locked"), 300, "read").await;
    let started = Instant::now();
    let mut size = 0;
    while size < 300 {
        assert!(started.elapsed() < Duration::from_secs(30), "archived {size} events");
        tokio::time::sleep(Duration::from_millis(100)).await;
        size = s3.archived("toolgate-locked", "node-1").await;
    }
    // The archive at rest: the root checkpoint is written, then locked, in two requests, so a
    // kill between them leaves its newest version unlocked (covered by the next start's).
    // Wait until a second goes by with no new checkpoint.
    loop {
        tokio::time::sleep(Duration::from_secs(1)).await;
        let now = s3.archived("toolgate-locked", "node-1").await;
        if now == size {
            break;
        }
        assert!(started.elapsed() < Duration::from_secs(30), "archived {now} events");
        size = now;
    }
    drop(proc);
    let size = s3.archived("toolgate-locked", "node-1").await;

    // Every object the archive's checkpoint covers is locked in compliance mode for 30 days,
    // and its version cannot be deleted (one written as the server was killed may not be: no
    // checkpoint covers it yet).
    let keys: Vec<String> = s3.keys("toolgate-locked", "node-1/").await;
    let keys: Vec<String> = keys.into_iter().filter(|key| covered(key, size)).collect();
    assert!(keys.iter().any(|k| k.ends_with("tile/entries/000")), "{keys:?}");
    assert!(keys.iter().any(|k| k.ends_with("toolgate/events/000")), "{keys:?}");
    let client = reqwest::Client::new();
    let soon = chrono::Utc::now() + chrono::Duration::days(29);
    for key in &keys {
        let object = format!("{}/toolgate-locked/{key}", s3.endpoint);
        let head = client.head(&object).header("authorization", FAKE).send().await.unwrap();
        let headers = head.headers().clone();
        let header = |name| match headers.get(name) {
            Some(value) => value.to_str().unwrap().to_owned(),
            None => panic!("{key}: {}: no {name} in {headers:?}", head.status()),
        };
        assert_eq!(header("x-amz-object-lock-mode"), "COMPLIANCE", "{key}");
        let until =
            chrono::DateTime::parse_from_rfc3339(&header("x-amz-object-lock-retain-until-date"));
        assert!(until.unwrap() > soon, "{key}");
        let version = header("x-amz-version-id");
        let delete = client.delete(format!("{object}?versionId={version}"));
        let deleted = delete.header("authorization", FAKE).send().await.unwrap();
        assert_eq!(deleted.status(), reqwest::StatusCode::FORBIDDEN, "{key}");
    }

    // A bucket without Object Lock: nothing is taken as archived there.
    assert!(s3.bucket("toolgate-plain", false).await);
    let plain = dir.path().join("plain");
    std::fs::create_dir(&plain).unwrap();
    let proc = serve_and_decide(&plain, &toml("toolgate-plain"), 300, "read").await;
    let log = plain.join("server.log");
    let started = Instant::now();
    while !std::fs::read_to_string(&log).unwrap().contains("was not locked") {
        let log = std::fs::read_to_string(&log).unwrap();
        assert!(started.elapsed() < Duration::from_secs(30), "{log}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    drop(proc);
    let keys = s3.keys("toolgate-plain", "node-1/").await;
    assert!(!keys.contains(&"node-1/checkpoint".into()), "{keys:?}");

    // A local directory cannot be locked: refused at start.
    let toml = format!(
        "[checkpoints]\nkey_file = {key_file:?}\n[archive]\nurl = \"file://{}\"\nlock_days = 30\n",
        dir.path().join("local").display()
    );
    let config = dir.path().join("local.toml");
    std::fs::write(&config, toml).unwrap();
    let db = dir.path().join("local.db");
    let args = ["serve", "--listen", "127.0.0.1:0", "--config", config.to_str().unwrap()];
    let out = toolgate(&[&args[..], &["--db", db.to_str().unwrap()]].concat());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{stderr}");
    assert!(stderr.contains("Object Lock is S3's"), "{stderr}");
}
