//! Who may call what: the callers toolgate knows, with roles, bound to the actor ids they may
//! act as.
//!
//! A caller is known by one of:
//! - a bearer token of `[[auth.tokens]]`: the configuration keeps only its SHA-256, and a
//!   presented token is hashed and compared in constant time;
//! - a bearer JWT of an identity provider in `[[auth.issuers]]` (`jwt`: its keys from the
//!   provider's JWKS, `keys`), known as `jwt:<issuer>#<subject>`;
//! - under mutual TLS, without a bearer token, its verified client certificate: by its names
//!   (`crate::tls::peer_names`) in `[[auth.certificates]]`, as `cert:<name>`, or by its SPIFFE
//!   ID in `[[auth.spiffe]]` (`spiffe`), as that ID.
//!
//! With none configured, auth is off and every caller may do everything — which is why the
//! server then listens only on loopback (see `cli::serve`). A refusal is answered
//! UNAUTHENTICATED (no credential, or a token not taken) or PERMISSION_DENIED (an unmapped
//! certificate, or a role or an identity the caller lacks). A refusal says whether it is due to
//! be recorded (at most one `access_denied` event per caller, RPC and reason each second, the
//! next one counting what was folded); `gate::refusal` records it, naming the caller and the
//! RPC and why a token was not taken, never the token.

mod jwt;
mod keys;
mod provider;
mod rpc;
mod spiffe;

pub use provider::{Discovery, json as provider_json};
pub use rpc::Rpc;

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;
use tonic::Request;

use crate::config::{AuthConfig, NameKind, Role};
use crate::error::Error;
use crate::tls::{CertName, peer_names, peer_spiffe_id};

/// A refusal is recorded at most this often per peer, RPC and kind of refusal.
const RECORD_EVERY: Duration = Duration::from_secs(1);
/// Kinds of refusal remembered for folding; past it, new ones fold together.
const MAX_REMEMBERED: usize = 10_000;
/// The longest reason a refusal records, in bytes: it may quote what the caller sent (an actor
/// id it claimed, a certificate's name).
pub const MAX_REFUSAL_BYTES: usize = 256;

/// A call refused for who made it.
#[derive(Debug)]
pub struct Refusal {
    /// The caller's id (as [`Caller::id`]), or `anonymous`.
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

/// An authenticated caller.
#[derive(Debug, Clone)]
pub struct Caller {
    /// Who the caller is, as the trail names it: a configured token's id, `cert:<name>`, a
    /// SPIFFE ID, or `jwt:<issuer>#<subject>`.
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
    /// Callers by certificate name, of its kind.
    certificates: HashMap<(NameKind, String), Caller>,
    spiffe: spiffe::Spiffe,
    issuers: jwt::Issuers,
    /// When each (caller, RPC, reason) was last recorded, and how many refusals were folded
    /// since.
    recorded: Mutex<HashMap<RefusalKey, (Instant, u64)>>,
}

/// A person the console signed in through the identity provider (OpenID Connect), by an ID
/// token only this module verifies: set on the console's own in-process calls as a request
/// extension, which no peer can set, so that each page is authorized as that person — while
/// the provider still publishes the key that signed the ID token.
#[derive(Debug, Clone)]
pub struct SignedIn {
    caller: Caller,
    keys: std::sync::Arc<keys::Keys>,
    jwk: String,
}

impl SignedIn {
    /// The person.
    pub fn caller(&self) -> &Caller {
        &self.caller
    }
}

/// What a call presents to say who makes it, taken from its request before any wait.
#[derive(Debug)]
pub struct Presented {
    /// The console's signed-in person, on its in-process calls.
    signed_in: Option<SignedIn>,
    /// The `authorization` header, when there is one.
    authorization: Option<Result<String, ()>>,
    /// The verified client certificate's names, and its SPIFFE ID if it carries one.
    names: Vec<CertName>,
    spiffe: Option<Result<String, &'static str>>,
    /// The peer's address, by which anonymous refusals fold.
    peer: Option<std::net::IpAddr>,
}

impl Presented {
    /// What `request` presents.
    pub fn of<T>(request: &Request<T>) -> Self {
        Self::from_parts(request.metadata().as_ref(), request.extensions())
    }

    /// What a call presents on its head alone (its headers and connect info), before its body
    /// is read.
    pub fn of_head(head: &http::request::Parts) -> Self {
        Self::from_parts(&head.headers, &head.extensions)
    }

    fn from_parts(headers: &http::HeaderMap, extensions: &http::Extensions) -> Self {
        let authorization = headers
            .get("authorization")
            .map(|value| value.to_str().map(ToOwned::to_owned).map_err(|_| ()));
        let (names, spiffe) = match authorization {
            Some(_) => (Vec::new(), None),
            None => (peer_names(extensions), peer_spiffe_id(extensions)),
        };
        let peer = crate::tls::peer_addr(extensions).map(|a| a.ip());
        let signed_in = extensions.get::<SignedIn>().cloned();
        Self { signed_in, authorization, names, spiffe, peer }
    }

    /// An `authorization` header alone, or nothing (the MCP gateway's HTTP request).
    pub fn header(authorization: Option<&str>) -> Self {
        let authorization = authorization.map(|value| Ok(value.to_owned()));
        Self { signed_in: None, authorization, names: Vec::new(), spiffe: None, peer: None }
    }

    /// A bearer token alone (the console's sign-in form).
    pub fn bearer(token: &str) -> Self {
        Self::header(Some(&format!("Bearer {}", token.trim())))
    }
}

/// A caller toolgate does not know.
enum Unknown {
    /// A bearer token not taken, and why.
    Token(&'static str),
    /// A client certificate none of whose names or SPIFFE ID is configured: its first name,
    /// and why.
    Certificate(String, &'static str),
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
    #[error(
        "[[auth.certificates]] `{0}`: a SPIFFE ID is matched only as an X.509 SVID's one URI \
         name: write it as [[auth.spiffe]] id = \"{0}\""
    )]
    SpiffeSubject(String),
    /// Two entries with one digest: one token, two meanings (the later would silently win).
    #[error("[[auth.tokens]] `{0}` and `{1}` have the same sha256: give each its own token")]
    DuplicateToken(String, String),
    #[error("[[auth.issuers]] `{0}`: {1}")]
    Issuer(String, String),
    #[error("[[auth.spiffe]] `{0}`: {1}")]
    Spiffe(String, String),
    #[error("[console.oidc]: {0}")]
    Oidc(String),
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
        let mut subjects = std::collections::HashSet::new();
        for spec in &config.certificates {
            if spec.subject.get(..9).is_some_and(|s| s.eq_ignore_ascii_case("spiffe://")) {
                return Err(BadAuth::SpiffeSubject(spec.subject.clone()));
            }
            // One subject, one id on the trail, whatever kinds of name it is listed as.
            if !subjects.insert(spec.subject.clone()) {
                return Err(BadAuth::DuplicateSubject(spec.subject.clone()));
            }
            let caller = Caller {
                id: format!("cert:{}", spec.subject),
                roles: spec.roles.clone(),
                actors: spec.actors.clone(),
                harness_approvals: false,
            };
            certificates.insert((spec.kind, spec.subject.clone()), caller);
        }
        Ok(Self {
            tokens,
            certificates,
            spiffe: spiffe::Spiffe::new(&config.spiffe)?,
            issuers: jwt::Issuers::new(&config.issuers)?,
            recorded: Mutex::new(HashMap::new()),
        })
    }

    /// Whether any caller is configured (auth is on).
    pub fn enabled(&self) -> bool {
        !self.tokens.is_empty()
            || !self.certificates.is_empty()
            || self.spiffe.any()
            || self.issuers.any()
    }

    /// The caller of `rpc` if it holds one of the roles `rpc` needs; `None` when auth is off.
    /// A bearer token, when the call carries one, says who the caller is; otherwise its client
    /// certificate does.
    pub async fn authorize(
        &self,
        presented: Presented,
        rpc: Rpc,
    ) -> Result<Option<Caller>, Refusal> {
        if !self.enabled() {
            return Ok(None);
        }
        let caller = match (&presented.signed_in, &presented.authorization) {
            (Some(signed_in), _) => match signed_in.keys.holds(&signed_in.jwk) {
                true => Ok(signed_in.caller.clone()),
                false => Err(Unknown::Token(
                    "the identity provider no longer publishes the key of this sign-in",
                )),
            },
            (None, Some(header)) => self.token_caller(header.as_deref().map_err(|_| ())).await,
            (None, None) => self.certificate_caller(&presented),
        };
        match caller {
            Ok(caller) => self.holding_role(caller, rpc).map(Some),
            Err(unknown) => {
                let peer = presented
                    .peer
                    .map_or_else(|| "anonymous@local".to_owned(), |ip| format!("anonymous@{ip}"));
                Err(self.unknown(unknown, peer, rpc))
            }
        }
    }

    /// The person an OpenID Connect ID token of `issuer` for `client_id` names (the console's
    /// sign-in), when they may sign in; otherwise the refusal, due to be recorded as a sign-in's.
    pub async fn person(
        &self,
        (issuer, client_id): (&str, &str),
        id_token: &str,
        nonce: &str,
    ) -> Result<SignedIn, Refusal> {
        match self.issuers.person(issuer, id_token, client_id, nonce).await {
            Ok(signed_in) => {
                let caller = self.holding_role(signed_in.caller, Rpc::SignIn)?;
                Ok(SignedIn { caller, ..signed_in })
            }
            Err(why) => {
                Err(self.unknown(Unknown::Token(why), "anonymous@oidc".into(), Rpc::SignIn))
            }
        }
    }

    /// `caller`, when it holds one of the roles `rpc` needs; otherwise the refusal.
    fn holding_role(&self, caller: Caller, rpc: Rpc) -> Result<Caller, Refusal> {
        let roles = rpc.roles();
        if roles.iter().any(|role| caller.roles.contains(role)) {
            return Ok(caller);
        }
        let why = format!("the caller's roles do not include {roles:?}");
        let error = Error::PermissionDenied(format!("{}: {why}", rpc.path()));
        let id = caller.id.clone();
        Err(self.refuse(caller.id, id, rpc, "role", why, error))
    }

    /// The refusal of a caller toolgate does not know, from `peer`.
    fn unknown(&self, unknown: Unknown, peer: String, rpc: Rpc) -> Refusal {
        // An anonymous caller is folded by its address: a flood of bad tokens from one peer is
        // one kind of refusal, whatever each token says. A verified certificate is an identity,
        // only not one given any role.
        let (who, fold, why, identified) = match unknown {
            Unknown::Token(why) => ("anonymous".to_owned(), peer, why, false),
            Unknown::Nothing => {
                ("anonymous".to_owned(), peer, "no bearer token and no client certificate", false)
            }
            Unknown::Certificate(name, why) => {
                let who = crate::text::cut(format!("cert:{name}"), MAX_REFUSAL_BYTES);
                (who.clone(), who, why, true)
            }
        };
        let error = match identified {
            true => Error::PermissionDenied(format!("{}: {why}", rpc.path())),
            false => Error::Unauthenticated(why.into()),
        };
        self.refuse(who, fold, rpc, why, why.to_owned(), error)
    }

    /// Refuses an authenticated caller acting beyond its identities. `why` may quote what the
    /// caller claimed: it is cut, and the refusals of one caller fold whatever they claim.
    pub fn refuse_identity(&self, caller: &Caller, rpc: Rpc, why: String) -> Refusal {
        let why = crate::text::cut(why, MAX_REFUSAL_BYTES);
        let error = Error::PermissionDenied(why.clone());
        self.refuse(caller.id.clone(), caller.id.clone(), rpc, "identity", why, error)
    }

    /// The caller a bearer token names: a configured token's, else a configured issuer's JWT.
    async fn token_caller(&self, header: Result<&str, ()>) -> Result<Caller, Unknown> {
        const NOT_TAKEN: &str = "no valid bearer token";
        let value = header.map_err(|()| Unknown::Token(NOT_TAKEN))?;
        let token = value
            .strip_prefix("Bearer ")
            .or_else(|| value.strip_prefix("bearer "))
            .ok_or(Unknown::Token(NOT_TAKEN))?
            .trim();
        let digest: [u8; 32] = Sha256::digest(token.as_bytes()).into();
        // Every configured digest is compared, each in constant time.
        let mut found = None;
        for known in &self.tokens {
            if bool::from(known.digest.ct_eq(&digest)) {
                found = Some(known.caller.clone());
            }
        }
        match found {
            Some(caller) => Ok(caller),
            None if self.issuers.any() => self.issuers.caller(token).await.map_err(Unknown::Token),
            None => Err(Unknown::Token(NOT_TAKEN)),
        }
    }

    /// The caller a verified client certificate names: by one of its names in
    /// `[[auth.certificates]]`, each matched only as a name of its kind, else by its SPIFFE ID
    /// (an X.509 SVID's) in `[[auth.spiffe]]`.
    fn certificate_caller(&self, presented: &Presented) -> Result<Caller, Unknown> {
        let first = presented.names.first().ok_or(Unknown::Nothing)?;
        let known = |name: &CertName| self.certificates.get(&(name.kind, name.value.clone()));
        if let Some(caller) = presented.names.iter().find_map(known) {
            return Ok(caller.clone());
        }
        let unmapped = |why| Unknown::Certificate(first.value.clone(), why);
        match &presented.spiffe {
            Some(Ok(id)) if self.spiffe.any() => self
                .spiffe
                .caller(id)
                .ok_or_else(|| unmapped("the SPIFFE ID is not in [[auth.spiffe]]")),
            Some(Err(why)) if self.spiffe.any() => Err(unmapped(why)),
            _ => Err(unmapped("the client certificate is not in [[auth.certificates]]")),
        }
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
    use crate::config::TokenSpec;

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
