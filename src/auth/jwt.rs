//! Bearer JWTs from configured identity providers (`[[auth.issuers]]`). A token is taken when
//! its issuer is configured, its algorithm is one the issuer's entry accepts (asymmetric only:
//! never `none`, never an HMAC keyed with a public key), a key the issuer publishes verifies its
//! signature, and its `iss`, `aud`, `sub`, `exp` and `nbf` hold (with the entry's clock skew).
//! Its roles and actors come from claims; the caller is `jwt:<issuer>#<subject>`. A verified
//! token is remembered until it expires, so that an agent's every call does not verify a
//! signature again.

use std::collections::HashMap;
use std::str::FromStr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use jsonwebtoken::errors::ErrorKind;
use jsonwebtoken::{Algorithm, Validation};
use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

use super::keys::{Keys, Missing};
use super::provider::fetchable;
use super::{BadAuth, Caller, MAX_REFUSAL_BYTES, SignedIn};
use crate::config::{ClaimPath, IssuerSpec, Role};

/// The longest token looked at.
const MAX_TOKEN_BYTES: usize = 16 * 1024;
/// Verified tokens remembered; past it, the memory starts again.
const MAX_REMEMBERED: usize = 10_000;

/// The configured issuers, and the tokens verified lately.
#[derive(Debug, Default)]
pub struct Issuers {
    issuers: Vec<Issuer>,
    /// Callers by their token's SHA-256, with the token's `exp`, its issuer and its key.
    verified: Mutex<HashMap<[u8; 32], Verified>>,
}

#[derive(Debug)]
struct Verified {
    caller: Caller,
    exp: u64,
    /// The issuer's keys, and the one that verified the token, as published.
    keys: Arc<Keys>,
    jwk: String,
}

#[derive(Debug)]
struct Issuer {
    spec: IssuerSpec,
    algorithms: Vec<Algorithm>,
    keys: Arc<Keys>,
}

impl Issuers {
    /// The issuers of `[[auth.issuers]]`, checked.
    pub fn new(specs: &[IssuerSpec]) -> Result<Self, BadAuth> {
        let mut issuers: Vec<Issuer> = Vec::new();
        for spec in specs {
            let bad = |why: String| BadAuth::Issuer(spec.issuer.clone(), why);
            if issuers.iter().any(|known| known.spec.issuer == spec.issuer) {
                return Err(bad("is listed twice".into()));
            }
            let urls = std::iter::once(&spec.issuer).chain(&spec.jwks_uri);
            if let Some(url) = urls.clone().find(|url| !fetchable(url)) {
                return Err(bad(format!("`{url}` is neither HTTPS nor HTTP on this host")));
            }
            if spec.refresh_seconds == 0 || spec.refetch_seconds == 0 {
                return Err(bad("refresh_seconds and refetch_seconds are at least 1".into()));
            }
            if spec.audiences.is_empty() {
                return Err(bad(
                    "needs `audiences`: a token for another service is no token".into()
                ));
            }
            let algorithms = spec
                .algorithms
                .iter()
                .map(|name| match Algorithm::from_str(name) {
                    Ok(alg) if alg.family() != jsonwebtoken::AlgorithmFamily::Hmac => Ok(alg),
                    Ok(_) => Err(bad(format!("`{name}`: HMAC needs a shared secret, not a JWKS"))),
                    Err(_) => Err(bad(format!("`{name}` is no JWS algorithm toolgate verifies"))),
                })
                .collect::<Result<Vec<_>, _>>()?;
            let refresh = Duration::from_secs(spec.refresh_seconds);
            let refetch = Duration::from_secs(spec.refetch_seconds);
            let keys = Keys::new(&spec.issuer, spec.jwks_uri.as_deref(), refresh, refetch)
                .map_err(|e| bad(e.to_string()))?;
            issuers.push(Issuer { spec: spec.clone(), algorithms, keys: Arc::new(keys) });
        }
        Ok(Self { issuers, verified: Mutex::default() })
    }

    /// Whether any issuer is configured.
    pub fn any(&self) -> bool {
        !self.issuers.is_empty()
    }

    /// The caller `token` names, or why it is refused (never quoting the token).
    pub async fn caller(&self, token: &str) -> Result<Caller, &'static str> {
        let digest: [u8; 32] = Sha256::digest(token.as_bytes()).into();
        let now = jsonwebtoken::get_current_timestamp();
        // A token verified before is taken until it expires, while its key is published.
        if let Some(known) = self.remembered().get(&digest)
            && known.exp > now
            && known.keys.holds(&known.jwk)
        {
            return Ok(known.caller.clone());
        }
        let (issuer, claims, jwk) = self.verify(token, None).await?;
        let exp = claims.get("exp").and_then(Value::as_u64).unwrap_or_default();
        let caller = issuer.caller(&claims)?;
        let mut remembered = self.remembered();
        if remembered.len() >= MAX_REMEMBERED {
            remembered.clear();
        }
        let keys = issuer.keys.clone();
        remembered.insert(digest, Verified { caller: caller.clone(), exp, keys, jwk });
        Ok(caller)
    }

    /// The person an OpenID Connect ID token names: issued by `issuer` for the client
    /// `client_id`, carrying the sign-in's `nonce`.
    pub async fn person(
        &self,
        issuer: &str,
        token: &str,
        client_id: &str,
        nonce: &str,
    ) -> Result<SignedIn, &'static str> {
        let (found, claims, jwk) = self.verify(token, Some(client_id)).await?;
        if found.spec.issuer != issuer {
            return Err("the ID token is not the console's provider's");
        }
        if claims.get("nonce").and_then(Value::as_str) != Some(nonce) {
            return Err("the ID token's nonce is not this sign-in's");
        }
        // A token for several audiences names the one it was given to (OpenID Connect Core
        // 3.1.3.7).
        let several = claims.get("aud").and_then(Value::as_array).is_some_and(|aud| aud.len() > 1);
        let azp = claims.get("azp").and_then(Value::as_str);
        if (several || azp.is_some()) && azp != Some(client_id) {
            return Err("the ID token was given to another client (azp)");
        }
        Ok(SignedIn { caller: found.caller(&claims)?, keys: found.keys.clone(), jwk })
    }

    /// The issuer of `token`, its claims and the key that verified it (as published), once
    /// its signature and claims hold: for one of the issuer's `audiences`, or for `audience`
    /// when given.
    async fn verify(
        &self,
        token: &str,
        audience: Option<&str>,
    ) -> Result<(&Issuer, Map<String, Value>, String), &'static str> {
        let (header, claims) =
            peek(token).ok_or("the bearer token is neither configured nor a JWT")?;
        let iss = claims.get("iss").and_then(Value::as_str);
        let issuer = self
            .issuers
            .iter()
            .find(|issuer| Some(issuer.spec.issuer.as_str()) == iss)
            .ok_or("the JWT's issuer is not in [[auth.issuers]]")?;
        let alg = header.get("alg").and_then(Value::as_str).unwrap_or_default();
        let alg = Algorithm::from_str(alg)
            .ok()
            .filter(|alg| issuer.algorithms.contains(alg))
            .ok_or("the JWT's algorithm is not one its issuer's entry accepts")?;
        let kid = header.get("kid").and_then(Value::as_str);
        let key = issuer.keys.find(kid, alg).await.map_err(|missing| match missing {
            Missing::Unfetched => "the JWT's issuer's keys could not be fetched",
            Missing::Unknown => "the JWT is signed by a key its issuer does not publish",
        })?;
        let mut validation = Validation::new(alg);
        validation.leeway = issuer.spec.leeway_seconds;
        validation.validate_nbf = true;
        validation.set_issuer(&[&issuer.spec.issuer]);
        match audience {
            Some(audience) => validation.set_audience(&[audience]),
            None => validation.set_audience(&issuer.spec.audiences),
        }
        validation.set_required_spec_claims(&["exp", "iss", "aud", "sub"]);
        let verified = jsonwebtoken::decode::<Map<String, Value>>(token, &key.key, &validation)
            .map_err(|e| refusal(e.kind()))?;
        Ok((issuer, verified.claims, key.jwk.clone()))
    }

    fn remembered(&self) -> std::sync::MutexGuard<'_, HashMap<[u8; 32], Verified>> {
        self.verified.lock().unwrap_or_else(|p| p.into_inner())
    }
}

impl Issuer {
    /// The caller a verified token's claims describe.
    fn caller(&self, claims: &Map<String, Value>) -> Result<Caller, &'static str> {
        let sub = claims.get("sub").and_then(Value::as_str).filter(|s| !s.is_empty());
        let sub = sub.ok_or("the JWT has no subject")?;
        // By name, a claim grants only the roles of people and agents: a role an identity
        // provider shares with other services must not make anyone toolgate's admin.
        let granted = |value: &String| match self.spec.roles.is_empty() {
            true => serde_json::from_value::<Role>(Value::String(value.clone()))
                .ok()
                .filter(|role| matches!(role, Role::Agent | Role::Approver | Role::Auditor)),
            false => self.spec.roles.get(value).copied(),
        };
        let roles = strings(claims, &self.spec.roles_claim).iter().filter_map(granted).collect();
        // The subject is one actor, exactly: never a pattern (a subject `*` acts as no one).
        let actors = match self.spec.actors_claim.as_ref().map(|claim| strings(claims, claim)) {
            Some(actors) if !actors.is_empty() => actors,
            _ if sub.ends_with('*') => Vec::new(),
            _ => vec![format!("{}{sub}", self.spec.actor_prefix)],
        };
        let id = crate::text::cut(format!("jwt:{}#{sub}", self.spec.issuer), MAX_REFUSAL_BYTES);
        Ok(Caller { id, roles, actors, harness_approvals: false })
    }
}

/// The values of the claim at `path`, through nested claims: an array's strings, or a
/// string's space-separated words (as `scope` holds them).
fn strings(claims: &Map<String, Value>, path: &ClaimPath) -> Vec<String> {
    let Some((first, rest)) = path.0.split_first() else { return Vec::new() };
    let found = rest.iter().fold(claims.get(first), |value, name| value.and_then(|v| v.get(name)));
    match found {
        Some(Value::Array(values)) => {
            values.iter().filter_map(Value::as_str).map(ToOwned::to_owned).collect()
        }
        Some(Value::String(words)) => words.split_whitespace().map(ToOwned::to_owned).collect(),
        _ => Vec::new(),
    }
}

/// A JWT's header and claims, unverified: only to find its issuer and key.
fn peek(token: &str) -> Option<(Map<String, Value>, Map<String, Value>)> {
    if token.len() > MAX_TOKEN_BYTES {
        return None;
    }
    let mut parts = token.split('.');
    let (header, claims, _signature) = (parts.next()?, parts.next()?, parts.next()?);
    if parts.next().is_some() {
        return None;
    }
    let json = |part: &str| serde_json::from_slice(&URL_SAFE_NO_PAD.decode(part).ok()?).ok();
    Some((json(header)?, json(claims)?))
}

/// Why a token whose key was found is refused.
fn refusal(kind: &ErrorKind) -> &'static str {
    match kind {
        ErrorKind::ExpiredSignature => "the JWT has expired",
        ErrorKind::ImmatureSignature => "the JWT is not valid yet (nbf)",
        ErrorKind::InvalidAudience => "the JWT's audience is not this service",
        ErrorKind::InvalidIssuer => "the JWT's issuer is not in [[auth.issuers]]",
        ErrorKind::InvalidSignature => "the JWT's signature does not verify",
        ErrorKind::MissingRequiredClaim(_) => "the JWT lacks one of exp, iss, aud, sub",
        ErrorKind::InvalidAlgorithm => "the JWT's algorithm does not fit its key",
        _ => "the JWT is malformed",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn claims_are_read_by_dotted_path_as_arrays_or_words() {
        let claims = serde_json::json!({
            "roles": ["agent", "auditor"],
            "scope": "openid toolgate:agent",
            "realm_access": {"roles": ["approver"]},
            "n": 3
        });
        let Value::Object(claims) = claims else { panic!("an object") };
        let path = ClaimPath::from;
        assert_eq!(strings(&claims, &path("roles")), ["agent", "auditor"]);
        assert_eq!(strings(&claims, &path("scope")), ["openid", "toolgate:agent"]);
        assert_eq!(strings(&claims, &path("realm_access.roles")), ["approver"]);
        assert!(strings(&claims, &path("n")).is_empty());
        assert!(strings(&claims, &path("missing.path")).is_empty());
        let named = serde_json::json!({"https://example.com/roles": ["agent"]});
        let Value::Object(named) = named else { panic!("an object") };
        let dotted = ClaimPath(vec!["https://example.com/roles".into()]);
        assert_eq!(strings(&named, &dotted), ["agent"], "a name with dots, as a list of names");
    }

    #[test]
    fn a_dotted_path_never_matches_a_flat_claim_of_that_name() {
        let claims = serde_json::json!({
            "realm_access.roles": ["auditor"],
            "realm_access": {"roles": ["agent"]},
        });
        let Value::Object(claims) = claims else { panic!("an object") };
        assert_eq!(strings(&claims, &ClaimPath::from("realm_access.roles")), ["agent"]);
        let flat = serde_json::json!({"realm_access.roles": ["auditor"]});
        let Value::Object(flat) = flat else { panic!("an object") };
        assert!(strings(&flat, &ClaimPath::from("realm_access.roles")).is_empty());
        #[derive(Debug, serde::Deserialize)]
        struct Holder {
            #[allow(dead_code)]
            path: ClaimPath,
        }
        let refused = toml::from_str::<Holder>("path = \"https://example.com/roles\"");
        let refused = refused.map_err(|e| e.to_string()).unwrap_err();
        assert!(refused.contains("[\"https://example.com/roles\"]"), "{refused}");
        assert!(toml::from_str::<Holder>("path = \"a..b\"").is_err());
    }

    #[test]
    fn claims_grant_people_and_agents_by_name_and_a_subject_is_one_exact_actor() {
        let spec = |prefix: &str| IssuerSpec {
            issuer: "https://idp.example.com".into(),
            audiences: vec!["toolgate".into()],
            jwks_uri: None,
            algorithms: vec!["RS256".into()],
            leeway_seconds: 30,
            roles_claim: ClaimPath::from("roles"),
            roles: Default::default(),
            actors_claim: None,
            actor_prefix: prefix.into(),
            refresh_seconds: 600,
            refetch_seconds: 10,
        };
        let issuers = Issuers::new(&[spec("okta:")]).unwrap_or_else(|e| panic!("{e}"));
        let claims = |sub: &str| {
            let Value::Object(claims) =
                serde_json::json!({"sub": sub, "roles": ["admin", "gateway", "agent"]})
            else {
                panic!("an object")
            };
            claims
        };
        let caller = issuers.issuers[0].caller(&claims("bot")).unwrap_or_else(|e| panic!("{e}"));
        assert!(caller.has(Role::Agent) && !caller.has(Role::Admin) && !caller.has(Role::Gateway));
        assert_eq!(caller.sole_actor(), Some("okta:bot"));
        assert_eq!(caller.id, "jwt:https://idp.example.com#bot");
        let star = issuers.issuers[0].caller(&claims("*")).unwrap_or_else(|e| panic!("{e}"));
        assert!(!star.may_act_as("anyone") && !star.may_act_as("okta:*"), "no pattern");
    }

    #[test]
    fn only_a_three_part_json_token_is_peeked_at() {
        let part = |v: Value| URL_SAFE_NO_PAD.encode(v.to_string());
        let (h, c) =
            (part(serde_json::json!({"alg": "none"})), part(serde_json::json!({"iss": "x"})));
        assert!(peek(&format!("{h}.{c}.")).is_some());
        assert!(peek(&format!("{h}.{c}")).is_none());
        assert!(peek(&format!("{h}.{c}.s.t")).is_none());
        assert!(peek("opaque-token").is_none());
    }

    #[test]
    fn an_issuer_must_name_audiences_and_asymmetric_algorithms() {
        let spec = |algorithms: &[&str], audiences: &[&str], issuer: &str| IssuerSpec {
            issuer: issuer.into(),
            audiences: audiences.iter().map(|a| a.to_string()).collect(),
            jwks_uri: None,
            algorithms: algorithms.iter().map(|a| a.to_string()).collect(),
            leeway_seconds: 30,
            roles_claim: ClaimPath::from("roles"),
            roles: Default::default(),
            actors_claim: None,
            actor_prefix: String::new(),
            refresh_seconds: 600,
            refetch_seconds: 10,
        };
        let refused = |s: IssuerSpec| Issuers::new(&[s]).err().map(|e| e.to_string());
        let https = "https://idp.example.com";
        assert!(refused(spec(&["RS256"], &["toolgate"], https)).is_none());
        assert!(
            refused(spec(&["HS256"], &["toolgate"], https)).is_some_and(|e| e.contains("HMAC"))
        );
        assert!(
            refused(spec(&["none"], &["toolgate"], https)).is_some_and(|e| e.contains("`none`"))
        );
        assert!(refused(spec(&["RS256"], &[], https)).is_some_and(|e| e.contains("audiences")));
        let plain = spec(&["RS256"], &["toolgate"], "http://idp.example.com");
        assert!(refused(plain).is_some_and(|e| e.contains("neither HTTPS")));
    }
}
