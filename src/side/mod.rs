//! The HTTP side port a server serves beside gRPC (`--http-listen`, off unless set): its
//! routes ([`routes`]: the probes, the hook endpoint, and the console when it is on), over TLS
//! when `[tls] side_port` says so ([`tls`]). It answers through the
//! server's drain (`/readyz` says 503 then), stops when told, and gets the same grace period
//! as gRPC's calls to finish the requests in flight (a stalled download must not keep the
//! writer from its last commit). The console's followers of the trail are the server's tasks.

use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use tokio::net::TcpListener;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

use crate::listener::{Capped, serve};
use crate::tls::Acceptor;

mod routes;
mod tls;

pub use routes::{hooks, probes};

/// The side port, serving.
pub struct SidePort {
    task: JoinHandle<std::io::Result<()>>,
    stop: oneshot::Sender<()>,
}

/// Serves `app` (the console's routes too, when it is on) on `http`, through `tls` when it
/// serves the side port too, until [`SidePort::finish`].
pub fn start(
    http: TcpListener,
    app: Router,
    tls: Option<Arc<Acceptor>>,
    (auth, limits): (bool, &crate::config::Limits),
) -> std::io::Result<SidePort> {
    let tls = tls.filter(|tls| tls.serves_side_port());
    // Every route, the console's too, behind the guard against other sites' pages.
    let app = routes::guarded(app, auth);
    let addr = http.local_addr()?;
    tracing::info!(listen = %addr, tls = tls.is_some(), "HTTP side port serving");
    let (stop, stopped) = oneshot::channel::<()>();
    let stopped = async {
        let _ = stopped.await;
    };
    let http = Capped::new(http, limits);
    let header_timeout = Duration::from_millis(limits.handshake_timeout_ms);
    let task = match tls {
        Some(tls) => {
            let listener = tls::listener(tls, http)?;
            tokio::spawn(serve(listener, app, header_timeout, stopped))
        }
        None => tokio::spawn(serve(http, app, header_timeout, stopped)),
    };
    Ok(SidePort { task, stop })
}

impl SidePort {
    /// Stops taking requests, waits up to `grace` for those in flight (a download that has
    /// stalled is cut then). Whether requests were cut.
    pub async fn finish(self, grace: Duration) -> bool {
        let _ = self.stop.send(());
        let mut task = self.task;
        match tokio::time::timeout(grace, &mut task).await {
            Ok(Ok(Err(e))) => {
                tracing::error!(error = %e, "the HTTP side port failed");
                false
            }
            Ok(_) => false,
            Err(_) => {
                tracing::warn!("grace period over: cutting the side port's requests still open");
                task.abort();
                true
            }
        }
    }
}
