//! What a certificate says about its holder: the names a client certificate is known by, and
//! the subject and expiry of the server's own certificate for the log and the metrics.

use tonic::transport::server::{TcpConnectInfo, TlsConnectInfo, UdsConnectInfo};
use x509_parser::prelude::{FromDer, GeneralName, X509Certificate};

/// The names of the verified client certificate a call came with (over TCP or a unix
/// socket): the subject's common names, then its DNS, URI and e-mail alternative names.
/// Empty without one.
pub fn peer_names(extensions: &http::Extensions) -> Vec<String> {
    let certs = match extensions.get::<TlsConnectInfo<TcpConnectInfo>>() {
        Some(info) => info.peer_certs(),
        None => extensions.get::<TlsConnectInfo<UdsConnectInfo>>().and_then(|i| i.peer_certs()),
    };
    // rustls puts the end-entity certificate first.
    certs.and_then(|certs| certs.first().map(|leaf| names(leaf))).unwrap_or_default()
}

/// The names in a DER certificate; empty if it does not parse (rustls verified it, so it
/// does).
fn names(der: &[u8]) -> Vec<String> {
    let Ok((_, cert)) = X509Certificate::from_der(der) else { return Vec::new() };
    let mut names: Vec<String> = cert
        .subject()
        .iter_common_name()
        .filter_map(|cn| cn.as_str().ok().map(str::to_owned))
        .collect();
    if let Ok(Some(san)) = cert.subject_alternative_name() {
        for name in &san.value.general_names {
            if let GeneralName::DNSName(s) | GeneralName::URI(s) | GeneralName::RFC822Name(s) = name
            {
                names.push((*s).to_owned());
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
        assert_eq!(
            names(cert.der()),
            ["agent-7", "agent.team-a.svc", "spiffe://cluster/ns/team-a/sa/agent"]
        );
        assert!(names(b"not a certificate").is_empty());
        assert_eq!(subject_and_expiry(cert.der()), Some(("CN=agent-7".to_owned(), 1_925_078_400)));
    }
}
