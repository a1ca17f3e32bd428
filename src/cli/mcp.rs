//! `toolgate mcp`: the MCP gateway (docs/mcp.md). The MCP client launches toolgate as its
//! server, and toolgate the real server as its child; every `tools/call` is decided and
//! recorded, by a running sidecar (`--server`) or by one embedded in the gateway.

use std::path::PathBuf;

use anyhow::Context;
use clap::Args;

use super::Exit;
use super::remote::{Bearer, endpoint};
use super::serve::check_exposure;
use crate::auth::Auth;
use crate::config::Config;
use crate::listener::Listener;
use crate::mcp::{Caller, Ended, Proxy, UpstreamGate};
use crate::sidecar::{Sidecar, conn};

/// Arguments of `toolgate mcp`.
#[derive(Debug, Args)]
pub struct McpArgs {
    /// The server's name: the `<server>` in the tool names policies see,
    /// `mcp__<server>__<tool>`.
    #[arg(long, default_value = "server")]
    pub name: String,
    /// TOML configuration file (its `[mcp]` section, and the embedded sidecar's settings).
    #[arg(long, env = "TOOLGATE_CONFIG")]
    pub config: Option<PathBuf>,
    /// Embedded sidecar: the SQLite trail file [default: toolgate.db].
    #[arg(long, env = "TOOLGATE_DB", conflicts_with = "server")]
    pub db: Option<PathBuf>,
    /// Embedded sidecar: a Cedar policy file replacing the embedded default policy.
    #[arg(long, env = "TOOLGATE_POLICY", conflicts_with = "server")]
    pub policy: Option<PathBuf>,
    /// Embedded sidecar: where its gRPC services listen, for `toolgate approvals` and the
    /// auditors' commands [default: `unix:` and the trail's path with `.sock` added].
    #[arg(long, conflicts_with = "server")]
    pub grpc_listen: Option<String>,
    /// A running sidecar to decide and record through, `host:port`, `http(s)://host:port` or
    /// `unix:/path/to.sock`, instead of an embedded one: many gateways on one host then share
    /// one trail and one writer.
    #[arg(long, env = "TOOLGATE_SERVER")]
    pub server: Option<String>,
    /// The bearer token for `--server`, when its auth is on (from the environment, so that it
    /// stays out of process listings).
    #[arg(long = "token-env", default_value = "TOOLGATE_TOKEN")]
    pub token_env: String,
    /// The session the calls are recorded under [default: `mcp-` and a fresh UUID].
    #[arg(long)]
    pub session: Option<String>,
    /// Streamable HTTP: where MCP clients connect (the endpoint is `/mcp`; the address is
    /// printed on stdout). Beyond loopback only with `[[auth.tokens]]` in the configuration.
    #[arg(long, requires = "upstream")]
    pub listen: Option<String>,
    /// Streamable HTTP: the remote MCP server's endpoint, `http://host:port/mcp`.
    #[arg(long, requires = "listen")]
    pub upstream: Option<String>,
    /// Over stdio: the MCP server's command and its arguments, after `--`.
    #[arg(last = true, required_unless_present = "upstream", conflicts_with = "upstream")]
    pub command: Vec<String>,
}

/// Runs the gateway until the client or the server ends.
pub async fn mcp(args: McpArgs) -> anyhow::Result<Exit> {
    let mut config = configured(&args)?;
    let caller = Caller {
        session: args.session.clone().unwrap_or_else(|| format!("mcp-{}", uuid::Uuid::now_v7())),
        actor: config.mcp.actor.clone(),
    };
    let grace = std::time::Duration::from_millis(config.mcp.exit_grace_ms);
    let (mcp, limits) = (config.mcp.clone(), config.limits.clone());
    let front = match (&args.listen, &args.upstream) {
        (Some(listen), Some(upstream)) => Some(front(&mut config, listen, upstream).await?),
        _ => None,
    };
    let (sidecar, own, embedded) = connect(&args, config).await?;
    let gate = UpstreamGate::new(sidecar, own, mcp, &args.name);
    let relay = async {
        match front {
            Some(front) => {
                let proxy =
                    Proxy::new(gate, front.upstream, (front.auth, front.resource), caller.session);
                crate::mcp::serve(front.listener, proxy, &limits, crate::shutdown::signal())
                    .await?;
                Ok(Ended::ClientLeft)
            }
            None => {
                let (input, output) = (tokio::io::stdin(), tokio::io::stdout());
                let stopping = crate::shutdown::signal();
                let relayed =
                    crate::mcp::relay(gate, caller, &args.command, grace, input, output, stopping);
                Ok(relayed.await?)
            }
        }
    };
    Ok(match beside(relay, embedded).await? {
        Ended::ClientLeft => Exit::Ok,
        Ended::ServerExited(status) if status.success() => Exit::Ok,
        Ended::ServerExited(status) => {
            eprintln!("toolgate mcp: the MCP server exited ({status})");
            Exit::Trouble
        }
    })
}

/// The configuration the flags give, checked against them.
fn configured(args: &McpArgs) -> anyhow::Result<Config> {
    let mut config = match &args.config {
        Some(path) => Config::load(path)?,
        None => Config::default(),
    };
    if let Some(db) = &args.db {
        config.db = db.clone();
    }
    if let Some(policy) = &args.policy {
        config.policy = Some(policy.clone());
    }
    // The server's name is part of every tool name the policy sees: `__` in it would make
    // `mcp__a__b__c` the name of two tools (and `mcp__a__b/instructions` a tool's).
    let named = args.name.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
    anyhow::ensure!(
        named && !args.name.is_empty() && args.name.len() <= 64 && !args.name.contains("__"),
        "--name `{}`: 1 to 64 letters, digits, `-` or `_`, without `__`",
        args.name
    );
    // The gateway calls the sidecar with the client's token, issued for the gateway alone: a
    // sidecar elsewhere would have to take tokens not meant for it.
    anyhow::ensure!(
        args.listen.is_none() || args.server.is_none() || config.auth.issuers.is_empty(),
        "[[auth.issuers]] over Streamable HTTP needs the embedded sidecar: the clients' access \
         tokens are for the gateway alone and are not passed to a sidecar elsewhere (--server)"
    );
    Ok(config)
}

/// The sidecar the gateway calls (`--server`, or one embedded now): as the clients' caller,
/// as the gateway itself, and the embedded one to run beside the relay.
async fn connect(
    args: &McpArgs,
    mut config: Config,
) -> anyhow::Result<(Sidecar, Sidecar, Option<Embedded>)> {
    // The embedded sidecar, with auth on, knows the gateway by a token of its own, minted now
    // and known to no client: only it may record the tools' definitions.
    let own_token = match (&args.server, config.auth.enabled()) {
        (None, true) => Some(gateway_token(&mut config, &args.name)?),
        _ => None,
    };
    let (url, embedded) = match &args.server {
        Some(url) => (url.clone(), None),
        None => {
            let (url, embedded) = embed(config, args.grpc_listen.clone()).await?;
            (url, Some(embedded))
        }
    };
    let channel = endpoint(&url)?.connect_lazy();
    let mut sidecar = Sidecar::new(conn(channel.clone()), conn(channel));
    if let Some(header) = Bearer::from_env(&args.token_env)?.header() {
        sidecar = sidecar.authorized(header)?;
    }
    let own = match own_token {
        Some(token) => sidecar.clone().authorized(&format!("Bearer {token}"))?,
        None => sidecar.clone(),
    };
    Ok((sidecar, own, embedded))
}

/// Runs `relay` beside the embedded sidecar, if any: the sidecar stopping first is trouble;
/// once the relay ends, the sidecar is stopped.
async fn beside(
    relay: impl Future<Output = anyhow::Result<Ended>>,
    embedded: Option<Embedded>,
) -> anyhow::Result<Ended> {
    let Some(mut embedded) = embedded else { return relay.await };
    let ended = tokio::select! {
        ended = relay => ended,
        served = &mut embedded.server => {
            served.context("the embedded sidecar failed")??;
            anyhow::bail!("the embedded sidecar stopped");
        }
    };
    let _ = embedded.stop.send(());
    embedded.server.await.context("the embedded sidecar failed")??;
    ended
}

/// Adds to the embedded sidecar's tokens one for the gateway itself (the `gateway` role, any
/// actor: it records definitions and refusals, and decides nothing); the token.
fn gateway_token(config: &mut Config, name: &str) -> anyhow::Result<String> {
    let mut secret = [0u8; 32];
    getrandom::fill(&mut secret).map_err(|e| anyhow::anyhow!("no randomness for a token: {e}"))?;
    let token = hex::encode(secret);
    config.auth.tokens.push(crate::config::TokenSpec {
        id: format!("mcp-gateway:{name}"),
        sha256: crate::auth::token_digest(&token),
        roles: vec![crate::config::Role::Gateway],
        actors: vec!["*".to_owned()],
        harness_approvals: false,
    });
    Ok(token)
}

/// The Streamable HTTP front: its listener, the server behind it, the clients' tokens, and the
/// OAuth resource it is.
struct Front {
    listener: tokio::net::TcpListener,
    upstream: reqwest::Url,
    auth: Option<Auth>,
    resource: crate::mcp::Resource,
}

/// Binds the front (loopback unless auth is on) and prints its endpoint. As an OAuth resource
/// server it takes only the access tokens issued for it: the configured issuers' tokens whose
/// audience is its resource URL. The embedded sidecar, which the gateway calls with the
/// client's token, takes that audience too; the token never goes further.
async fn front(config: &mut Config, listen: &str, upstream: &str) -> anyhow::Result<Front> {
    let upstream =
        reqwest::Url::parse(upstream).with_context(|| format!("`{upstream}` is not a URL"))?;
    anyhow::ensure!(
        matches!(upstream.scheme(), "http" | "https"),
        "the upstream must be an http:// or https:// URL"
    );
    // The MCP endpoint is plain HTTP: beyond loopback, a TLS proxy belongs in front of it.
    let bearer = !config.auth.tokens.is_empty() || !config.auth.issuers.is_empty();
    check_exposure("the MCP endpoint", listen, (bearer, false), false)?;
    let listener = tokio::net::TcpListener::bind(listen)
        .await
        .with_context(|| format!("cannot listen on `{listen}`"))?;
    let endpoint = format!("http://{}/mcp", listener.local_addr()?);
    // Beyond loopback the address it listens on is not the URL its clients know it by.
    anyhow::ensure!(
        config.mcp.resource.is_some()
            || config.auth.issuers.is_empty()
            || listener.local_addr()?.ip().is_loopback(),
        "[[auth.issuers]] beyond loopback needs [mcp] resource: the gateway's URL as its clients \
         know it (the audience of their access tokens)"
    );
    let resource = config.mcp.resource.clone().unwrap_or_else(|| endpoint.clone());
    let mut front_auth = config.auth.clone();
    for issuer in &mut front_auth.issuers {
        issuer.audiences = vec![resource.clone()];
    }
    for issuer in &mut config.auth.issuers {
        if !issuer.audiences.contains(&resource) {
            issuer.audiences.push(resource.clone());
        }
    }
    let auth = match front_auth.enabled() {
        true => Some(Auth::new(&front_auth)?),
        false => None,
    };
    let issuers = front_auth.issuers.iter().map(|issuer| issuer.issuer.clone()).collect();
    println!("{endpoint}");
    Ok(Front { listener, upstream, auth, resource: crate::mcp::Resource::new(resource, issuers)? })
}

/// The sidecar the gateway runs in process, on its own listener.
struct Embedded {
    server: tokio::task::JoinHandle<Result<(), crate::server::ServerError>>,
    stop: tokio::sync::oneshot::Sender<()>,
}

/// Starts the embedded sidecar; its URL.
async fn embed(mut config: Config, listen: Option<String>) -> anyhow::Result<(String, Embedded)> {
    config.listen = listen.unwrap_or_else(|| format!("unix:{}.sock", config.db.display()));
    let guarded = config.auth.enabled() || config.tls.requires_client_certificates();
    let tls = config.tls.enabled();
    check_exposure("the embedded sidecar's gRPC port", &config.listen, (guarded, tls), false)?;
    let listener = Listener::bind(&config.listen, config.unix_socket_mode)
        .await
        .with_context(|| format!("cannot listen on `{}`", config.listen))?;
    let url = match &listener {
        Listener::Unix { path, .. } => format!("unix:{}", path.display()),
        Listener::Tcp(tcp) => format!("http://{}", tcp.local_addr()?),
    };
    tracing::info!(listen = %listener.describe(), db = %config.db.display(), "embedded sidecar starting");
    let (stop, stopping) = tokio::sync::oneshot::channel::<()>();
    let shutdown = async move {
        let _ = stopping.await;
    };
    let server = tokio::spawn(crate::server::run(config, listener, None, shutdown));
    Ok((url, Embedded { server, stop }))
}
