//! The HTTP side port over TLS: the listener axum serves from.

use std::io;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::Arc;

use tokio::net::TcpStream;
use tokio_rustls::server::TlsStream;
use tokio_stream::{Stream, StreamExt};

use crate::listener::{Capped, Limited};
use crate::tls::{Acceptor, Port};

type Handshaken = Pin<Box<dyn Stream<Item = io::Result<TlsStream<Limited<TcpStream>>>> + Send>>;

/// The side port's connections, once their TLS handshakes are done.
pub struct SideListener {
    handshaken: Handshaken,
    local: SocketAddr,
}

impl std::fmt::Debug for SideListener {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SideListener").field("local", &self.local).finish_non_exhaustive()
    }
}

/// `listener`, serving TLS with the side port's configuration of `acceptor`.
pub fn listener(acceptor: Arc<Acceptor>, listener: Capped) -> io::Result<SideListener> {
    let local = axum::serve::Listener::local_addr(&listener)?;
    let accepted = futures_util::stream::unfold(listener, |mut listener| async move {
        let (io, _) = listener.next().await;
        Some((Ok(io), listener))
    });
    let handshaken = Box::pin(acceptor.handshakes(accepted, Port::Side));
    Ok(SideListener { handshaken, local })
}

impl axum::serve::Listener for SideListener {
    type Io = TlsStream<Limited<TcpStream>>;
    type Addr = SocketAddr;

    async fn accept(&mut self) -> (Self::Io, Self::Addr) {
        loop {
            match self.handshaken.next().await {
                Some(Ok(stream)) => match stream.get_ref().0.get_ref().peer_addr() {
                    Ok(peer) => return (stream, peer),
                    // The peer is already gone.
                    Err(_) => continue,
                },
                Some(Err(e)) => {
                    // Out of descriptors, say: give the process a moment, as axum does.
                    tracing::error!(error = %e, "the HTTP side port cannot accept");
                    tokio::time::sleep(std::time::Duration::from_secs(1)).await;
                }
                // The listener is gone only when the server stops.
                None => std::future::pending().await,
            }
        }
    }

    fn local_addr(&self) -> io::Result<Self::Addr> {
        Ok(self.local)
    }
}
