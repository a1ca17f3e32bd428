//! The fault suite: the real server, as a child process, broken on purpose — killed, its disk
//! filled, its files made unwritable, its commits slowed, flooded, stopped under load — and the
//! trail checked afterwards. Each scenario prints its figure. The short versions run with the
//! other tests; the long ones are `#[ignore]`d:
//!
//! ```sh
//! cargo test --release --test it faults -- --ignored --nocapture --test-threads 1
//! ```
//!
//! docs/reliability.md lists the guarantees, these tests and the last figures.

mod crash;
mod disk;
mod flood;
mod load;
mod prune;
mod shutdown;
mod slow;
mod soak;
mod wal;

use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use tonic::transport::Channel;
use tonic_health::pb::HealthCheckRequest;
use tonic_health::pb::health_check_response::ServingStatus;
use tonic_health::pb::health_client::HealthClient;
use toolgate::proto::gate_client::GateClient;

/// A `toolgate serve` child process on a trail in `dir`.
pub struct Proc {
    child: Child,
    pub url: String,
    pub db: PathBuf,
    /// Where its configuration and log are.
    files: PathBuf,
}

impl Proc {
    /// Starts the server with the trail `db` and extra configuration `toml`, and waits until
    /// its gate serves.
    pub async fn start(db: &Path, toml: &str) -> Self {
        Self::start_with_files(db, db.parent().unwrap(), toml).await
    }

    /// Like [`Self::start`], on a slow disk: every commit waits `delay_ms` first (the writer's
    /// test hook, `TOOLGATE_FAULT_COMMIT_DELAY_MS`).
    pub async fn start_slow(db: &Path, toml: &str, delay_ms: u64) -> Self {
        Self::spawn(db, db.parent().unwrap(), toml, delay_ms, &[]).await
    }

    /// Like [`Self::start`], with the configuration file and the log in `dir`.
    pub async fn start_with_files(db: &Path, dir: &Path, toml: &str) -> Self {
        Self::spawn(db, dir, toml, 0, &[]).await
    }

    /// Like [`Self::start_with_files`], with `env` in the server's environment.
    pub async fn start_with_env(db: &Path, dir: &Path, toml: &str, env: &[(&str, &str)]) -> Self {
        Self::spawn(db, dir, toml, 0, env).await
    }

    async fn spawn(db: &Path, dir: &Path, toml: &str, delay_ms: u64, env: &[(&str, &str)]) -> Self {
        let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let config = dir.join("toolgate.toml");
        std::fs::write(&config, toml).unwrap();
        let log = std::fs::File::options()
            .create(true)
            .append(true)
            .open(dir.join("server.log"))
            .unwrap();
        let child = Command::new(assert_cmd::cargo::cargo_bin!("toolgate"))
            .args(["serve", "--listen", &format!("127.0.0.1:{port}"), "--config"])
            .arg(&config)
            .arg("--db")
            .arg(db)
            .env("RUST_LOG", "warn")
            .env("TOOLGATE_FAULT_COMMIT_DELAY_MS", delay_ms.to_string())
            .envs(env.iter().copied())
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .unwrap();
        let url = format!("http://127.0.0.1:{port}");
        let proc = Self { child, url, db: db.to_owned(), files: dir.to_owned() };
        proc.wait_for(ServingStatus::Serving, Duration::from_secs(30)).await;
        proc
    }

    pub async fn channel(&self) -> Channel {
        Channel::from_shared(self.url.clone()).unwrap().connect().await.unwrap()
    }

    pub async fn gate(&self) -> GateClient<Channel> {
        GateClient::new(self.channel().await)
    }

    /// The gate's health status, or `None` when the server does not answer.
    pub async fn health(&self) -> Option<ServingStatus> {
        let channel = Channel::from_shared(self.url.clone()).unwrap().connect().await.ok()?;
        let ask = HealthCheckRequest { service: "toolgate.v1.Gate".into() };
        let answer = HealthClient::new(channel).check(ask).await.ok()?;
        Some(answer.into_inner().status())
    }

    /// Polls until the gate reports `status`; panics after `limit`.
    pub async fn wait_for(&self, status: ServingStatus, limit: Duration) {
        let started = Instant::now();
        while self.health().await != Some(status) {
            if started.elapsed() > limit {
                let log = self.files.join("server.log");
                let log = std::fs::read_to_string(log).unwrap_or_default();
                panic!("the gate did not report {status:?} within {limit:?}; server log:\n{log}");
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    pub fn kill9(&mut self) {
        self.child.kill().unwrap();
        self.child.wait().unwrap();
    }

    pub fn sigterm(&self) {
        let pid = self.child.id().to_string();
        assert!(Command::new("kill").args(["-TERM", &pid]).status().unwrap().success());
    }

    /// Waits up to `limit` for the process to exit.
    pub fn exited_within(&mut self, limit: Duration) -> Option<ExitStatus> {
        let started = Instant::now();
        while started.elapsed() < limit {
            if let Some(status) = self.child.try_wait().unwrap() {
                return Some(status);
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        None
    }

    /// Resident memory in KiB.
    pub fn rss_kib(&self) -> u64 {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id())).unwrap();
        let line = status.lines().find(|l| l.starts_with("VmRSS:")).unwrap();
        line.split_whitespace().nth(1).unwrap().parse().unwrap()
    }

    /// Open file descriptors.
    pub fn fds(&self) -> usize {
        std::fs::read_dir(format!("/proc/{}/fd", self.child.id())).unwrap().count()
    }
}

impl Drop for Proc {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// What the trail holds, read from the file: `(seq, decision_id)` of every decision, and
/// whether `seq` runs from 1 without a gap.
pub fn decisions_on_trail(db: &Path) -> (Vec<(i64, String)>, bool) {
    let conn = rusqlite::Connection::open(db).unwrap();
    let (count, max): (i64, Option<i64>) = conn
        .query_row("SELECT count(*), max(seq) FROM events", [], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap();
    let mut stmt = conn
        .prepare("SELECT seq, decision_id FROM events WHERE kind = 'decision' ORDER BY seq")
        .unwrap();
    let rows =
        stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?))).unwrap().map(Result::unwrap).collect();
    (rows, max.unwrap_or(0) == count)
}

/// A random number below `bound`, without a dependency for it.
pub fn random_below(bound: u64) -> u64 {
    use std::hash::{BuildHasher, RandomState};
    RandomState::new().hash_one(Instant::now()) % bound.max(1)
}
