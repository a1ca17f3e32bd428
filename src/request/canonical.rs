//! RFC 8785 (JSON Canonicalization Scheme) of tool arguments and their SHA-256: the same
//! arguments hash the same whatever their key order, spacing or number spelling, in any client.

use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

/// Arguments in canonical form, with their hash.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CanonicalArgs {
    /// The RFC 8785 serialization.
    pub json: String,
    /// Lower-case hex SHA-256 of [`Self::json`].
    pub hash: String,
}

/// Arguments that cannot be canonicalized (a number outside what JSON's doubles can hold).
#[derive(Debug, thiserror::Error)]
#[error("cannot be canonicalized: {0}")]
pub struct ArgsError(#[from] serde_json::Error);

/// Canonicalizes an argument object and hashes it.
pub fn canonicalize(args: &Map<String, Value>) -> Result<CanonicalArgs, ArgsError> {
    let json = serde_jcs::to_string(args)?;
    let hash = hex::encode(Sha256::digest(json.as_bytes()));
    Ok(CanonicalArgs { json, hash })
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
    fn key_order_spacing_and_number_spelling_do_not_change_the_hash() {
        let a = canon(r#"{"path": "/tmp/x", "limit": 10, "opts": {"b": 1.0, "a": 1e2}}"#);
        let b = canon(r#"{"opts":{"a":100,"b":1},"limit":1e1,"path":"/tmp/x"}"#);
        assert_eq!(a, b);
        assert_eq!(a.json, r#"{"limit":10,"opts":{"a":100,"b":1},"path":"/tmp/x"}"#);
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
}
