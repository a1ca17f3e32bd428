//! RFC 8785 (JSON Canonicalization Scheme) of tool arguments and their SHA-256: the same
//! arguments hash the same whatever their key order, spacing or number spelling, in any client.

use std::fmt;
use std::sync::Arc;

use hmac::{Hmac, KeyInit, Mac};
use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

use crate::config::{ArgsHashConfig, ConfigError};
use crate::registry::MAX_EXACT_INTEGER;

/// Arguments in canonical form, with their hash.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CanonicalArgs {
    /// The RFC 8785 serialization.
    pub json: String,
    /// Lower-case hex SHA-256 of [`Self::json`].
    pub hash: String,
}

/// Arguments that cannot be canonicalized.
#[derive(Debug, thiserror::Error)]
pub enum ArgsError {
    /// A number outside what JSON's doubles can hold.
    #[error("cannot be canonicalized: {0}")]
    Json(#[from] serde_json::Error),
    /// A number JSON's doubles cannot hold exactly: it would hash as another.
    #[error(
        "`{0}`: a number beyond ±9007199254740991 (2^53 - 1), which JSON numbers cannot carry \
         exactly: send it as a string, or normalize it with a `decimal` rule"
    )]
    Inexact(String),
    /// A whole number written as a fraction or with an exponent: canonical JSON writes it as
    /// the integer, which a harness may read as another type.
    #[error(
        "`{0}`: a whole number written as a fraction or with an exponent (`1.0`, `1e2`), which \
         canonical JSON writes as the integer: send the integer, or the text under a `decimal` \
         rule"
    )]
    Fraction(String),
    /// Negative zero: canonical JSON writes it as `0`.
    #[error("`{0}`: negative zero, which canonical JSON writes as `0`: send `0`")]
    NegativeZero(String),
}

/// Canonicalizes an argument object and hashes it with plain SHA-256.
pub fn canonicalize(args: &Map<String, Value>) -> Result<CanonicalArgs, ArgsError> {
    ArgsHasher::Sha256.hash(args)
}

/// How argument hashes are made: plain SHA-256 of the canonical text (the default), or
/// HMAC-SHA256 under a secret key, written `hmac-sha256:<key id>:<hex>` so that a hash says
/// which key made it and keys can be rotated (docs/security.md).
#[derive(Clone, Default)]
pub enum ArgsHasher {
    #[default]
    Sha256,
    Hmac {
        key_id: String,
        key: Arc<[u8]>,
    },
}

impl ArgsHasher {
    /// HMAC-SHA256 under `key`, named `key_id` in every hash.
    pub fn keyed(key_id: &str, key: &[u8]) -> Self {
        Self::Hmac { key_id: key_id.to_owned(), key: key.into() }
    }

    /// The hash of arguments already in canonical form.
    #[allow(clippy::expect_used)] // see the INVARIANT inside
    pub fn hash_canonical(&self, json: &str) -> String {
        match self {
            Self::Sha256 => hex::encode(Sha256::digest(json.as_bytes())),
            Self::Hmac { key_id, key } => {
                // INVARIANT: HMAC takes a key of any length.
                let mut mac = Hmac::<Sha256>::new_from_slice(key).expect("any key length");
                mac.update(json.as_bytes());
                format!("hmac-sha256:{key_id}:{}", hex::encode(mac.finalize().into_bytes()))
            }
        }
    }

    /// Canonicalizes an argument object and hashes it; a number that canonical form would
    /// write alike with another (beyond JSON's exact range, a whole number as a fraction,
    /// negative zero) is refused with its path, never hashed as another's.
    pub fn hash(&self, args: &Map<String, Value>) -> Result<CanonicalArgs, ArgsError> {
        if let Some(refused) = confusable(args) {
            return Err(refused);
        }
        let json = serde_jcs::to_string(args)?;
        let hash = self.hash_canonical(&json);
        Ok(CanonicalArgs { json, hash })
    }

    pub fn is_keyed(&self) -> bool {
        matches!(self, Self::Hmac { .. })
    }
}

/// What canonical form would confuse of a number: one beyond JSON's exact range (an integer
/// past ±(2^53 - 1), or a double as large: every such double is whole, and may be a longer
/// integer rounded on the way in), a whole number read as a double (written `1.0` or `1e2`),
/// negative zero.
fn problem(n: &serde_json::Number) -> Option<fn(String) -> ArgsError> {
    match (n.as_u64(), n.as_i64(), n.as_f64()) {
        (Some(u), _, _) => (u > MAX_EXACT_INTEGER).then_some(ArgsError::Inexact),
        (None, Some(i), _) => (i.unsigned_abs() > MAX_EXACT_INTEGER).then_some(ArgsError::Inexact),
        (None, None, Some(f)) if f.abs() > MAX_EXACT_INTEGER as f64 => Some(ArgsError::Inexact),
        (None, None, Some(f)) if f == 0.0 && f.is_sign_negative() => Some(ArgsError::NegativeZero),
        (None, None, Some(f)) if f.fract() == 0.0 => Some(ArgsError::Fraction),
        (None, None, Some(_)) => None,
        _ => Some(ArgsError::Inexact),
    }
}

/// The first number in `args` that canonical form would confuse (see [`problem`]), with its
/// path (`args.a.0.b`).
fn confusable(args: &Map<String, Value>) -> Option<ArgsError> {
    type Found = Option<fn(String) -> ArgsError>;
    fn walk(value: &Value, path: &mut String, found: &mut Found) -> bool {
        let at = path.len();
        let hit = match value {
            Value::Number(n) => {
                *found = problem(n);
                found.is_some()
            }
            Value::Array(items) => items.iter().enumerate().any(|(i, item)| {
                path.truncate(at);
                path.push_str(&format!(".{i}"));
                walk(item, path, found)
            }),
            Value::Object(members) => within(members, path, found),
            Value::Null | Value::Bool(_) | Value::String(_) => false,
        };
        if !hit {
            path.truncate(at);
        }
        hit
    }
    fn within(members: &Map<String, Value>, path: &mut String, found: &mut Found) -> bool {
        let at = path.len();
        members.iter().any(|(name, item)| {
            path.truncate(at);
            path.push('.');
            path.extend(name.chars().take(64));
            walk(item, path, found)
        })
    }
    let (mut path, mut found) = ("args".to_owned(), None);
    match within(args, &mut path, &mut found) {
        true => found.map(|refused| refused(path)),
        false => None,
    }
}

impl fmt::Debug for ArgsHasher {
    /// Never the key.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Sha256 => f.write_str("Sha256"),
            Self::Hmac { key_id, .. } => write!(f, "Hmac {{ key_id: {key_id:?}, .. }}"),
        }
    }
}

impl ArgsHasher {
    /// The hasher `[args_hash]` describes: keyed when a key is configured, plain SHA-256 otherwise.
    pub fn from_config(config: &ArgsHashConfig) -> Result<Self, ConfigError> {
        let key = match (&config.key_file, &config.key_env) {
            (Some(_), Some(_)) => {
                return Err(ConfigError::Key(
                    "give args_hash.key_file or key_env, not both".into(),
                ));
            }
            (Some(path), None) => std::fs::read(path)
                .map_err(|e| ConfigError::Key(format!("cannot read `{}`: {e}", path.display())))?,
            (None, Some(var)) => std::env::var(var)
                .map_err(|_| {
                    ConfigError::Key(format!("the environment variable `{var}` is not set"))
                })?
                .into_bytes(),
            (None, None) => return Ok(ArgsHasher::Sha256),
        };
        let key = key.trim_ascii_end();
        if key.is_empty() {
            return Err(ConfigError::Key("the args_hash key is empty".into()));
        }
        let id = match &config.key_id {
            Some(id) => id.clone(),
            None => hex::encode(&Sha256::digest(key)[..4]),
        };
        Ok(ArgsHasher::keyed(&id, key))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn canon(text: &str) -> CanonicalArgs {
        let Value::Object(map) = serde_json::from_str(text).unwrap() else {
            panic!("not an object")
        };
        canonicalize(&map).unwrap()
    }

    #[test]
    fn key_order_spacing_and_a_fractions_spelling_do_not_change_the_hash() {
        let a = canon(r#"{"path": "/tmp/x", "limit": 10, "opts": {"b": 0.50, "a": 1.25e1}}"#);
        let b = canon(r#"{"opts":{"a":12.25,"b":5e-1},"limit":10,"path":"/tmp/x"}"#);
        assert_ne!(a, b, "12.25 is not 12.5");
        let b = canon(r#"{"opts":{"a":125E-1,"b":5e-1},"limit":10,"path":"/tmp/x"}"#);
        assert_eq!(a.json, r#"{"limit":10,"opts":{"a":12.5,"b":0.5},"path":"/tmp/x"}"#);
        assert_eq!(a, b);
    }

    #[test]
    fn what_canonical_form_would_write_alike_is_refused_with_its_path() {
        let args = |text: &str| serde_json::from_str::<Map<String, Value>>(text).unwrap();
        let refused = |text: &str| canonicalize(&args(text)).unwrap_err().to_string();
        assert!(refused(r#"{"a": {"b": 1.0}}"#).starts_with("`args.a.b`: a whole number"));
        assert!(refused(r#"{"a": 1e2}"#).contains("whole number written as a fraction"));
        assert!(refused(r#"{"a": [-0.0]}"#).starts_with("`args.a.0`: negative zero"));
        assert!(canonicalize(&args(r#"{"a": 0, "b": 100, "c": -5, "d": 0.1}"#)).is_ok());
    }

    #[test]
    fn numbers_beyond_the_exact_range_are_refused_with_their_path() {
        let args = |text: &str| serde_json::from_str::<Map<String, Value>>(text).unwrap();
        let refused = |text: &str| match canonicalize(&args(text)) {
            Err(ArgsError::Inexact(path)) => path,
            other => panic!("{text}: {other:?}"),
        };
        assert_eq!(refused(r#"{"amount": 9007199254740993}"#), "args.amount");
        assert_eq!(refused(r#"{"a": [1, {"b": -9007199254740993}]}"#), "args.a.1.b");
        assert_eq!(refused(r#"{"a": 123456789012345678901234}"#), "args.a");
        assert_eq!(refused(r#"{"a": 1e300}"#), "args.a");
        for fine in [r#"{"a": 9007199254740991}"#, r#"{"a": -9007199254740991, "b": 0.5}"#] {
            assert!(canonicalize(&args(fine)).is_ok(), "{fine}");
        }
        // Two amounts that would hash alike if rounded are refused, not confused.
        assert!(canonicalize(&args(r#"{"a": 9007199254740992}"#)).is_err());
    }

    #[test]
    fn keys_sort_by_utf16_code_units() {
        // RFC 8785 §3.2.3: U+E000 sorts before U+1F600 in UTF-16 (0xE000 < 0xD83D is false), so
        // the surrogate pair of the emoji comes first.
        let a = canon("{\"\u{e000}\":1,\"\u{1f600}\":2}");
        assert_eq!(a.json, "{\"\u{1f600}\":2,\"\u{e000}\":1}");
    }

    #[test]
    fn hash_is_sha256_of_the_canonical_text() {
        let a = canon(r#"{"b":2,"a":1}"#);
        // printf '{"a":1,"b":2}' | sha256sum
        assert_eq!(a.hash, "43258cff783fe7036d8a43033f830adfc60ec037382473548ac742b888292777");
    }

    #[test]
    fn a_keyed_hash_names_its_key_and_is_rfc_4231_hmac() {
        // RFC 4231 test case 2: key "Jefe", data "what do ya want for nothing?".
        let hasher = ArgsHasher::keyed("k1", b"Jefe");
        assert_eq!(
            hasher.hash_canonical("what do ya want for nothing?"),
            "hmac-sha256:k1:5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
        );
        assert!(!format!("{hasher:?}").contains("Jefe"));
    }
}
