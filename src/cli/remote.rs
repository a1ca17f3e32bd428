//! Talking to a running server from the command line: the channel, and the bearer token from
//! `TOOLGATE_TOKEN` when the server's auth is on (docs/security.md).

use anyhow::Context;
use tonic::metadata::{Ascii, MetadataValue};
use tonic::service::Interceptor;
use tonic::service::interceptor::InterceptedService;
use tonic::transport::{Channel, Endpoint};
use tonic::{Request, Status};

/// The environment variable the commands read the bearer token from.
pub const TOKEN_ENV: &str = "TOOLGATE_TOKEN";

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
}

impl Interceptor for Bearer {
    fn call(&mut self, mut request: Request<()>) -> Result<Request<()>, Status> {
        if let Some(value) = &self.0 {
            request.metadata_mut().insert("authorization", value.clone());
        }
        Ok(request)
    }
}

/// Connects to `url`, with the token from `token_env`.
pub async fn connect(url: &str, token_env: &str) -> anyhow::Result<(Channel, Bearer)> {
    let channel = Endpoint::from_shared(url.to_owned())?
        .connect()
        .await
        .with_context(|| format!("cannot connect to `{url}`"))?;
    Ok((channel, Bearer::from_env(token_env)?))
}
