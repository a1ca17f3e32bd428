//! A node's token: what `toolgate fleet register` issues and the node's shipper presents to
//! the ingest service (`authorization: Bearer <token>`). 32 random bytes, base64url, after a
//! prefix that says what it is; the store keeps only its SHA-256, by which the ingest service
//! finds the node. The token alone decides which node a caller is.

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use sha2::{Digest, Sha256};

/// What every token starts with.
const PREFIX: &str = "tgnode_";

/// The length of a token: the prefix and 43 characters of base64url.
const LEN: usize = PREFIX.len() + 43;

/// A new token, from the operating system's random source.
pub fn issue() -> Result<String, getrandom::Error> {
    let mut secret = [0u8; 32];
    getrandom::fill(&mut secret)?;
    Ok(format!("{PREFIX}{}", URL_SAFE_NO_PAD.encode(secret)))
}

/// The hash the store keeps of `token` (lower-case hex SHA-256), or `None` when `token` is not
/// shaped like one (refused without asking the store).
pub fn hash(token: &str) -> Option<String> {
    let shaped = token.len() == LEN
        && token.starts_with(PREFIX)
        && token[PREFIX.len()..].bytes().all(|b| b.is_ascii_alphanumeric() || b"-_".contains(&b));
    shaped.then(|| hex::encode(Sha256::digest(token.as_bytes())))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_issued_token_hashes_and_a_misshapen_one_does_not() {
        let token = issue().unwrap();
        assert_eq!(token.len(), LEN);
        assert_eq!(hash(&token).unwrap().len(), 64);
        assert_ne!(issue().unwrap(), token);
        for bad in ["", "tgnode_", &token[1..], &format!("{token}x"), &token.replace('_', "+")] {
            assert_eq!(hash(bad), None, "{bad}");
        }
    }
}
