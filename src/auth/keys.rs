//! An issuer's signing keys: found through its OpenID discovery document (or a configured JWKS
//! URL), fetched, kept, and fetched again when a token names a key not yet seen (a rotation:
//! that token waits for the fetch) or, in the background, when they are old (tokens go on
//! being verified with the keys held meanwhile) — one fetch at a time, at most once in
//! `refetch_seconds`, so that tokens naming keys that do not exist cannot make toolgate fetch
//! without end. Keys a day old are no longer taken while their issuer cannot be reached. Symmetric keys are never taken: a JWKS is public, and a key anyone can read
//! signs nothing.

use std::str::FromStr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use arc_swap::ArcSwap;
use jsonwebtoken::jwk::{AlgorithmParameters, Jwk, PublicKeyUse};
use jsonwebtoken::{Algorithm, DecodingKey};
use serde_json::Value;

use super::provider::{Discovery, json};
use tokio::sync::{Mutex, OwnedMutexGuard};

/// The most keys a JWKS may hold; past it the rest are passed over.
const MAX_KEYS: usize = 64;
/// How long a fetch may take.
const FETCH_TIMEOUT: Duration = Duration::from_secs(5);
/// The oldest keys still taken while the issuer cannot be reached: past it, a key the issuer
/// may have withdrawn long ago verifies nothing.
const MAX_STALE: Duration = Duration::from_secs(24 * 3600);

/// One verification key.
pub struct Key {
    pub key: DecodingKey,
    /// The algorithm the JWKS binds the key to, when it says.
    pub alg: Option<Algorithm>,
    /// The JWKS entry as published: what a token verified with it is checked against later.
    pub jwk: String,
}

/// The keys as last fetched.
#[derive(Default)]
struct KeySet {
    keys: Vec<(Option<String>, Arc<Key>)>,
    fetched: Option<Instant>,
}

impl KeySet {
    /// Whether they were fetched less than `refresh` ago.
    fn fresh(&self, refresh: Duration) -> bool {
        self.fetched.is_some_and(|at| at.elapsed() < refresh)
    }

    /// The keys, while they are not too old to be taken.
    fn usable(&self) -> Option<&Self> {
        self.fresh(MAX_STALE).then_some(self)
    }

    /// The key `kid` names; without a `kid`, the one key usable with `alg`, if exactly one is.
    fn find(&self, kid: Option<&str>, alg: Algorithm) -> Option<Arc<Key>> {
        let usable = |key: &Key| {
            key.key.family() == alg.family() && key.alg.is_none_or(|bound| bound == alg)
        };
        match kid {
            Some(kid) => self
                .keys
                .iter()
                .find(|(id, key)| id.as_deref() == Some(kid) && usable(key))
                .map(|(_, key)| key.clone()),
            None => {
                let mut candidates = self.keys.iter().filter(|(_, key)| usable(key));
                match (candidates.next(), candidates.next()) {
                    (Some((_, key)), None) => Some(key.clone()),
                    _ => None,
                }
            }
        }
    }
}

/// Why no key verifies a token.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Missing {
    /// The keys were never fetched.
    Unfetched,
    /// The issuer does not publish the key the token names.
    Unknown,
}

/// An issuer's keys.
pub struct Keys {
    issuer: String,
    jwks_uri: Option<String>,
    client: reqwest::Client,
    refresh: Duration,
    refetch: Duration,
    set: ArcSwap<KeySet>,
    /// When keys were last fetched, or tried; held while fetching, so that one caller fetches.
    fetching: Arc<Mutex<Option<Instant>>>,
}

impl std::fmt::Debug for Keys {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Keys").field("issuer", &self.issuer).finish_non_exhaustive()
    }
}

impl Keys {
    /// The keys of `issuer`, fetched when first needed.
    pub fn new(
        issuer: &str,
        jwks_uri: Option<&str>,
        refresh: Duration,
        refetch: Duration,
    ) -> Result<Self, reqwest::Error> {
        let client = reqwest::Client::builder()
            .timeout(FETCH_TIMEOUT)
            .redirect(reqwest::redirect::Policy::none())
            .build()?;
        Ok(Self {
            issuer: issuer.to_owned(),
            jwks_uri: jwks_uri.map(ToOwned::to_owned),
            client,
            refresh,
            refetch,
            set: ArcSwap::default(),
            fetching: Arc::new(Mutex::new(None)),
        })
    }

    /// The key that verifies a token of `alg` naming `kid`: from the keys held (fetched again
    /// in the background when they are old); a key not held waits for a fetch, when the last
    /// one is far enough behind.
    pub async fn find(
        self: &Arc<Self>,
        kid: Option<&str>,
        alg: Algorithm,
    ) -> Result<Arc<Key>, Missing> {
        let set = self.set.load();
        if let Some(key) = set.usable().and_then(|set| set.find(kid, alg)) {
            if !set.fresh(self.refresh) {
                self.refresh_in_background();
            }
            return Ok(key);
        }
        drop(set);
        let last = self.fetching.clone().lock_owned().await;
        // Another caller may have fetched them while this one waited.
        let held = self.set.load().usable().is_some_and(|set| set.find(kid, alg).is_some());
        if !held && self.due(&last) {
            self.fetch_holding(last).await;
        }
        let set = self.set.load();
        match set.usable() {
            None => Err(Missing::Unfetched),
            Some(set) => set.find(kid, alg).ok_or(Missing::Unknown),
        }
    }

    /// Whether the key published as `jwk` still is (a token verified with it before is then
    /// still taken); the keys are fetched again in the background when they are old.
    pub fn holds(self: &Arc<Self>, jwk: &str) -> bool {
        let set = self.set.load();
        if !set.fresh(self.refresh) {
            self.refresh_in_background();
        }
        set.usable().is_some_and(|set| set.keys.iter().any(|(_, key)| key.jwk == jwk))
    }

    /// Whether the last fetch (or try) is `refetch` behind.
    fn due(&self, last: &Option<Instant>) -> bool {
        last.is_none_or(|at| at.elapsed() >= self.refetch)
    }

    /// Fetches the keys in a task of their own, unless a fetch runs or is not due.
    fn refresh_in_background(self: &Arc<Self>) {
        let Ok(last) = self.fetching.clone().try_lock_owned() else { return };
        if !self.due(&last) {
            return;
        }
        let keys = self.clone();
        tokio::spawn(async move { keys.fetch_holding(last).await });
    }

    /// Fetches the keys, holding the fetch's lock; keeps the ones held when it fails.
    async fn fetch_holding(&self, mut last: OwnedMutexGuard<Option<Instant>>) {
        *last = Some(Instant::now());
        match self.fetch().await {
            Ok(keys) => {
                tracing::info!(issuer = self.issuer, keys = keys.len(), "issuer keys fetched");
                self.set.store(Arc::new(KeySet { keys, fetched: Some(Instant::now()) }));
            }
            Err(error) => tracing::warn!(issuer = self.issuer, error, "issuer keys not fetched"),
        }
    }

    async fn fetch(&self) -> Result<Vec<(Option<String>, Arc<Key>)>, String> {
        let jwks_uri = match &self.jwks_uri {
            Some(uri) => uri.clone(),
            None => Discovery::of(&self.client, &self.issuer).await?.endpoint("jwks_uri")?,
        };
        let jwks =
            json(self.client.get(&jwks_uri)).await.map_err(|e| format!("{jwks_uri}: {e}"))?;
        let keys = jwks.get("keys").and_then(Value::as_array).ok_or("the JWKS has no `keys`")?;
        Ok(keys.iter().take(MAX_KEYS).filter_map(key).collect())
    }
}

/// A JWKS entry as a verification key; `None` for a symmetric key, an encryption key, or one
/// that does not parse.
fn key(value: &Value) -> Option<(Option<String>, Arc<Key>)> {
    let jwk: Jwk = serde_json::from_value(value.clone()).ok()?;
    if matches!(jwk.algorithm, AlgorithmParameters::OctetKey(_))
        || matches!(jwk.common.public_key_use, Some(PublicKeyUse::Encryption))
    {
        return None;
    }
    let alg = match jwk.common.key_algorithm {
        Some(bound) => Some(Algorithm::from_str(&bound.to_string()).ok()?),
        None => None,
    };
    let key = DecodingKey::from_jwk(&jwk).ok()?;
    let published = value.to_string();
    Some((jwk.common.key_id.clone(), Arc::new(Key { key, alg, jwk: published })))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_symmetric_key_in_a_jwks_is_never_a_key() {
        let oct = serde_json::json!({"kty": "oct", "kid": "s", "k": "c2VjcmV0"});
        assert!(key(&oct).is_none());
        let ed = serde_json::json!({
            "kty": "OKP", "crv": "Ed25519", "kid": "e", "alg": "EdDSA",
            "x": "11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo"
        });
        let (kid, found) = key(&ed).unwrap_or_else(|| panic!("an Ed25519 key"));
        assert_eq!(kid.as_deref(), Some("e"));
        assert_eq!(found.alg, Some(Algorithm::EdDSA));
        let set = KeySet { keys: vec![(kid, found)], fetched: Some(Instant::now()) };
        assert!(set.find(Some("e"), Algorithm::EdDSA).is_some());
        assert!(set.find(None, Algorithm::EdDSA).is_some(), "the one key of its kind");
        assert!(set.find(Some("e"), Algorithm::RS256).is_none(), "another family");
        assert!(set.find(Some("x"), Algorithm::EdDSA).is_none());
    }
}
