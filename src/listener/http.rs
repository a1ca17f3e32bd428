//! HTTP/1 served within a port's caps, for the side port and the MCP gateway's HTTP front:
//! [`Capped`] holds the connection caps, [`serve`] the header-read timeout and the drain.

use std::future::Future;

use axum::Router;

/// Serves `app` over HTTP/1 on `listener` until `shutdown` resolves, then lets the
/// connections finish what they are answering. A connection must send a request's head within
/// `header_timeout` (its first one, and each next one on a kept-alive connection): a peer that
/// sends nothing, or a byte at a time, is closed. `listener` holds the port's caps on
/// connections ([`Capped`], or the TLS side listener over one).
pub async fn serve<L>(
    mut listener: L,
    app: Router,
    header_timeout: std::time::Duration,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()>
where
    L: axum::serve::Listener,
{
    use hyper_util::rt::{TokioIo, TokioTimer};
    use hyper_util::service::TowerToHyperService;

    let mut builder = hyper::server::conn::http1::Builder::new();
    builder.timer(TokioTimer::new()).header_read_timeout(header_timeout);
    let (stop, stopping) = tokio::sync::watch::channel(false);
    let mut connections = tokio::task::JoinSet::new();
    let mut shutdown = std::pin::pin!(shutdown);
    loop {
        let (io, _) = tokio::select! {
            accepted = listener.accept() => accepted,
            () = &mut shutdown => break,
        };
        let connection = builder
            .serve_connection(TokioIo::new(io), TowerToHyperService::new(app.clone()))
            .with_upgrades();
        let mut stopping = stopping.clone();
        connections.spawn(async move {
            let mut connection = std::pin::pin!(connection);
            let stopped = tokio::select! {
                _ = connection.as_mut() => false,
                _ = stopping.wait_for(|stop| *stop) => true,
            };
            if stopped {
                connection.as_mut().graceful_shutdown();
                let _ = connection.await;
            }
        });
        while connections.try_join_next().is_some() {}
    }
    let _ = stop.send(true);
    while connections.join_next().await.is_some() {}
    Ok(())
}

/// A TCP listener within its port's caps: a connection over them is closed as it is accepted,
/// and a failed accept (out of descriptors, say) pauses a moment rather than spinning.
#[derive(Debug)]
pub struct Capped {
    listener: tokio::net::TcpListener,
    admission: std::sync::Arc<crate::listener::Admission>,
}

impl Capped {
    /// `listener`, holding at most `limits.max_connections` connections, and
    /// `max_connections_per_peer` of one address.
    pub fn new(listener: tokio::net::TcpListener, limits: &crate::config::Limits) -> Self {
        let admission = crate::listener::Admission::new(
            limits.max_connections,
            limits.max_connections_per_peer,
        );
        Self { listener, admission }
    }

    /// The next connection within the caps, or the error that ended the accepting.
    pub async fn next(
        &mut self,
    ) -> (crate::listener::Limited<tokio::net::TcpStream>, std::net::SocketAddr) {
        loop {
            match self.listener.accept().await {
                Ok((stream, peer)) => {
                    let Some(permit) = self.admission.admit(Some(peer.ip())) else { continue };
                    let _ = stream.set_nodelay(true);
                    return (crate::listener::Limited::new(stream, permit), peer);
                }
                Err(_) => tokio::time::sleep(std::time::Duration::from_millis(50)).await,
            }
        }
    }
}

impl axum::serve::Listener for Capped {
    type Io = crate::listener::Limited<tokio::net::TcpStream>;
    type Addr = std::net::SocketAddr;

    async fn accept(&mut self) -> (Self::Io, Self::Addr) {
        self.next().await
    }

    fn local_addr(&self) -> std::io::Result<Self::Addr> {
        self.listener.local_addr()
    }
}
