//! A `toolgate serve` child process for the benchmark, so that the server's memory is its own
//! and the load generator's is not counted in it.

use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use tokio::process::{Child, Command};
use tonic::transport::Channel;
use tonic_health::pb::HealthCheckRequest;
use tonic_health::pb::health_check_response::ServingStatus;
use tonic_health::pb::health_client::HealthClient;

use crate::config::Durability;

/// A running server child; killed when dropped.
#[derive(Debug)]
pub struct ServerProcess {
    child: Child,
    /// `http://127.0.0.1:PORT`.
    pub url: String,
}

impl ServerProcess {
    /// Starts `toolgate serve` on `db` and waits until it serves.
    pub async fn start(db: &Path, durability: Durability) -> std::io::Result<Self> {
        Self::start_with(db, durability, None).await
    }

    /// The same, with a configuration file.
    pub async fn start_with(
        db: &Path,
        durability: Durability,
        config: Option<&Path>,
    ) -> std::io::Result<Self> {
        let port = std::net::TcpListener::bind("127.0.0.1:0")?.local_addr()?.port();
        let url = format!("http://127.0.0.1:{port}");
        let durability = match durability {
            Durability::Full => "full",
            Durability::Normal => "normal",
        };
        let mut command = Command::new(std::env::current_exe()?);
        command.args([
            "serve",
            "--listen",
            &format!("127.0.0.1:{port}"),
            "--durability",
            durability,
        ]);
        if let Some(config) = config {
            command.arg("--config").arg(config);
        }
        let child = command
            .arg("--db")
            .arg(db)
            .env("RUST_LOG", "warn")
            .stdout(Stdio::null())
            .kill_on_drop(true)
            .spawn()?;
        let server = Self { child, url };
        server.wait_until_serving().await?;
        Ok(server)
    }

    async fn wait_until_serving(&self) -> std::io::Result<()> {
        for _ in 0..1000 {
            let endpoint = Channel::from_shared(self.url.clone())
                .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidInput, e))?;
            if let Ok(channel) = endpoint.connect().await {
                let mut health = HealthClient::new(channel);
                let ask = HealthCheckRequest { service: "toolgate.v1.Gate".into() };
                if let Ok(answer) = health.check(ask).await
                    && answer.into_inner().status() == ServingStatus::Serving
                {
                    return Ok(());
                }
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        Err(std::io::Error::other("the server did not start serving within 20 s"))
    }

    /// The CPU time the server has used so far, user and system, in seconds, from `/proc`
    /// (Linux only; its clock ticks are 100 a second there).
    pub fn cpu_seconds(&self) -> Option<f64> {
        let pid = self.child.id()?;
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
        // The fields after the command's closing parenthesis; utime and stime are 14 and 15.
        let fields: Vec<&str> = stat.rsplit_once(')')?.1.split_whitespace().collect();
        let ticks = |i: usize| fields.get(i)?.parse::<u64>().ok();
        Some((ticks(11)? + ticks(12)?) as f64 / 100.0)
    }

    /// Resident memory now and at its peak, in KiB, from `/proc` (Linux only).
    pub fn memory_kib(&self) -> Option<(u64, u64)> {
        let pid = self.child.id()?;
        let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
        let field = |name: &str| {
            status
                .lines()
                .find(|l| l.starts_with(name))?
                .split_whitespace()
                .nth(1)?
                .parse::<u64>()
                .ok()
        };
        Some((field("VmRSS:")?, field("VmHWM:")?))
    }

    /// Stops the server.
    pub async fn stop(mut self) {
        let _ = self.child.kill().await;
    }
}
