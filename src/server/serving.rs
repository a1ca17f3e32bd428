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
use tower::layer::util::{Identity, Stack};

use std::sync::Arc;

use crate::config::Limits;
use crate::listener::{Admission, Door, FrontLayer, LenientAuthority, Limited, Listener, Preface};
use crate::store::WriterThread;
use crate::tls::{Acceptor, Port};

/// The server running: what it ended with.
pub(super) type Served<'a> =
    Pin<Box<dyn Future<Output = Result<(), tonic::transport::Error>> + Send + 'a>>;

/// The accepted connections within the port's caps (`admission`: over them a connection is
/// closed at once), with Nagle's algorithm off: a small response must not wait for the peer's
/// delayed ACK (40 ms on Linux). A failed accept (out of descriptors, say) pauses the loop a
/// moment rather than spinning on it.
fn incoming(
    listener: TcpListener,
    admission: Arc<Admission>,
) -> impl tokio_stream::Stream<Item = std::io::Result<Limited<tokio::net::TcpStream>>> {
    TcpListenerStream::new(listener)
        .then(|accepted| async move {
            if accepted.is_err() {
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
            accepted
        })
        .filter_map(move |accepted| {
            let stream = match accepted {
                Ok(stream) => stream,
                Err(e) => return Some(Err(e)),
            };
            let peer = stream.peer_addr().ok().map(|a| a.ip());
            let permit = admission.admit(peer)?;
            if let Err(e) = stream.set_nodelay(true) {
                return Some(Err(e));
            }
            Some(Ok(Limited::new(stream, permit)))
        })
}

/// A gRPC port's router: every call through the port's [`Door`] first.
pub(super) type Router = tonic::transport::server::Router<Stack<FrontLayer, Identity>>;

/// The gRPC server as every port runs it (see [`builder`]), behind `door`, with reflection
/// over toolgate's protos and gRPC health's in both its versions: `grpc.reflection.v1`, and
/// `v1alpha` for the clients that still speak only that (Python's `grpcio-reflection`, older
/// `grpcurl`).
pub(super) fn reflected(
    limits: &Limits,
    door: Arc<dyn Door>,
) -> Result<Router, tonic_reflection::server::Error> {
    let configure = || {
        tonic_reflection::server::Builder::configure()
            .register_encoded_file_descriptor_set(crate::proto::FILE_DESCRIPTOR_SET)
            .register_encoded_file_descriptor_set(tonic_health::pb::FILE_DESCRIPTOR_SET)
    };
    let v1 = configure().build_v1()?;
    let v1alpha = configure().build_v1alpha()?;
    let stall = Duration::from_millis(limits.stalled_message_timeout_ms);
    Ok(builder(limits).layer(FrontLayer::new(door, stall)).add_service(v1).add_service(v1alpha))
}

/// The gRPC server as every port runs it: its streams and calls bounded, and HTTP/2 keepalive
/// on, so that a peer that vanished without closing its connection lets it go.
fn builder(limits: &Limits) -> tonic::transport::Server {
    let ms = Duration::from_millis;
    tonic::transport::Server::builder()
        .max_concurrent_streams(limits.max_concurrent_streams)
        .timeout(ms(limits.request_timeout_ms))
        .http2_keepalive_interval(Some(ms(limits.http2_keepalive_interval_ms)))
        .http2_keepalive_timeout(Some(ms(limits.http2_keepalive_timeout_ms)))
}

/// Serves `router` on `listener` (through `tls` when given) until `stopping` resolves: at most
/// `limits.max_connections` connections (of one peer, `max_connections_per_peer` that have
/// not yet carried an authenticated call), each of which must send its HTTP/2 preface within
/// `handshake_timeout_ms` and carry an authenticated call within
/// `unauthenticated_timeout_ms`.
pub(super) fn serve<'a>(
    router: Router,
    listener: Listener,
    tls: Option<Arc<Acceptor>>,
    limits: &Limits,
    stopping: impl Future<Output = ()> + Send + 'a,
) -> Served<'a> {
    let ms = Duration::from_millis;
    let admission = Admission::guarding(
        limits.max_connections,
        limits.max_connections_per_peer,
        ms(limits.unauthenticated_timeout_ms),
    );
    let within = ms(limits.handshake_timeout_ms);
    match (listener, tls) {
        (Listener::Tcp(listener), None) => {
            let incoming =
                incoming(listener, admission).map_ok(move |io| Preface::new(io.mark(), io, within));
            Box::pin(router.serve_with_incoming_shutdown(incoming, stopping))
        }
        (Listener::Tcp(listener), Some(tls)) => {
            let incoming = tls
                .handshakes(incoming(listener, admission), Port::Grpc)
                .map_ok(move |io| Preface::new(io.get_ref().0.mark(), io, within));
            Box::pin(router.serve_with_incoming_shutdown(incoming, stopping))
        }
        // Unix connections only: their authorities are made ones h2 accepts (see
        // `LenientAuthority`); TCP keeps h2's strict checks. Local peers are one peer.
        (Listener::Unix { listener, .. }, None) => {
            let incoming = local(UnixListenerStream::new(listener), admission)
                .map_ok(move |io| Preface::new(io.mark(), LenientAuthority::new(io), within));
            Box::pin(router.serve_with_incoming_shutdown(incoming, stopping))
        }
        (Listener::Unix { listener, .. }, Some(tls)) => {
            let accepted = local(UnixListenerStream::new(listener), admission);
            let handshakes = tls.handshakes(accepted, Port::Grpc);
            let incoming = handshakes.map_ok(move |io| {
                Preface::new(io.get_ref().0.mark(), LenientAuthority::new(io), within)
            });
            Box::pin(router.serve_with_incoming_shutdown(incoming, stopping))
        }
    }
}

/// Local connections within the cap in all.
fn local<S, IO>(
    accepted: S,
    admission: Arc<Admission>,
) -> impl tokio_stream::Stream<Item = std::io::Result<Limited<IO>>>
where
    S: tokio_stream::Stream<Item = std::io::Result<IO>>,
{
    accepted.filter_map(move |accepted| match accepted {
        Ok(io) => Some(Ok(Limited::new(io, admission.admit(None)?))),
        Err(e) => Some(Err(e)),
    })
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
