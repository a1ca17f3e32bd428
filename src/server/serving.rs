//! Serving a router on a listener, plain or through TLS, until shutdown; the grace period
//! after it; and the writer's last commit. Shared by the sidecar and the fleet's audit-only
//! server.

use std::future::Future;
use std::pin::Pin;
use std::time::Duration;

use futures_util::TryStreamExt;
use tokio::net::TcpListener;
use tokio::sync::Notify;
use tokio_stream::StreamExt;
use tokio_stream::wrappers::{TcpListenerStream, UnixListenerStream};
use tonic::transport::server::Router;

use crate::listener::{LenientAuthority, Listener};
use crate::store::WriterThread;
use crate::tls::{Acceptor, Port};

/// The server running: what it ended with.
pub(super) type Served<'a> =
    Pin<Box<dyn Future<Output = Result<(), tonic::transport::Error>> + Send + 'a>>;

/// The accepted connections, with Nagle's algorithm off: a small response must not wait for
/// the peer's delayed ACK (40 ms on Linux).
fn incoming(
    listener: TcpListener,
) -> impl tokio_stream::Stream<Item = std::io::Result<tokio::net::TcpStream>> {
    TcpListenerStream::new(listener).map(|stream| {
        let stream = stream?;
        stream.set_nodelay(true)?;
        Ok(stream)
    })
}

/// Serves `router` on `listener` (through `tls` when given) until `stopping` resolves.
pub(super) fn serve<'a>(
    router: Router,
    listener: Listener,
    tls: Option<std::sync::Arc<Acceptor>>,
    stopping: impl Future<Output = ()> + Send + 'a,
) -> Served<'a> {
    match (listener, tls) {
        (Listener::Tcp(listener), None) => {
            Box::pin(router.serve_with_incoming_shutdown(incoming(listener), stopping))
        }
        (Listener::Tcp(listener), Some(tls)) => Box::pin(router.serve_with_incoming_shutdown(
            tls.handshakes(incoming(listener), Port::Grpc),
            stopping,
        )),
        // Unix connections only: their authorities are made ones h2 accepts (see
        // `LenientAuthority`); TCP keeps h2's strict checks.
        (Listener::Unix { listener, .. }, None) => {
            let incoming = UnixListenerStream::new(listener).map_ok(LenientAuthority::new);
            Box::pin(router.serve_with_incoming_shutdown(incoming, stopping))
        }
        (Listener::Unix { listener, .. }, Some(tls)) => {
            let handshakes = tls.handshakes(UnixListenerStream::new(listener), Port::Grpc);
            let incoming = handshakes.map_ok(LenientAuthority::new);
            Box::pin(router.serve_with_incoming_shutdown(incoming, stopping))
        }
    }
}

/// Waits for the trail's writer to commit what it holds and stop, once the services holding
/// its handles are gone. After the calls were `cut`, at most 5 s: connections cut mid-call may
/// still hold writer handles until the runtime ends; what the writer holds is committed
/// meanwhile, and an unfinished group rolls back whole.
pub(super) async fn join_writer(writer: WriterThread, cut: bool) {
    if cut {
        let _ = tokio::time::timeout(Duration::from_secs(5), writer.join()).await;
    } else {
        writer.join().await;
    }
}

/// Runs `served` to its end; once `shutting_down` is notified, calls in flight get `grace_ms`
/// to finish, then they are cut, so that a stuck client cannot hold the shutdown hostage.
/// Whether they were cut.
pub(super) async fn within_grace(
    served: Served<'_>,
    shutting_down: &Notify,
    grace_ms: u64,
) -> (Result<(), tonic::transport::Error>, bool) {
    tokio::select! {
        served = served => (served, false),
        () = async {
            shutting_down.notified().await;
            tokio::time::sleep(Duration::from_millis(grace_ms)).await;
        } => {
            tracing::warn!(grace_ms, "grace period over: cutting the calls still open");
            (Ok(()), true)
        }
    }
}
