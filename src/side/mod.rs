//! The HTTP side port a server serves beside gRPC (`--http-listen`, off unless set): its
//! routes ([`routes`]: the probes, the hook endpoint, and the console when it is on), over TLS
//! when `[tls] side_port` says so ([`tls`]). It answers through the
//! server's drain (`/readyz` says 503 then), stops when told, and gets the same grace period
//! as gRPC's calls to finish the requests in flight (a stalled download must not keep the
//! writer from its last commit); the console's followers of the trail are read-only, and are
//! simply stopped.

use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use tokio::net::TcpListener;
use tokio::sync::{oneshot, watch};
use tokio::task::JoinHandle;

use crate::audit::Trails;
use crate::console::Parts;
use crate::listener::{Capped, serve};
use crate::tls::Acceptor;

mod routes;
mod tls;

pub use routes::{hooks, probes};

/// The side port, serving.
pub struct SidePort {
    task: JoinHandle<std::io::Result<()>>,
    stop: oneshot::Sender<()>,
    /// Kept so that the followers' `stopping` stays false until they are aborted.
    _following: watch::Sender<bool>,
    followers: Vec<JoinHandle<()>>,
}

/// Serves `app` on `http` (and the console of `console`, the trails it reads), through `tls`
/// when it serves the side port too, until [`SidePort::finish`].
pub fn start(
    http: TcpListener,
    mut app: Router,
    tls: Option<Arc<Acceptor>>,
    console: Option<(Parts, Arc<dyn Trails>)>,
    (auth, limits): (bool, &crate::config::Limits),
) -> std::io::Result<SidePort> {
    let tls = tls.filter(|tls| tls.serves_side_port());
    let (following_sender, following) = watch::channel(false);
    let mut followers = Vec::new();
    if let Some((parts, trails)) = console {
        let (console, tasks) = crate::console::start(parts, trails, tls.is_some(), following);
        followers = tasks;
        app = app.merge(console);
    }
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
    Ok(SidePort { task, stop, _following: following_sender, followers })
}

impl SidePort {
    /// Stops taking requests, waits up to `grace` for those in flight (a download that has
    /// stalled is cut then), and stops the followers. Whether requests were cut.
    pub async fn finish(self, grace: Duration) -> bool {
        let _ = self.stop.send(());
        for follower in &self.followers {
            follower.abort();
        }
        let mut task = self.task;
        let cut = match tokio::time::timeout(grace, &mut task).await {
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
        };
        for follower in self.followers {
            let _ = follower.await;
        }
        cut
    }
}
