//! SPIFFE IDs (`spiffe://<trust domain>/<path>`), taken only in the form the SPIFFE ID
//! standard gives them: a trust domain of lowercase letters, digits, `.`, `-` and `_`; a
//! non-empty path of segments of letters, digits, `.`, `-` and `_`, none empty, `.` or `..`; no
//! port, user, query or fragment; at most 2048 bytes.

/// The longest SPIFFE ID.
const MAX_ID_BYTES: usize = 2048;

/// `text` when it is a SPIFFE ID of a workload (with a path), or why it is not.
pub fn spiffe_id(text: &str) -> Result<&str, &'static str> {
    if text.len() > MAX_ID_BYTES {
        return Err("a SPIFFE ID is at most 2048 bytes");
    }
    let rest = text.strip_prefix("spiffe://").ok_or("a SPIFFE ID begins with `spiffe://`")?;
    let (domain, path) = rest.split_once('/').ok_or("a workload's SPIFFE ID has a path")?;
    if !trust_domain(domain) {
        return Err("a trust domain is lowercase letters, digits, `.`, `-` and `_`");
    }
    let segment_ok = |s: &str| {
        !s.is_empty()
            && s != "."
            && s != ".."
            && s.bytes().all(|b| b.is_ascii_alphanumeric() || b"._-".contains(&b))
    };
    if !path.split('/').all(segment_ok) {
        return Err("a SPIFFE ID's path is non-empty segments of letters, digits, `.`, `-`, `_`");
    }
    Ok(text)
}

pub fn trust_domain(domain: &str) -> bool {
    !domain.is_empty()
        && domain
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b"._-".contains(&b))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_taken_only_in_the_standard_form() {
        assert!(spiffe_id("spiffe://example.org/agents/billing").is_ok());
        for bad in [
            "spiffe://example.org",
            "spiffe://example.org/",
            "spiffe://Example.org/a",
            "spiffe://example.org:443/a",
            "spiffe://user@example.org/a",
            "spiffe://example.org/a//b",
            "spiffe://example.org/a/../b",
            "spiffe://example.org/a?q",
            "spiffe://example.org/a#f",
            "https://example.org/a",
        ] {
            assert!(spiffe_id(bad).is_err(), "{bad}");
        }
        assert!(spiffe_id(&format!("spiffe://example.org/{}", "a".repeat(2040))).is_err());
    }
}
