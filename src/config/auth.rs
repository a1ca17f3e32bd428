//! `[auth]`: the callers toolgate knows — tokens by hash, client certificates by name, SPIFFE
//! IDs by trust domain and path, and the bearer JWTs of configured issuers — and their roles.

use std::collections::BTreeMap;

use serde::Deserialize;

/// What a caller may do.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// Gate: Decide and Execute (and Await on its own approvals).
    Agent,
    /// Approvals: list, approve, reject.
    Approver,
    /// Audit: read only.
    Auditor,
    /// Admin: policy reload and other operations.
    Admin,
    /// Gateway: relays an MCP server, so records its tools' definitions (which pins them) and
    /// what it refused from its peers. An agent's token does not: an agent could otherwise pin
    /// a tool's definition before the gateway lists it.
    Gateway,
}

/// The kind of a name a certificate gives its holder: each is matched only as what it is.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum NameKind {
    /// The subject's common name (when the subject has exactly one).
    #[default]
    Cn,
    /// A DNS subject alternative name.
    Dns,
    /// An e-mail (RFC 822) subject alternative name.
    Email,
    /// A URI subject alternative name.
    Uri,
}

/// `[auth]`: the callers toolgate accepts.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct AuthConfig {
    pub tokens: Vec<TokenSpec>,
    pub certificates: Vec<CertificateSpec>,
    /// Client certificates carrying a SPIFFE ID (an X.509 SVID), by trust domain and path.
    pub spiffe: Vec<SpiffeSpec>,
    /// Identity providers whose bearer JWTs are accepted.
    pub issuers: Vec<IssuerSpec>,
}

impl AuthConfig {
    /// Whether any caller is configured (and so auth is on).
    pub fn enabled(&self) -> bool {
        !self.tokens.is_empty()
            || !self.certificates.is_empty()
            || !self.spiffe.is_empty()
            || !self.issuers.is_empty()
    }
}

/// One token, by its hash.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TokenSpec {
    /// A name for the token, recorded on refusals (never the token itself).
    pub id: String,
    /// Hex SHA-256 of the token (`toolgate hash-token` prints it).
    pub sha256: String,
    pub roles: Vec<Role>,
    /// The actor ids its holder may act as: exact ids, or a prefix ending in `*`
    /// (`team-a/*`). For an approver, who they are: they may not judge these actors' calls.
    #[serde(default)]
    pub actors: Vec<String>,
    /// Whether its holder (a harness adapter, such as the Claude Code hook) may report that a
    /// call which required approval was let through by the harness's own permission prompt
    /// (Execute's `approved_in_harness`).
    #[serde(default)]
    pub harness_approvals: bool,
}

/// The callers holding a client certificate with this name (mutual TLS).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CertificateSpec {
    /// The name, matched only as a name of its `kind`: by default the subject's common name;
    /// recorded as `cert:<subject>`. A SPIFFE ID is no subject: `[[auth.spiffe]]` matches it,
    /// as an X.509 SVID's one URI name.
    pub subject: String,
    /// What kind of name `subject` is: `cn` (the default), `dns`, `email` or `uri`.
    #[serde(default)]
    pub kind: NameKind,
    pub roles: Vec<Role>,
    /// As for a token: the actor ids its holder may act as.
    #[serde(default)]
    pub actors: Vec<String>,
}

/// The callers holding an X.509 SVID whose SPIFFE ID matches `id`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SpiffeSpec {
    /// A SPIFFE ID (`spiffe://example.org/agents/billing`), or every ID under a path, ending in
    /// `/*` (`spiffe://example.org/agents/*`); the longest match wins.
    pub id: String,
    pub roles: Vec<Role>,
    /// The actor ids its holder may act as (exact, or a prefix ending in `*`); without any,
    /// the SPIFFE ID itself.
    #[serde(default)]
    pub actors: Vec<String>,
}

/// An identity provider whose bearer JWTs (RFC 9068 access tokens, or any signed JWT with
/// `iss`, `aud`, `sub` and `exp`) are accepted.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct IssuerSpec {
    /// The issuer, exactly as its tokens' `iss` and its discovery document say it: its keys
    /// are found through `<issuer>/.well-known/openid-configuration`. HTTPS, or HTTP on a
    /// loopback address.
    pub issuer: String,
    /// The audiences a token must name one of (`aud`): this sidecar's, as the provider knows
    /// it, and for the MCP gateway its resource URL.
    pub audiences: Vec<String>,
    /// Where the keys are, when the issuer has no discovery document.
    #[serde(default)]
    pub jwks_uri: Option<String>,
    /// The signature algorithms accepted: asymmetric ones only.
    #[serde(default = "default_algorithms")]
    pub algorithms: Vec<String>,
    /// The clock skew allowed on `exp` and `nbf`, in seconds.
    #[serde(default = "default_leeway")]
    pub leeway_seconds: u64,
    /// The claim holding the caller's roles (a [`ClaimPath`]: `realm_access.roles`, or
    /// `["https://example.com/roles"]`): an array of strings, or one string of space-separated
    /// values.
    #[serde(default = "default_roles_claim")]
    pub roles_claim: ClaimPath,
    /// What each value of the roles claim grants; without any entry, values named `agent`,
    /// `approver` or `auditor` grant those roles (`admin` and `gateway` only by an entry).
    #[serde(default)]
    pub roles: BTreeMap<String, Role>,
    /// The claim listing the actor ids the caller may act as (exact, or a prefix ending in
    /// `*`); without it, or when a token lacks it, the token's subject is its one actor.
    #[serde(default)]
    pub actors_claim: Option<ClaimPath>,
    /// Put before a subject that stands as its actor (`okta:`), so that the subjects of
    /// several issuers and the actors of configured tokens cannot be one another's.
    #[serde(default)]
    pub actor_prefix: String,
    /// Keys are fetched again after this many seconds.
    #[serde(default = "default_refresh")]
    pub refresh_seconds: u64,
    /// A token signed by a key not yet known makes toolgate fetch the keys again (a rotation),
    /// at most once in this many seconds.
    #[serde(default = "default_refetch")]
    pub refetch_seconds: u64,
}

fn default_algorithms() -> Vec<String> {
    ["RS256", "PS256", "ES256", "EdDSA"].map(str::to_owned).to_vec()
}

fn default_leeway() -> u64 {
    30
}

/// Where a claim is in a token's claims: the names of the nested claims that lead to it,
/// outermost first. Written as a dotted path (`realm_access.roles`: the claim `roles` in the
/// claim `realm_access`), or, for claim names that hold dots themselves, as a list of names
/// (`["https://example.com/roles"]`). A path is only ever a path: a top-level claim whose name
/// is the dotted text is not it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClaimPath(pub Vec<String>);

impl<'de> Deserialize<'de> for ClaimPath {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        use serde::de::Error;
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Written {
            Dotted(String),
            Names(Vec<String>),
        }
        let names = match Written::deserialize(deserializer)? {
            Written::Dotted(path) => {
                // A URL-like name would be cut at its dots and silently match nothing.
                if path.contains(':') || path.contains('/') {
                    return Err(D::Error::custom(format!(
                        "`{path}` looks like a claim name that holds dots: write it as \
                         [\"{path}\"], a list of claim names"
                    )));
                }
                path.split('.').map(ToOwned::to_owned).collect()
            }
            Written::Names(names) => names,
        };
        if names.is_empty() || names.iter().any(String::is_empty) {
            return Err(D::Error::custom("a claim path names each claim: no empty name"));
        }
        Ok(Self(names))
    }
}

impl From<&str> for ClaimPath {
    /// A dotted path.
    fn from(path: &str) -> Self {
        Self(path.split('.').map(ToOwned::to_owned).collect())
    }
}

fn default_roles_claim() -> ClaimPath {
    ClaimPath::from("roles")
}

fn default_refresh() -> u64 {
    600
}

fn default_refetch() -> u64 {
    10
}
