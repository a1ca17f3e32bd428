//! The HTTP side port over TLS, asking for no client certificate.

use super::*;

/// `GET path` over TLS to the side port at `addr`, trusting `ca` and presenting no client
/// certificate: the whole answer, or why there is none.
async fn https_get(addr: std::net::SocketAddr, ca: &Path, path: &str) -> Result<String, String> {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    use tokio_rustls::rustls::pki_types::pem::PemObject;
    use tokio_rustls::rustls::pki_types::{CertificateDer, ServerName};
    use tokio_rustls::rustls::{ClientConfig, RootCertStore, crypto::ring};

    let mut roots = RootCertStore::empty();
    roots.add(CertificateDer::from_pem_file(ca).unwrap()).unwrap();
    let config = ClientConfig::builder_with_provider(std::sync::Arc::new(ring::default_provider()))
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_root_certificates(roots)
        .with_no_client_auth();
    let connector = tokio_rustls::TlsConnector::from(std::sync::Arc::new(config));
    let tcp = tokio::net::TcpStream::connect(addr).await.map_err(|e| e.to_string())?;
    let name = ServerName::try_from("localhost").unwrap();
    let mut tls = connector.connect(name, tcp).await.map_err(|e| format!("{e:?}"))?;
    let request = format!("GET {path} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n");
    tls.write_all(request.as_bytes()).await.map_err(|e| e.to_string())?;
    let mut answer = String::new();
    tls.read_to_string(&mut answer).await.map_err(|e| e.to_string())?;
    Ok(answer)
}

#[tokio::test]
async fn the_side_port_serves_tls_without_asking_for_a_client_certificate() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    let pki = Pki::new();
    // Mutual TLS on the gRPC port; the side port only proves the server.
    let mut tls = pki.server_tls(true);
    tls.side_port = true;
    let grpc = toolgate::listener::Listener::Tcp(TcpListener::bind("127.0.0.1:0").await.unwrap());
    let http = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = http.local_addr().unwrap();
    let mut config = config(&pki, tls);
    config.console.enabled = true;
    tokio::spawn(toolgate::server::run(config, grpc, Some(http), std::future::pending()));

    let healthz = https_get(addr, &pki.server_ca.pem, "/healthz").await;
    // Over TLS the console's session cookie is Secure, and bound to this host alone.
    let console = https_get(addr, &pki.server_ca.pem, "/ui/trail").await.unwrap();
    let cookie = console.lines().find(|l| l.starts_with("set-cookie:")).unwrap();
    assert!(cookie.starts_with("set-cookie: __Host-toolgate-console="), "{cookie}");
    assert!(cookie.contains("; Secure") && cookie.contains("; HttpOnly"), "{cookie}");
    let distrusting = https_get(addr, &pki.stranger_ca.pem, "/healthz").await;
    let mut plaintext = tokio::net::TcpStream::connect(addr).await.unwrap();
    plaintext.write_all(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n").await.unwrap();
    let mut answered = Vec::new();
    let _ = plaintext.read_to_end(&mut answered).await;
    // Both refusals are counted once their handshakes end.
    let mut metrics = String::new();
    for _ in 0..50 {
        metrics = https_get(addr, &pki.server_ca.pem, "/metrics").await.unwrap();
        if metrics.contains("toolgate_tls_handshake_failures_total 2") {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }

    let healthz = healthz.unwrap();
    assert!(healthz.starts_with("HTTP/1.1 200") && healthz.ends_with("ok\n"), "{healthz}");
    assert!(distrusting.as_ref().is_err_and(|e| e.contains("UnknownIssuer")), "{distrusting:?}");
    assert!(!String::from_utf8_lossy(&answered).contains("200"), "answered in plaintext");
    assert!(metrics.contains("toolgate_tls_handshake_failures_total 2"), "{metrics}");
    assert!(metrics.contains("toolgate_tls_certificate_expiry_timestamp_seconds "), "{metrics}");
}
