//! What a request's headers say of where it comes from: the host it names (a loopback name, an
//! IP address, or a name an attacker's DNS may point here) and whether a browser made it from a
//! page of another origin. The side port, the console and the MCP gateway's HTTP front guard
//! on them.

use axum::http::{HeaderMap, header};

/// The `Host` header's name, without its port.
fn host_name(headers: &HeaderMap) -> Option<String> {
    let host = headers.get(header::HOST).and_then(|h| h.to_str().ok())?;
    let name = match host.rsplit_once(':') {
        Some((name, port)) if port.bytes().all(|b| b.is_ascii_digit()) => name,
        _ => host,
    };
    Some(name.trim_end_matches('.').to_ascii_lowercase())
}

/// Whether the request names a loopback host (any port): `localhost`, `127.0.0.1` or `[::1]`.
pub fn loopback_host(headers: &HeaderMap) -> bool {
    host_name(headers).is_some_and(|name| {
        name == "localhost"
            || name == "[::1]"
            || name.parse::<std::net::Ipv4Addr>().is_ok_and(|ip| ip.is_loopback())
    })
}

/// Whether the request names a loopback host or any IP address.
pub fn literal_or_loopback_host(headers: &HeaderMap) -> bool {
    let literal = host_name(headers).is_some_and(|name| {
        name.parse::<std::net::IpAddr>().is_ok()
            || name
                .strip_prefix('[')
                .and_then(|n| n.strip_suffix(']'))
                .is_some_and(|n| n.parse::<std::net::Ipv6Addr>().is_ok())
    });
    literal || loopback_host(headers)
}

/// Whether a browser says the request comes from a page of another origin: `Origin` names
/// another host than the request's (`null`, which a `no-referrer` page sends with its own
/// forms, tells nothing and is left to the console's CSRF check), or `Sec-Fetch-Site` says
/// `cross-site`.
pub fn foreign_origin(headers: &HeaderMap) -> bool {
    let text = |name: &str| headers.get(name).and_then(|v| v.to_str().ok());
    if text("sec-fetch-site") == Some("cross-site") && text("sec-fetch-mode") != Some("navigate") {
        return true;
    }
    match (text("origin"), text("host")) {
        (None | Some("null"), _) => false,
        (Some(origin), Some(host)) => origin
            .split_once("://")
            .is_none_or(|(_, authority)| !authority.eq_ignore_ascii_case(host)),
        (Some(_), None) => true,
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use axum::http::HeaderValue;

    use super::*;

    /// A request's headers, for the checks on them here, in the side port and in the console.
    pub(crate) fn headers(pairs: &[(&'static str, &'static str)]) -> HeaderMap {
        let mut headers = HeaderMap::new();
        for (name, value) in pairs {
            headers.insert(*name, HeaderValue::from_static(value));
        }
        headers
    }

    #[test]
    fn only_loopback_names_are_answered_without_auth() {
        for host in ["localhost:9090", "127.0.0.1:1", "127.9.9.9", "[::1]:9090", "LOCALHOST."] {
            assert!(loopback_host(&headers(&[("host", host)])), "{host}");
        }
        for host in ["evil.example:9090", "localhost.evil.example", "10.0.0.1", "[::2]:1"] {
            assert!(!loopback_host(&headers(&[("host", host)])), "{host}");
        }
        assert!(!loopback_host(&HeaderMap::new()));
        for host in ["10.0.0.1:9464", "[fd00::1]:9464"] {
            assert!(literal_or_loopback_host(&headers(&[("host", host)])), "{host}");
        }
        assert!(!literal_or_loopback_host(&headers(&[("host", "rebound.example")])));
    }

    #[test]
    fn a_page_of_another_origin_is_foreign_and_this_host_or_none_is_not() {
        let host = ("host", "127.0.0.1:9464");
        assert!(foreign_origin(&headers(&[host, ("origin", "https://evil.example")])));
        assert!(foreign_origin(&headers(&[host, ("sec-fetch-site", "cross-site")])));
        assert!(!foreign_origin(&headers(&[host, ("origin", "http://127.0.0.1:9464")])));
        assert!(!foreign_origin(&headers(&[host, ("origin", "null")])));
        assert!(!foreign_origin(&headers(&[host])));
    }
}
