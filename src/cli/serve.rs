//! `toolgate serve`: runs the sidecar. Flags override the configuration file, which overrides the
//! defaults.

use std::path::PathBuf;

use anyhow::Context;
use clap::Args;
use tokio::net::TcpListener;

use super::Exit;
use crate::config::{Config, Durability};

/// Arguments of `toolgate serve`.
#[derive(Debug, Args)]
pub struct ServeArgs {
    /// TOML configuration file.
    #[arg(long, env = "TOOLGATE_CONFIG")]
    pub config: Option<PathBuf>,
    /// SQLite trail file [default: toolgate.db].
    #[arg(long, env = "TOOLGATE_DB")]
    pub db: Option<PathBuf>,
    /// Address to listen on [default: 127.0.0.1:50051].
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

/// Runs the server until SIGINT or SIGTERM.
pub async fn serve(args: ServeArgs) -> anyhow::Result<Exit> {
    let config = args.config()?;
    let listener = TcpListener::bind(&config.listen)
        .await
        .with_context(|| format!("cannot listen on `{}`", config.listen))?;
    tracing::info!(
        listen = %listener.local_addr()?,
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
