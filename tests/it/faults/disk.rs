//! A full disk, I/O errors and a read-only trail: calls are refused with UNAVAILABLE (never
//! allowed), the server stays up and reports not serving, resumes by itself once the disk takes
//! writes again, and nothing stored before is damaged. A disk filling up is warned about first
//! (`toolgate_disk_warning`, the log) and the warning ends when space returns.
//!
//! The disk is a small tmpfs mounted by the test, and unwritable files are made with
//! `chattr +i` (which also stops root): both need root. Without it the tests say so and pass
//! without checking anything.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use tonic_health::pb::health_check_response::ServingStatus;

use super::load::Load;
use super::{Proc, decisions_on_trail};
use crate::helpers::verify;

/// A tmpfs of `size`, unmounted when dropped.
struct Tmpfs {
    path: PathBuf,
}

impl Tmpfs {
    fn mount(at: &Path, size: &str) -> Option<Self> {
        std::fs::create_dir_all(at).unwrap();
        let mounted = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
            .arg(at)
            .output()
            .ok()?
            .status
            .success();
        mounted.then(|| Self { path: at.to_owned() })
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg("-l").arg(&self.path).status();
    }
}

fn chattr(flag: &str, files: &[PathBuf]) -> bool {
    Command::new("chattr").arg(flag).args(files).output().is_ok_and(|o| o.status.success())
}

/// `toolgate_disk_warning` on the side port at `side`, once the disk has been measured (within
/// 10 s).
async fn disk_warning(side: &str) -> u8 {
    let started = Instant::now();
    loop {
        let text = match reqwest::get(format!("{side}/metrics")).await {
            Ok(answer) => answer.text().await.unwrap_or_default(),
            Err(_) => String::new(),
        };
        let measured = text
            .lines()
            .any(|l| l.starts_with("toolgate_trail_bytes ") && l != "toolgate_trail_bytes 0");
        if measured
            && let Some(value) = text.lines().find_map(|l| l.strip_prefix("toolgate_disk_warning "))
        {
            return value.trim().parse().unwrap();
        }
        assert!(started.elapsed() < Duration::from_secs(10), "the disk is not measured:\n{text}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Runs load while `break_it` has broken the disk; checks what the issue asks; `mend` repairs.
async fn refused_while_broken(proc: &Proc, scenario: &str, mend: impl FnOnce()) {
    let started = Instant::now();
    let load = Load::start(proc, 4).await;
    proc.wait_for(ServingStatus::NotServing, Duration::from_secs(10)).await;
    let to_not_serving = started.elapsed();
    let broken = load.stop().await;
    assert!(broken.refused(tonic::Code::Unavailable) > 0, "{scenario}: calls were refused");
    assert_eq!(broken.allowed_unrecorded, 0);

    mend();
    let mended = Instant::now();
    let load = Load::start(proc, 2).await;
    proc.wait_for(ServingStatus::Serving, Duration::from_secs(20)).await;
    let resumed = mended.elapsed();
    let after = load.stop().await;

    let (on_trail, contiguous) = decisions_on_trail(&proc.db);
    let acked = broken.acked.iter().chain(&after.acked);
    let lost = acked.filter(|a| !on_trail.contains(a)).count();
    println!(
        "{scenario}: not serving after {to_not_serving:?}, {} calls refused UNAVAILABLE, resumed \
         {resumed:?} after the repair, {lost} acknowledged decisions lost",
        broken.refused(tonic::Code::Unavailable)
    );
    assert_eq!(lost, 0);
    assert!(contiguous);
    assert!(!after.acked.is_empty(), "{scenario}: calls are answered again");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_full_disk_refuses_calls_and_resumes_when_space_returns() {
    let dir = tempfile::tempdir().unwrap();
    let Some(disk) = Tmpfs::mount(&dir.path().join("disk"), "24m") else {
        println!("disk full: skipped, mounting a tmpfs needs root");
        return;
    };
    let db = disk.path.join("trail.db");
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let side = format!("http://127.0.0.1:{port}");
    let toml = format!("http_listen = \"127.0.0.1:{port}\"\n[disk]\ncheck_every_ms = 100\n");
    let proc = Proc::start_with_files(&db, dir.path(), &toml).await;
    assert_eq!(disk_warning(&side).await, 0, "24 MiB of tmpfs, most of it free");
    let warmup = Load::start(&proc, 2).await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    let before = warmup.stop().await;

    // Fill what is left, to the last byte: a partly free page would let a commit through.
    let ballast = disk.path.join("ballast");
    let mut file = std::fs::File::create(&ballast).unwrap();
    for chunk in [64 * 1024, 4096, 512, 1] {
        while file.write_all(&vec![0; chunk]).is_ok() {}
    }
    drop(file);
    // Under 10% free: the disk is warned about, on /metrics and in the log.
    while disk_warning(&side).await != 1 {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }

    refused_while_broken(&proc, "disk full", || std::fs::remove_file(&ballast).unwrap()).await;
    while disk_warning(&side).await != 0 {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let log = std::fs::read_to_string(dir.path().join("server.log")).unwrap();
    assert!(log.contains("the trail's disk: "), "{log}");
    let (on_trail, _) = decisions_on_trail(&db);
    assert!(before.acked.iter().all(|a| on_trail.contains(a)), "nothing stored before is lost");
    drop(proc);
    assert_eq!(verify(&db).0, 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn io_errors_refuse_calls_and_the_server_resumes_after_them() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("trail.db");
    let proc = Proc::start(&db, "").await;
    let wal = dir.path().join("trail.db-wal");
    if !chattr("+i", std::slice::from_ref(&wal)) {
        println!("I/O errors: skipped, chattr +i needs root and a filesystem that supports it");
        return;
    }
    // Every write to the WAL now fails with EPERM: SQLite reports an I/O error.
    refused_while_broken(&proc, "I/O errors", || assert!(chattr("-i", &[wal]))).await;
    drop(proc);
    assert_eq!(verify(&db).0, 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_read_only_trail_refuses_calls_and_the_server_resumes_after_it() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("trail.db");
    let proc = Proc::start(&db, "").await;
    // Not the WAL index (-shm): it is memory-mapped, and a write to an immutable mapping is a
    // SIGBUS that kills the process (docs/reliability.md).
    let files = [db.clone(), dir.path().join("trail.db-wal")];
    if !chattr("+i", &files) {
        println!(
            "read-only trail: skipped, chattr +i needs root and a filesystem that supports it"
        );
        return;
    }
    refused_while_broken(&proc, "read-only trail", || assert!(chattr("-i", &files))).await;
    drop(proc);
    assert_eq!(verify(&db).0, 0);
}

#[tokio::test]
async fn a_server_refuses_to_start_on_a_read_only_filesystem() {
    let dir = tempfile::tempdir().unwrap();
    let Some(disk) = Tmpfs::mount(&dir.path().join("ro"), "8m") else {
        println!("read-only filesystem: skipped, mounting a tmpfs needs root");
        return;
    };
    let db = disk.path.join("trail.db");
    drop(Proc::start_with_files(&db, dir.path(), "").await);
    assert!(
        Command::new("mount")
            .args(["-o", "remount,ro"])
            .arg(&disk.path)
            .status()
            .unwrap()
            .success()
    );

    let out = crate::helpers::toolgate_async(&[
        "serve",
        "--listen",
        "127.0.0.1:0",
        "--db",
        db.to_str().unwrap(),
    ])
    .await;

    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(stderr.to_lowercase().contains("read"), "the error says why: {stderr}");
}
