//! Who may call what: bearer tokens and client certificates with roles, bound to the actor ids
//! their holder may act as.
//!
//! The configuration keeps only each token's SHA-256 (`[[auth.tokens]]`); a presented token is
//! hashed and compared in constant time. Under mutual TLS a call without a token is known by
//! its verified client certificate, whose names (`crate::tls::peer_names`) are looked up in
//! `[[auth.certificates]]`. With neither configured, auth is off and every caller may do
//! everything — which is why the server then listens only on loopback (see `cli::serve`). A
//! refusal is answered UNAUTHENTICATED (no credential, or an unknown token) or
//! PERMISSION_DENIED (an unmapped certificate, or a role or an identity the caller lacks). A
//! refusal says whether it is due to be recorded (at most one `access_denied` event per caller,
//! RPC and reason each second, the next one counting what was folded); `gate::refusal` records
//! it, naming the token's id or the certificate's subject and the RPC, never the token.
//!
//! [`Rpc`] is the one list of the RPCs, their paths and the roles each needs.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use serde::Deserialize;
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;
use tonic::Request;
use tonic::codegen::http::Extensions;
use tonic::metadata::{Ascii, MetadataValue};

use crate::error::Error;
use crate::tls::peer_names;

/// A refusal is recorded at most this often per peer, RPC and kind of refusal.
const RECORD_EVERY: Duration = Duration::from_secs(1);
/// Kinds of refusal remembered for folding; past it, new ones fold together.
const MAX_REMEMBERED: usize = 10_000;
/// The longest reason a refusal records, in bytes: it may quote what the caller sent (an actor
/// id it claimed, a certificate's name).
pub const MAX_REFUSAL_BYTES: usize = 256;

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

/// Every RPC that checks its caller, and the roles that may call it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rpc {
    Decide,
    Execute,
    NeverAllowed,
    DefineTools,
    RecordRefusal,
    ListPending,
    Approve,
    Reject,
    Await,
    Withdraw,
    HashArgs,
    Query,
    ExportCsv,
    Subscribe,
    Verify,
    Head,
    Stats,
    Checkpoint,
    InclusionProof,
    ConsistencyProof,
    ReloadPolicy,
    /// The console's sign-in (`POST /ui/sign-in`): a token that may read the trail or judge
    /// approvals.
    SignIn,
}

impl Rpc {
    /// The gRPC path (for the console's sign-in, its URL path), as the trail records it.
    pub fn path(self) -> &'static str {
        match self {
            Self::Decide => "toolgate.v1.Gate/Decide",
            Self::Execute => "toolgate.v1.Gate/Execute",
            Self::NeverAllowed => "toolgate.v1.Gate/NeverAllowed",
            Self::DefineTools => "toolgate.v1.Gate/DefineTools",
            Self::RecordRefusal => "toolgate.v1.Gate/RecordRefusal",
            Self::ListPending => "toolgate.v1.Approvals/ListPending",
            Self::Approve => "toolgate.v1.Approvals/Approve",
            Self::Reject => "toolgate.v1.Approvals/Reject",
            Self::Await => "toolgate.v1.Approvals/Await",
            Self::Withdraw => "toolgate.v1.Approvals/Withdraw",
            Self::HashArgs => "toolgate.v1.Audit/HashArgs",
            Self::Query => "toolgate.v1.Audit/Query",
            Self::ExportCsv => "toolgate.v1.Audit/ExportCsv",
            Self::Subscribe => "toolgate.v1.Audit/Subscribe",
            Self::Verify => "toolgate.v1.Audit/Verify",
            Self::Head => "toolgate.v1.Audit/Head",
            Self::Stats => "toolgate.v1.Audit/Stats",
            Self::Checkpoint => "toolgate.v1.Audit/Checkpoint",
            Self::InclusionProof => "toolgate.v1.Audit/InclusionProof",
            Self::ConsistencyProof => "toolgate.v1.Audit/ConsistencyProof",
            Self::ReloadPolicy => "toolgate.v1.Admin/ReloadPolicy",
            Self::SignIn => "/ui/sign-in",
        }
    }

    /// The roles that may call it.
    pub fn roles(self) -> &'static [Role] {
        match self {
            Self::Decide | Self::Execute | Self::NeverAllowed | Self::Withdraw => &[Role::Agent],
            Self::DefineTools | Self::RecordRefusal => &[Role::Gateway],
            Self::Approve | Self::Reject => &[Role::Approver],
            // An agent lists and awaits its own calls only; an approver or an auditor any.
            Self::ListPending | Self::Await => &[Role::Agent, Role::Approver, Role::Auditor],
            Self::HashArgs
            | Self::Query
            | Self::ExportCsv
            | Self::Subscribe
            | Self::Verify
            | Self::Head
            | Self::Stats
            | Self::Checkpoint
            | Self::InclusionProof
            | Self::ConsistencyProof => &[Role::Auditor],
            Self::ReloadPolicy => &[Role::Admin],
            Self::SignIn => &[Role::Auditor, Role::Approver],
        }
    }
}

/// A call refused for who made it.
#[derive(Debug)]
pub struct Refusal {
    /// The token's id, `cert:<subject>`, or `anonymous`.
    pub caller: String,
    pub rpc: Rpc,
    /// Why, for the trail and the log.
    pub why: String,
    /// What the caller is answered.
    pub error: Error,
    /// `Some(folded)` when the refusal is due to be recorded, with how many like it were
    /// folded since the last record; `None` when it is folded into the next.
    pub record: Option<u64>,
}

/// `[auth]`: the tokens and client certificates toolgate accepts.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct AuthConfig {
    pub tokens: Vec<TokenSpec>,
    pub certificates: Vec<CertificateSpec>,
}

impl AuthConfig {
    /// Whether any caller is configured (and so auth is on).
    pub fn enabled(&self) -> bool {
        !self.tokens.is_empty() || !self.certificates.is_empty()
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
    /// The certificate's subject common name, or one of its DNS, URI (a SPIFFE id, say) or
    /// e-mail subject alternative names; recorded on refusals as `cert:<subject>`.
    pub subject: String,
    pub roles: Vec<Role>,
    /// As for a token: the actor ids its holder may act as.
    #[serde(default)]
    pub actors: Vec<String>,
}

/// An authenticated caller.
#[derive(Debug, Clone)]
pub struct Caller {
    /// The token's id, or `cert:<subject>`.
    pub id: String,
    roles: Vec<Role>,
    actors: Vec<String>,
    harness_approvals: bool,
}

impl Caller {
    /// The actor the caller acts as, when its identities are exactly one id (not a prefix).
    pub fn sole_actor(&self) -> Option<&str> {
        match self.actors.as_slice() {
            [one] if !one.ends_with('*') => Some(one),
            _ => None,
        }
    }

    /// Whether the caller may report approvals given in a harness's own permission prompt.
    pub fn reports_harness_approvals(&self) -> bool {
        self.harness_approvals
    }

    /// Whether the caller holds `role`.
    pub fn has(&self, role: Role) -> bool {
        self.roles.contains(&role)
    }

    /// Whether the caller may act as `actor` (and so may not approve its calls).
    pub fn may_act_as(&self, actor: &str) -> bool {
        self.actors.iter().any(|pattern| match pattern.strip_suffix('*') {
            Some(prefix) => actor.starts_with(prefix),
            None => pattern == actor,
        })
    }
}

#[derive(Debug)]
struct Token {
    digest: [u8; 32],
    caller: Caller,
}

/// The callers a server accepts, and its record of refusals.
#[derive(Debug)]
pub struct Auth {
    tokens: Vec<Token>,
    /// Callers by certificate name.
    certificates: HashMap<String, Caller>,
    /// When each (caller, RPC, reason) was last recorded, and how many refusals were folded
    /// since.
    recorded: Mutex<HashMap<RefusalKey, (Instant, u64)>>,
}

/// A caller toolgate does not know.
enum Unknown {
    /// A bearer token that is malformed or not configured.
    Token,
    /// A client certificate none of whose names is configured; its first name.
    Certificate(String),
    /// Neither a token nor a certificate.
    Nothing,
}

/// A kind of refusal: the peer (a token's or certificate's configured id, or an anonymous
/// caller's address), the RPC and the kind of reason (never the caller's own words).
type RefusalKey = (String, &'static str, &'static str);

/// Why `[auth]` is refused at start.
#[derive(Debug, thiserror::Error)]
pub enum BadAuth {
    #[error(
        "[[auth.tokens]] `{0}`: sha256 must be 64 hex digits (`toolgate hash-token` prints it)"
    )]
    Digest(String),
    #[error("[[auth.certificates]] `{0}` is listed twice")]
    DuplicateSubject(String),
    /// Two entries with one digest: one token, two meanings (the later would silently win).
    #[error("[[auth.tokens]] `{0}` and `{1}` have the same sha256: give each its own token")]
    DuplicateToken(String, String),
}

impl Auth {
    /// The tokens and certificates of `config`.
    pub fn new(config: &AuthConfig) -> Result<Self, BadAuth> {
        let tokens: Vec<Token> = config
            .tokens
            .iter()
            .map(|spec| {
                let mut digest = [0; 32];
                hex::decode_to_slice(&spec.sha256, &mut digest)
                    .map_err(|_| BadAuth::Digest(spec.id.clone()))?;
                let caller = Caller {
                    id: spec.id.clone(),
                    roles: spec.roles.clone(),
                    actors: spec.actors.clone(),
                    harness_approvals: spec.harness_approvals,
                };
                Ok(Token { digest, caller })
            })
            .collect::<Result<_, _>>()?;
        let mut ids_by_digest = HashMap::new();
        for token in &tokens {
            if let Some(first) = ids_by_digest.insert(token.digest, &token.caller.id) {
                return Err(BadAuth::DuplicateToken(first.clone(), token.caller.id.clone()));
            }
        }
        let mut certificates = HashMap::new();
        for spec in &config.certificates {
            let caller = Caller {
                id: format!("cert:{}", spec.subject),
                roles: spec.roles.clone(),
                actors: spec.actors.clone(),
                harness_approvals: false,
            };
            if certificates.insert(spec.subject.clone(), caller).is_some() {
                return Err(BadAuth::DuplicateSubject(spec.subject.clone()));
            }
        }
        Ok(Self { tokens, certificates, recorded: Mutex::new(HashMap::new()) })
    }

    /// Whether any token or certificate is configured.
    fn enabled(&self) -> bool {
        !self.tokens.is_empty() || !self.certificates.is_empty()
    }

    /// The caller of `rpc` if it holds one of the roles `rpc` needs; `None` when auth is off.
    /// A bearer token, when the call carries one, says who the caller is; otherwise its client
    /// certificate does.
    pub fn authorize<T>(&self, request: &Request<T>, rpc: Rpc) -> Result<Option<Caller>, Refusal> {
        if !self.enabled() {
            return Ok(None);
        }
        let caller = match request.metadata().get("authorization") {
            Some(header) => self.token_caller(header),
            None => self.certificate_caller(request.extensions()),
        };
        let caller = match caller {
            Ok(caller) => caller,
            Err(unknown) => {
                // An anonymous caller is folded by its address: a flood of bad tokens from one
                // peer is one kind of refusal, whatever each token says.
                let peer = request.remote_addr().map_or_else(
                    || "anonymous@local".to_owned(),
                    |a| format!("anonymous@{}", a.ip()),
                );
                // A verified certificate is an identity, only not one given any role.
                let (who, fold, why, identified) = match unknown {
                    Unknown::Token => {
                        ("anonymous".to_owned(), peer, "no valid bearer token", false)
                    }
                    Unknown::Nothing => (
                        "anonymous".to_owned(),
                        peer,
                        "no bearer token and no client certificate",
                        false,
                    ),
                    Unknown::Certificate(name) => {
                        let who = crate::request::cut(format!("cert:{name}"), MAX_REFUSAL_BYTES);
                        (
                            who.clone(),
                            who,
                            "the client certificate is not in [[auth.certificates]]",
                            true,
                        )
                    }
                };
                let error = match identified {
                    true => Error::PermissionDenied(format!("{}: {why}", rpc.path())),
                    false => Error::Unauthenticated(why.into()),
                };
                return Err(self.refuse(who, fold, rpc, why, why.to_owned(), error));
            }
        };
        let roles = rpc.roles();
        if !roles.iter().any(|role| caller.roles.contains(role)) {
            let why = format!("the caller's roles do not include {roles:?}");
            let error = Error::PermissionDenied(format!("{}: {why}", rpc.path()));
            let id = caller.id.clone();
            return Err(self.refuse(caller.id, id, rpc, "role", why, error));
        }
        Ok(Some(caller))
    }

    /// Refuses an authenticated caller acting beyond its identities. `why` may quote what the
    /// caller claimed: it is cut, and the refusals of one caller fold whatever they claim.
    pub fn refuse_identity(&self, caller: &Caller, rpc: Rpc, why: String) -> Refusal {
        let why = crate::request::cut(why, MAX_REFUSAL_BYTES);
        let error = Error::PermissionDenied(why.clone());
        self.refuse(caller.id.clone(), caller.id.clone(), rpc, "identity", why, error)
    }

    fn token_caller(&self, header: &MetadataValue<Ascii>) -> Result<Caller, Unknown> {
        let value = header.to_str().map_err(|_| Unknown::Token)?;
        let token = value
            .strip_prefix("Bearer ")
            .or_else(|| value.strip_prefix("bearer "))
            .ok_or(Unknown::Token)?;
        let digest: [u8; 32] = Sha256::digest(token.trim().as_bytes()).into();
        // Every configured digest is compared, each in constant time.
        let mut found = None;
        for known in &self.tokens {
            if bool::from(known.digest.ct_eq(&digest)) {
                found = Some(known.caller.clone());
            }
        }
        found.ok_or(Unknown::Token)
    }

    fn certificate_caller(&self, extensions: &Extensions) -> Result<Caller, Unknown> {
        let names = peer_names(extensions);
        let first = names.first().ok_or(Unknown::Nothing)?;
        names
            .iter()
            .find_map(|name| self.certificates.get(name).cloned())
            .ok_or_else(|| Unknown::Certificate(first.clone()))
    }

    /// A refusal of `caller` (folded with others of the peer `fold`, the RPC and the kind of
    /// refusal `kind`), logged when it is due to be recorded: unless one like it was within the
    /// second.
    fn refuse(
        &self,
        caller: String,
        fold: String,
        rpc: Rpc,
        kind: &'static str,
        why: String,
        error: Error,
    ) -> Refusal {
        let record = self.due(fold, rpc.path(), kind);
        if record.is_some() {
            tracing::warn!(caller, rpc = rpc.path(), why, "access denied");
        }
        Refusal { caller, rpc, why, error, record }
    }

    /// `Some(folded)` when this refusal is to be recorded, with how many were folded since the
    /// last record; `None` when it is folded into the next.
    fn due(&self, peer: String, rpc: &'static str, kind: &'static str) -> Option<u64> {
        let mut recorded = self.recorded.lock().unwrap_or_else(|p| p.into_inner());
        let mut key = (peer, rpc, kind);
        if recorded.len() >= MAX_REMEMBERED && !recorded.contains_key(&key) {
            // A flood of peers: the ones not yet remembered fold together.
            key.0 = "*".to_owned();
        }
        let now = Instant::now();
        match recorded.get_mut(&key) {
            Some((last, folded)) if now.duration_since(*last) < RECORD_EVERY => {
                *folded += 1;
                None
            }
            Some((last, folded)) => {
                let was = *folded;
                (*last, *folded) = (now, 0);
                Some(was)
            }
            None => {
                recorded.insert(key, (now, 0));
                Some(0)
            }
        }
    }
}

/// Hex SHA-256 of a token, as `[[auth.tokens]] sha256` wants it.
pub fn token_digest(token: &str) -> String {
    hex::encode(Sha256::digest(token.trim().as_bytes()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn actor_patterns_match_exact_ids_and_prefixes() {
        let caller = Caller {
            id: "t".into(),
            roles: vec![],
            actors: vec!["team-a/*".into(), "bob".into()],
            harness_approvals: false,
        };
        assert!(caller.may_act_as("team-a/agent-1"));
        assert!(caller.may_act_as("bob"));
        assert!(!caller.may_act_as("bobby"));
        assert!(!caller.may_act_as("team-b/agent-1"));
    }

    #[test]
    fn one_token_under_two_entries_is_refused() {
        let entry = |id: &str, sha256: &str| TokenSpec {
            id: id.into(),
            sha256: sha256.into(),
            roles: vec![],
            actors: vec![],
            harness_approvals: false,
        };
        let digest = token_digest("replace-me");
        let config = AuthConfig {
            tokens: vec![entry("agent", &digest), entry("auditor", &digest.to_uppercase())],
            ..Default::default()
        };
        let refused = Auth::new(&config).err().map(|e| e.to_string()).unwrap_or_default();
        assert!(refused.contains("`agent` and `auditor` have the same sha256"), "{refused}");
    }
}
