//! What a certificate says about its holder: the names a client certificate is known by, and
//! the subject and expiry of the server's own certificate for the log and the metrics.

use tonic::transport::server::{TcpConnectInfo, TlsConnectInfo, UdsConnectInfo};
use x509_parser::prelude::{FromDer, GeneralName, X509Certificate};

use crate::config::NameKind;

/// A name of a certificate's holder, and what kind of name it is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CertName {
    pub kind: NameKind,
    pub value: String,
}

/// The names of the verified client certificate a call came with (over TCP or a unix
/// socket): the subject's common name, then its DNS, URI and e-mail alternative names, each
/// with its kind. Empty without one.
pub fn peer_names(extensions: &http::Extensions) -> Vec<CertName> {
    peer_leaf(extensions, names).unwrap_or_default()
}

/// The SPIFFE ID of the verified client certificate a call came with, when it is an X.509
/// SVID: `None` when it names no `spiffe://` URI; otherwise the ID, or why the certificate is
/// no SVID (SPIFFE's X.509-SVID standard: exactly one URI name, and a leaf that is no CA).
pub fn peer_spiffe_id(extensions: &http::Extensions) -> Option<Result<String, &'static str>> {
    peer_leaf(extensions, svid_id).flatten()
}

/// The peer's address, from a call's connect info (over TCP, plain or through TLS).
pub fn peer_addr(extensions: &http::Extensions) -> Option<std::net::SocketAddr> {
    match extensions.get::<TcpConnectInfo>() {
        Some(info) => info.remote_addr(),
        None => extensions.get::<TlsConnectInfo<TcpConnectInfo>>()?.get_ref().remote_addr(),
    }
}

/// `f` of the verified client certificate a call came with, if it came with one.
fn peer_leaf<T>(extensions: &http::Extensions, f: impl Fn(&[u8]) -> T) -> Option<T> {
    let certs = match extensions.get::<TlsConnectInfo<TcpConnectInfo>>() {
        Some(info) => info.peer_certs(),
        None => extensions.get::<TlsConnectInfo<UdsConnectInfo>>().and_then(|i| i.peer_certs()),
    };
    // rustls puts the end-entity certificate first.
    certs.and_then(|certs| certs.first().map(|leaf| f(leaf)))
}

fn svid_id(der: &[u8]) -> Option<Result<String, &'static str>> {
    let (_, cert) = X509Certificate::from_der(der).ok()?;
    let san = cert.subject_alternative_name().ok().flatten()?;
    let uris: Vec<&str> = san
        .value
        .general_names
        .iter()
        .filter_map(|name| match name {
            GeneralName::URI(uri) => Some(*uri),
            _ => None,
        })
        .collect();
    if !uris.iter().any(|uri| uri.get(..9).is_some_and(|s| s.eq_ignore_ascii_case("spiffe://"))) {
        return None;
    }
    let [uri] = uris.as_slice() else { return Some(Err("an SVID has exactly one URI name")) };
    let is_ca = cert.basic_constraints().ok().flatten().is_some_and(|bc| bc.value.ca);
    let signs = cert
        .key_usage()
        .ok()
        .flatten()
        .is_some_and(|ku| ku.value.key_cert_sign() || ku.value.crl_sign());
    if is_ca || signs {
        return Some(Err("an SVID of a workload is no certificate authority"));
    }
    Some(super::spiffe::spiffe_id(uri).map(ToOwned::to_owned))
}

/// The names in a DER certificate; empty if it does not parse (rustls verified it, so it
/// does). A subject with several common names has none that counts: which would it be?
fn names(der: &[u8]) -> Vec<CertName> {
    let Ok((_, cert)) = X509Certificate::from_der(der) else { return Vec::new() };
    let named = |kind, value: &str| CertName { kind, value: value.to_owned() };
    let cns: Vec<&str> =
        cert.subject().iter_common_name().filter_map(|cn| cn.as_str().ok()).collect();
    let mut names: Vec<CertName> = match cns.as_slice() {
        [cn] => vec![named(NameKind::Cn, cn)],
        _ => Vec::new(),
    };
    if let Ok(Some(san)) = cert.subject_alternative_name() {
        for name in &san.value.general_names {
            match name {
                GeneralName::DNSName(s) => names.push(named(NameKind::Dns, s)),
                GeneralName::URI(s) => names.push(named(NameKind::Uri, s)),
                GeneralName::RFC822Name(s) => names.push(named(NameKind::Email, s)),
                _ => {}
            }
        }
    }
    names
}

/// A certificate's subject and the end of its validity (Unix seconds), if it parses.
pub(super) fn subject_and_expiry(der: &[u8]) -> Option<(String, i64)> {
    let (_, cert) = X509Certificate::from_der(der).ok()?;
    Some((cert.subject().to_string(), cert.validity().not_after.timestamp()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_the_common_name_then_the_alternative_names() {
        let mut params = rcgen::CertificateParams::new(vec!["agent.team-a.svc".to_owned()])
            .expect("valid names");
        params.distinguished_name.push(rcgen::DnType::CommonName, "agent-7");
        params.subject_alt_names.push(rcgen::SanType::URI(
            "spiffe://cluster/ns/team-a/sa/agent".try_into().expect("an IA5 string"),
        ));
        params.not_after = rcgen::date_time_ymd(2031, 1, 2);
        let key = rcgen::KeyPair::generate().expect("a key");
        let cert = params.self_signed(&key).expect("a certificate");
        let named = |kind, value: &str| CertName { kind, value: value.to_owned() };
        assert_eq!(
            names(cert.der()),
            [
                named(NameKind::Cn, "agent-7"),
                named(NameKind::Dns, "agent.team-a.svc"),
                named(NameKind::Uri, "spiffe://cluster/ns/team-a/sa/agent")
            ]
        );
        assert!(names(b"not a certificate").is_empty());
        assert_eq!(subject_and_expiry(cert.der()), Some(("CN=agent-7".to_owned(), 1_925_078_400)));
        let svid = Some(Ok("spiffe://cluster/ns/team-a/sa/agent".to_owned()));
        assert_eq!(svid_id(cert.der()), svid);
    }

    #[test]
    fn an_svid_has_one_uri_and_is_no_ca() {
        let svid = |uris: &[&str], ca: bool| {
            let mut params = rcgen::CertificateParams::new(Vec::<String>::new()).expect("params");
            for uri in uris {
                params.subject_alt_names.push(rcgen::SanType::URI((*uri).try_into().expect("IA5")));
            }
            if ca {
                params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
            }
            let key = rcgen::KeyPair::generate().expect("a key");
            params.self_signed(&key).expect("a certificate").der().to_vec()
        };
        let id = "spiffe://example.org/agents/a";
        assert_eq!(svid_id(&svid(&[id], false)), Some(Ok(id.to_owned())));
        assert_eq!(svid_id(&svid(&["https://example.org/x"], false)), None);
        assert!(matches!(svid_id(&svid(&[id, "https://example.org/x"], false)), Some(Err(_))));
        assert!(matches!(svid_id(&svid(&[id], true)), Some(Err(_))));
        assert!(matches!(svid_id(&svid(&["spiffe://example.org"], false)), Some(Err(_))));
    }
}
