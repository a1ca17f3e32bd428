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
fn config(dir: &Path, key_file: &Path, archive: &Path) -> Config {
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
async fn archived(archive: &Path, size: u64) -> u64 {
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

fn verify(archive: &Path, key: &str) -> (i32, String) {
    let url = format!("file://{}", archive.display());
    let out = toolgate(&["archive", "verify", "--url", &url, "--key", key]);
    (out.status.code().unwrap(), String::from_utf8_lossy(&out.stdout).into_owned())
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
    let size = archived(&archive, 300).await;
    for object in ["tile/0/000", "tile/entries/000", "toolgate/events/000"] {
        assert!(archive.join(object).is_file(), "{object}");
    }
    let partial = format!("tile/0/001.p/{}", size - 256);
    assert!(archive.join(&partial).is_file(), "{partial}");
    assert!(
        archive.join(format!("tile/1/000.p/{}", size / 256)).is_file(),
        "level 1's partial tile"
    );
    let (code, said) = verify(&archive, &key);
    assert_eq!(code, 0, "{said}");
    assert!(said.contains(&format!("ok: {size} events")), "{said}");
    prove_with_a_tlog_client(&archive, &[0, 1, 255, 256, size - 1]);

    // A restart resumes from the archive's checkpoint: the full tiles it wrote are written
    // again only if they are the same.
    let (trail, _) = app.stop().await;
    let mut app = start(config(trail.path(), &key_file, &archive), trail).await;
    for _ in 0..300 {
        app.decide(request("read")).await;
    }
    let size = archived(&archive, 600).await;
    let (trail, _) = app.stop().await;
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
    assert_eq!(code, 2, "{said}");
    assert!(said.contains("toolgate/events/001: seq"), "{said}");
    std::fs::write(&events, original).unwrap();

    // A hash tile changed: not what the leaves make.
    let tile = archive.join("tile/0/000");
    let original = std::fs::read(&tile).unwrap();
    let mut changed = original.clone();
    changed[40] ^= 1;
    std::fs::write(&tile, &changed).unwrap();
    let (code, said) = verify(&archive, &key);
    assert_eq!(code, 2, "{said}");
    assert!(said.contains("tile/0/000: hashes other than the leaves make"), "{said}");
    std::fs::write(&tile, original).unwrap();

    // A bundle gone.
    std::fs::remove_file(archive.join("tile/entries/001")).unwrap();
    let (code, said) = verify(&archive, &key);
    assert_eq!(code, 2, "{said}");
    assert!(said.contains("tile/entries/001: missing"), "{said}");

    // Another log's key does not open the checkpoint.
    let other = dir.path().join("other.key");
    let out = toolgate(&["keygen", "--name", "toolgate/test", "--out", other.to_str().unwrap()]);
    let other = String::from_utf8(out.stdout).unwrap().trim().to_owned();
    let (code, said) = verify(&archive, &other);
    assert_eq!(code, 2, "{said}");
    assert!(said.starts_with("checkpoint: "), "{said}");
    drop(trail);
}
