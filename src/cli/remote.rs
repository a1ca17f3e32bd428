//! Talking to a running server from the command line: the channel (over TLS for an `https://`
//! URL, with the CA and the client certificate named by `TOOLGATE_CA_CERT`,
//! `TOOLGATE_CLIENT_CERT` and `TOOLGATE_CLIENT_KEY`), and the bearer token from
//! `TOOLGATE_TOKEN` when the server's auth is on (docs/security.md).

use anyhow::Context;
use tonic::metadata::{Ascii, MetadataValue};
use tonic::service::Interceptor;
use tonic::service::interceptor::InterceptedService;
use tonic::transport::{Certificate, Channel, ClientTlsConfig, Endpoint, Identity};
use tonic::{Request, Status};

/// The environment variable the commands read the bearer token from.
pub const TOKEN_ENV: &str = "TOOLGATE_TOKEN";

/// The server a command asks when it is given neither `--server` nor a file to read: the
/// `TOOLGATE_SERVER` environment variable, else the address `serve` listens on by default.
pub const SERVER_ENV: &str = "TOOLGATE_SERVER";
pub const DEFAULT_SERVER: &str = "127.0.0.1:50051";

/// Connects to the server `given`, or else to the default one ([`SERVER_ENV`], else
/// [`DEFAULT_SERVER`]), saying so when that one cannot be reached; with the token from
/// `token_env`.
pub async fn connect_to(given: Option<&str>, token_env: &str) -> anyhow::Result<(Channel, Bearer)> {
    match given {
        Some(url) => connect(url, token_env).await,
        None => {
            let url = std::env::var(SERVER_ENV).unwrap_or_else(|_| DEFAULT_SERVER.to_owned());
            connect(&url, token_env)
                .await
                .context("no --db or --server given: asked the default server")
        }
    }
}

/// The PEM file of the CA that issued an `https://` server's certificate.
pub const CA_ENV: &str = "TOOLGATE_CA_CERT";
/// The PEM files of the client certificate and its key, for mutual TLS.
pub const CERT_ENV: &str = "TOOLGATE_CLIENT_CERT";
pub const KEY_ENV: &str = "TOOLGATE_CLIENT_KEY";

/// A channel whose calls carry the token, if one is set.
pub type Authorized = InterceptedService<Channel, Bearer>;

/// Adds `authorization: Bearer <token>` to every call.
#[derive(Debug, Clone)]
pub struct Bearer(Option<MetadataValue<Ascii>>);

impl Bearer {
    /// The token in the environment variable `var`, if it is set.
    pub fn from_env(var: &str) -> anyhow::Result<Self> {
        match std::env::var(var) {
            Ok(token) => {
                let value = format!("Bearer {}", token.trim());
                Ok(Self(Some(value.parse().with_context(|| format!("the token in `{var}`"))?)))
            }
            Err(_) => Ok(Self(None)),
        }
    }

    /// The `authorization` header value, if a token is set.
    pub fn header(&self) -> Option<&str> {
        self.0.as_ref().and_then(|value| value.to_str().ok())
    }
}

impl Interceptor for Bearer {
    fn call(&mut self, mut request: Request<()>) -> Result<Request<()>, Status> {
        if let Some(value) = &self.0 {
            request.metadata_mut().insert("authorization", value.clone());
        }
        Ok(request)
    }
}

/// The endpoint of a server in any of the forms every `--server` takes: `host:port` (plain
/// HTTP/2, as `serve --listen` names it), `http://host:port`, `https://host:port`, or
/// `unix:/path`. Over TLS if it is `https://`, trusting the CA in `TOOLGATE_CA_CERT` and
/// presenting the certificate in `TOOLGATE_CLIENT_CERT` and `TOOLGATE_CLIENT_KEY` if set.
pub fn endpoint(url: &str) -> anyhow::Result<Endpoint> {
    let lower = url.to_ascii_lowercase();
    let uri = match lower.contains("://") || lower.starts_with("unix:") {
        true => url.to_owned(),
        // A bare host is toolgate's port on it, as `serve --listen` defaults to.
        false if !url.contains(':') => format!("http://{url}:50051"),
        false => format!("http://{url}"),
    };
    let endpoint = Endpoint::from_shared(uri).with_context(|| {
        format!("`{url}` is not a server address (host:port, http(s)://host:port or unix:/path)")
    })?;
    if !lower.starts_with("https://") {
        return Ok(endpoint);
    }
    let pem = |var: &str| -> anyhow::Result<Option<Vec<u8>>> {
        let Ok(path) = std::env::var(var) else { return Ok(None) };
        let pem = std::fs::read(&path).with_context(|| format!("cannot read `{path}` ({var})"))?;
        Ok(Some(pem))
    };
    let ca = pem(CA_ENV)?
        .with_context(|| format!("`{url}` is TLS: set {CA_ENV} to the PEM file of its CA"))?;
    let mut tls = ClientTlsConfig::new().ca_certificate(Certificate::from_pem(ca));
    match (pem(CERT_ENV)?, pem(KEY_ENV)?) {
        (Some(cert), Some(key)) => tls = tls.identity(Identity::from_pem(cert, key)),
        (None, None) => {}
        _ => anyhow::bail!("set both {CERT_ENV} and {KEY_ENV}, or neither"),
    }
    Ok(endpoint.tls_config(tls)?)
}

/// Connects to `url`, with the token from `token_env`.
pub async fn connect(url: &str, token_env: &str) -> anyhow::Result<(Channel, Bearer)> {
    let channel =
        endpoint(url)?.connect().await.with_context(|| format!("cannot connect to `{url}`"))?;
    Ok((channel, Bearer::from_env(token_env)?))
}
