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
    /// Serve only the Audit service, over the fleet store given with --postgres, for the
    /// auditors' tools (docs/fleet.md): no decisions, no shipping. The trail (--db) records
    /// the calls it refuses.
    #[arg(long, requires = "postgres", conflicts_with = "ingest")]
    pub audit_only: bool,
    /// Serve only the fleet's ingest service, in front of the fleet store given with
    /// --postgres (docs/fleet.md): nodes ship their trails to it, it checks and stores them.
    /// No decisions, no trail of its own.
    #[arg(long, requires = "postgres")]
    pub ingest: bool,
    /// With --audit-only or --ingest: the fleet store, `postgres://user@host/db` (an
    /// auditor's role, or the ingest service's; a password only through the environment, or
    /// in PGPASSWORD: on the command line it is warned about).
    #[arg(long, env = crate::fleet::URL_ENV, hide_env_values = true)]
    pub postgres: Option<String>,
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

/// Refuses a non-loopback address while it is not `guarded` by auth, unless told otherwise
/// (and then says so); warns when it is guarded but served as plain HTTP (`tls` false), since
/// its bearer tokens and calls then cross the network in clear.
pub(super) fn check_exposure(
    what: &str,
    addr: &str,
    (guarded, tls): (bool, bool),
    allow: bool,
) -> anyhow::Result<()> {
    if unix_path(addr).is_some() {
        return Ok(());
    }
    let loopback = addr
        .to_socket_addrs()
        .with_context(|| format!("`{addr}` is not an address to listen on ({what})"))?
        .all(|a| a.ip().is_loopback());
    if guarded {
        if !loopback && !tls {
            tracing::warn!(
                listen = addr,
                "{what} serves plain HTTP beyond loopback: its bearer tokens and calls cross the \
                 network unencrypted; configure [tls] or put a TLS proxy in front"
            );
        }
        return Ok(());
    }
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
            "refusing to listen on `{addr}` ({what}) without auth: configure [[auth.tokens]], \
             [[auth.certificates]] or mutual TLS (docs/security.md), listen on loopback, or \
             pass --insecure-allow-remote"
        ),
    }
}

/// Runs the server until SIGINT or SIGTERM.
pub async fn serve(args: ServeArgs) -> anyhow::Result<Exit> {
    let config = args.config()?;
    let allow = args.insecure_allow_remote;
    // Mutual TLS that requires a client certificate guards the gRPC port too: only holders of
    // a certificate from the configured CA get through. The ingest service takes only calls
    // with a node's token.
    let guarded = args.ingest || config.auth.enabled() || config.tls.requires_client_certificates();
    let tls = config.tls.enabled();
    check_exposure("the gRPC port", &config.listen, (guarded, tls), allow)?;
    if let Some(http) = &config.http_listen {
        let side = (config.auth.enabled(), tls && config.tls.side_port);
        check_exposure("the HTTP side port", http, side, allow)?;
        // Approving calls and reading the trail from a browser anywhere on the network with
        // no sign-in is not a mode toolgate offers, whatever --insecure-allow-remote says.
        if config.console.enabled {
            check_exposure("the console's side port", http, side, false)?;
        }
    }
    let ports = 1 + usize::from(config.http_listen.is_some());
    crate::listener::raise_open_files(config.limits.max_connections, ports);
    let listener = Listener::bind(&config.listen, config.unix_socket_mode)
        .await
        .with_context(|| format!("cannot listen on `{}`", config.listen))?;
    tracing::info!(
        listen = %listener.describe(),
        tls = config.tls.mode(),
        db = %config.db.display(),
        durability = ?config.durability,
        "toolgate starting"
    );
    if config.tls.requires_client_certificates() && !config.auth.enabled() {
        tracing::warn!(
            "mutual TLS with no [[auth.certificates]] or [[auth.tokens]]: every holder of a \
             certificate from the client CA may decide, read the trail and approve"
        );
    }
    anyhow::ensure!(
        !config.console.enabled || config.http_listen.is_some(),
        "[console] enabled: the console is served on the HTTP side port: set --http-listen \
         (or http_listen)"
    );
    let http = match &config.http_listen {
        Some(addr) => Some(
            TcpListener::bind(addr)
                .await
                .with_context(|| format!("cannot listen on `{addr}` (HTTP side port)"))?,
        ),
        None => None,
    };
    match (args.postgres.as_deref().map(super::args::postgres_url), args.audit_only, args.ingest) {
        (Some(url), true, _) => {
            let shutdown = crate::shutdown::signal();
            crate::server::run_audit_only(config, listener, http, url, shutdown).await?;
            return Ok(Exit::Ok);
        }
        (Some(url), _, true) => {
            let shutdown = crate::shutdown::signal();
            crate::server::run_ingest(config, listener, http, url, shutdown).await?;
            return Ok(Exit::Ok);
        }
        // From the environment, it may be meant for another process: a sidecar goes on.
        (Some(url), false, false) => anyhow::ensure!(
            std::env::var(crate::fleet::URL_ENV).is_ok_and(|env| env == url),
            "--postgres serves with --audit-only or --ingest"
        ),
        (None, _, _) => {}
    }
    crate::server::run(config, listener, http, crate::shutdown::signal()).await?;
    Ok(Exit::Ok)
}
