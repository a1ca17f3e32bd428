//! The TLS handshakes of accepted connections, with the certificate in force at the time.

use std::io;
use std::sync::Arc;
use std::time::Duration;

use arc_swap::ArcSwap;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::sync::mpsc;
use tokio_rustls::TlsAcceptor;
use tokio_rustls::server::TlsStream;
use tokio_stream::wrappers::ReceiverStream;
use tokio_stream::{Stream, StreamExt};

use super::{Loaded, TlsError};
use crate::config::TlsConfig;
use crate::metrics::Metrics;

/// The port a connection came to, which decides the TLS configuration it gets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Port {
    /// gRPC: client certificates as configured.
    Grpc,
    /// The HTTP side port: no client certificate asked for.
    Side,
}

/// Shakes hands with every accepted connection, using the files last loaded.
#[derive(Debug)]
pub struct Acceptor {
    config: TlsConfig,
    current: ArcSwap<Loaded>,
    metrics: Arc<Metrics>,
}

impl Acceptor {
    /// The acceptor `config` describes, or none while TLS is off. Files that do not load
    /// stop the start.
    pub fn new(config: &TlsConfig, metrics: Arc<Metrics>) -> Result<Option<Arc<Self>>, TlsError> {
        let Some(loaded) = super::load(config)? else { return Ok(None) };
        announce(&loaded, &metrics, "TLS certificate in force");
        let current = ArcSwap::from_pointee(loaded);
        Ok(Some(Arc::new(Self { config: config.clone(), current, metrics })))
    }

    /// Reads the files again. If they changed and load, new connections get what they hold;
    /// if they do not load, the certificate in force stays. Either is logged.
    pub fn reload(&self) {
        match super::load(&self.config) {
            Ok(Some(loaded)) if loaded.digest != self.current.load().digest => {
                announce(&loaded, &self.metrics, "TLS certificate reloaded");
                self.current.store(Arc::new(loaded));
            }
            Ok(_) => {}
            Err(e) => {
                tracing::error!(error = %e, "TLS files refused; the certificate in force stays");
            }
        }
    }

    /// Whether the HTTP side port serves TLS too.
    pub fn serves_side_port(&self) -> bool {
        self.config.side_port
    }

    /// Reloads every `reload_interval_ms` (never while it is 0).
    pub async fn watch(self: Arc<Self>) {
        if self.config.reload_interval_ms == 0 {
            return;
        }
        let mut ticks =
            tokio::time::interval(Duration::from_millis(self.config.reload_interval_ms));
        ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        ticks.tick().await;
        loop {
            ticks.tick().await;
            self.reload();
        }
    }

    /// The `accepted` connections to `port` once their handshakes are done. Handshakes run
    /// side by side, so a slow client holds up no one; one that fails or outlasts
    /// `handshake_timeout_ms` is closed and counted. Stops accepting (and drops `accepted`,
    /// closing the listener) once the stream returned is dropped.
    pub fn handshakes<IO, S>(
        self: Arc<Self>,
        accepted: S,
        port: Port,
    ) -> impl Stream<Item = io::Result<TlsStream<IO>>> + use<IO, S>
    where
        IO: AsyncRead + AsyncWrite + Unpin + Send + 'static,
        S: Stream<Item = io::Result<IO>> + Send + 'static,
    {
        let (done, handshaken) = mpsc::channel(64);
        tokio::spawn(async move {
            let mut accepted = std::pin::pin!(accepted);
            loop {
                let next = tokio::select! {
                    next = accepted.next() => next,
                    () = done.closed() => break,
                };
                match next {
                    None => break,
                    Some(Err(e)) => {
                        if done.send(Err(e)).await.is_err() {
                            break;
                        }
                    }
                    Some(Ok(io)) => {
                        let (acceptor, done) = (self.clone(), done.clone());
                        tokio::spawn(async move {
                            if let Some(stream) = acceptor.handshake(io, port).await {
                                let _ = done.send(Ok(stream)).await;
                            }
                        });
                    }
                }
            }
        });
        ReceiverStream::new(handshaken)
    }

    async fn handshake<IO: AsyncRead + AsyncWrite + Unpin>(
        &self,
        io: IO,
        port: Port,
    ) -> Option<TlsStream<IO>> {
        let loaded = self.current.load();
        let config = match (port, &loaded.side) {
            (Port::Side, Some(side)) => side.clone(),
            // The side port takes its connections from here only when it serves TLS.
            _ => loaded.grpc.clone(),
        };
        let acceptor = TlsAcceptor::from(config);
        let timeout = Duration::from_millis(self.config.handshake_timeout_ms);
        let error = match tokio::time::timeout(timeout, acceptor.accept(io)).await {
            Ok(Ok(stream)) => return Some(stream),
            Ok(Err(e)) => e.to_string(),
            Err(_) => format!("no handshake within {timeout:?}"),
        };
        // Debug only: anyone who reaches the port can make these.
        tracing::debug!(error, "TLS handshake failed");
        self.metrics.tls_handshake_failed();
        None
    }
}

fn announce(loaded: &Loaded, metrics: &Metrics, message: &'static str) {
    let expires = chrono::DateTime::from_timestamp(loaded.not_after, 0).unwrap_or_default();
    tracing::info!(subject = loaded.subject, expires = %expires.to_rfc3339(), "{message}");
    metrics.tls_certificate_expiry(loaded.not_after);
}

#[cfg(test)]
mod tests {
    use tokio::io::AsyncWriteExt;

    use super::*;

    #[tokio::test]
    async fn failed_handshakes_are_counted_and_the_expiry_is_published() {
        let dir = tempfile::tempdir().expect("a directory");
        let key = rcgen::KeyPair::generate().expect("a key");
        let mut params =
            rcgen::CertificateParams::new(vec!["localhost".to_owned()]).expect("names");
        params.not_after = rcgen::date_time_ymd(2031, 1, 2);
        let cert = params.self_signed(&key).expect("a certificate");
        let (cert_file, key_file) = (dir.path().join("cert.pem"), dir.path().join("key.pem"));
        std::fs::write(&cert_file, cert.pem()).expect("written");
        std::fs::write(&key_file, key.serialize_pem()).expect("written");
        let config = TlsConfig {
            cert_file: Some(cert_file),
            key_file: Some(key_file),
            ..TlsConfig::default()
        };
        let metrics = Arc::new(Metrics::default());
        let acceptor = Acceptor::new(&config, metrics.clone()).expect("loads").expect("TLS on");

        // A client that speaks something other than TLS, then hangs up.
        let (mut client, server) = tokio::io::duplex(1024);
        let mut handshaken =
            std::pin::pin!(acceptor.handshakes(tokio_stream::iter([Ok(server)]), Port::Grpc));
        client.write_all(b"GET / HTTP/1.1\r\n\r\n").await.expect("written");
        drop(client);

        assert!(handshaken.next().await.is_none(), "no connection comes out");
        let text = metrics.encode();
        assert!(text.contains("toolgate_tls_handshake_failures_total 1"), "{text}");
        assert!(
            text.contains("toolgate_tls_certificate_expiry_timestamp_seconds 1925078400"),
            "{text}"
        );
    }
}
