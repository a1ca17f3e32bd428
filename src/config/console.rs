//! The `[console]` section (docs/console.md): the auditors' and approvers' web console on the
//! HTTP side port, under `/ui`.
//!
//! ```toml
//! http_listen = "127.0.0.1:9090"
//!
//! [console]
//! enabled = true
//! session_minutes = 480
//! ```

use serde::Deserialize;

/// The console.
#[derive(Debug, Clone, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ConsoleConfig {
    /// Serve the console on the HTTP side port (which must be on: `http_listen`).
    pub enabled: bool,
    /// How long a sign-in lasts, in minutes, however active its holder is.
    pub session_minutes: u64,
    /// Sign-in through an identity provider (OpenID Connect), beside sign-in with a token.
    pub oidc: Option<OidcConfig>,
}

impl Default for ConsoleConfig {
    fn default() -> Self {
        Self { enabled: false, session_minutes: 8 * 60, oidc: None }
    }
}

/// `[console.oidc]`: people sign in through the identity provider of one of
/// `[[auth.issuers]]`, with OpenID Connect's authorization code flow (PKCE, state, nonce); the
/// ID token's claims give their roles and actors as that issuer's entry maps them.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OidcConfig {
    /// The provider: an `issuer` of `[[auth.issuers]]`.
    pub issuer: String,
    /// The console's client id at the provider (its ID tokens' audience).
    pub client_id: String,
    /// The environment variable holding the client's secret; unset, the console is a public
    /// client (PKCE alone).
    #[serde(default = "default_secret_env")]
    pub client_secret_env: String,
    /// Where the provider sends the browser back: the console's `/ui/oidc/callback` as the
    /// browser reaches it (`https://toolgate.example.com/ui/oidc/callback`), registered with
    /// the provider.
    pub redirect_uri: String,
    /// The scopes asked for.
    #[serde(default = "default_scopes")]
    pub scopes: Vec<String>,
}

fn default_secret_env() -> String {
    "TOOLGATE_CONSOLE_CLIENT_SECRET".to_owned()
}

fn default_scopes() -> Vec<String> {
    vec!["openid".to_owned(), "profile".to_owned()]
}
