//! `toolgate serve`: runs the sidecar. Flags override the configuration file, which overrides the
//! defaults.

use std::net::ToSocketAddrs;
use std::path::PathBuf;

use anyhow::Context;
use clap::Args;
use tokio::net::TcpListener;

use super::Exit;
use crate::config::{Config, Durability};
use crate::listener::{Listener, unix_path};

/// Arguments of `toolgate serve`.
#[derive(Debug, Args)]
pub struct ServeArgs {
    /// TOML configuration file.
    #[arg(long, env = "TOOLGATE_CONFIG")]
    pub config: Option<PathBuf>,
    /// SQLite trail file [default: toolgate.db].
    #[arg(long, env = "TOOLGATE_DB")]
    pub db: Option<PathBuf>,
    /// Address to listen on, or `unix:/path/to.sock` [default: 127.0.0.1:50051].
    #[arg(long, env = "TOOLGATE_LISTEN")]
    pub listen: Option<String>,
    /// Cedar policy file replacing the embedded default policy.
    #[arg(long, env = "TOOLGATE_POLICY")]
    pub policy: Option<PathBuf>,
    /// Candidate Cedar policy evaluated beside the enforced one; recorded, never enforced.
    #[arg(long, env = "TOOLGATE_SHADOW_POLICY")]
    pub shadow_policy: Option<PathBuf>,
    /// Address of the HTTP side port (metrics, probes, hook endpoints) [default: off].
    #[arg(long, env = "TOOLGATE_HTTP_LISTEN")]
    pub http_listen: Option<String>,
    /// Listen on a non-loopback address although no auth is configured: anyone who reaches the
    /// port may then decide, read the trail and approve.
    #[arg(long)]
    pub insecure_allow_remote: bool,
    /// `full` (survives power loss) or `normal` (survives a crash) [default: full].
    #[arg(long, env = "TOOLGATE_DURABILITY", value_parser = parse_durability)]
    pub durability: Option<Durability>,
}

impl ServeArgs {
    /// The configuration these arguments describe.
    pub fn config(&self) -> anyhow::Result<Config> {
        let mut config = match &self.config {
            Some(path) => Config::load(path)?,
            None => Config::default(),
        };
        if let Some(db) = &self.db {
            config.db = db.clone();
        }
        if let Some(listen) = &self.listen {
            config.listen = listen.clone();
        }
        if let Some(http) = &self.http_listen {
            config.http_listen = Some(http.clone());
        }
        if let Some(policy) = &self.policy {
            config.policy = Some(policy.clone());
        }
        if let Some(shadow) = &self.shadow_policy {
            config.shadow_policy = Some(shadow.clone());
        }
        if let Some(durability) = self.durability {
            config.durability = durability;
        }
        Ok(config)
    }
}

pub(super) fn parse_durability(value: &str) -> Result<Durability, String> {
    match value {
        "full" => Ok(Durability::Full),
        "normal" => Ok(Durability::Normal),
        other => Err(format!("`{other}` is not `full` or `normal`")),
    }
}

/// Refuses a non-loopback address while auth is off, unless told otherwise (and then says so).
fn check_exposure(what: &str, addr: &str, config: &Config, allow: bool) -> anyhow::Result<()> {
    if !config.auth.tokens.is_empty() || unix_path(addr).is_some() {
        return Ok(());
    }
    let loopback = addr
        .to_socket_addrs()
        .with_context(|| format!("`{addr}` is not an address to listen on ({what})"))?
        .all(|a| a.ip().is_loopback());
    match (loopback, allow) {
        (true, _) => Ok(()),
        (false, true) => {
            tracing::warn!(
                listen = addr,
                "INSECURE: {what} listens beyond loopback with no auth: anyone who reaches it \
                 may decide, read the trail and approve (--insecure-allow-remote)"
            );
            Ok(())
        }
        (false, false) => anyhow::bail!(
            "refusing to listen on `{addr}` ({what}) without auth: configure [[auth.tokens]] \
             (docs/security.md), listen on loopback, or pass --insecure-allow-remote"
        ),
    }
}

/// Runs the server until SIGINT or SIGTERM.
pub async fn serve(args: ServeArgs) -> anyhow::Result<Exit> {
    let config = args.config()?;
    check_exposure("the gRPC port", &config.listen, &config, args.insecure_allow_remote)?;
    if let Some(http) = &config.http_listen {
        check_exposure("the HTTP side port", http, &config, args.insecure_allow_remote)?;
    }
    let listener = Listener::bind(&config.listen, config.unix_socket_mode)
        .await
        .with_context(|| format!("cannot listen on `{}`", config.listen))?;
    tracing::info!(
        listen = %listener.describe(),
        db = %config.db.display(),
        durability = ?config.durability,
        "toolgate serving"
    );
    let http = match &config.http_listen {
        Some(addr) => Some(
            TcpListener::bind(addr)
                .await
                .with_context(|| format!("cannot listen on `{addr}` (HTTP side port)"))?,
        ),
        None => None,
    };
    crate::server::run(config, listener, http, crate::shutdown::signal()).await?;
    Ok(Exit::Ok)
}
