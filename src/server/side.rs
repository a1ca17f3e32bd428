//! The HTTP side port a server serves beside gRPC: its routes (the probes, what the server adds,
//! the console when it is on), over TLS when `[tls] side_port` says so, until the server stops;
//! and the console's followers of the trail, stopped after it.

use std::sync::Arc;

use axum::Router;
use tokio::net::TcpListener;
use tokio::sync::{oneshot, watch};
use tokio::task::JoinHandle;

use super::ServerError;
use crate::audit::Trails;
use crate::console::Parts;
use crate::tls::Acceptor;

/// The side port, serving.
pub(super) struct SidePort {
    task: JoinHandle<std::io::Result<()>>,
    stop: oneshot::Sender<()>,
    stop_following: watch::Sender<bool>,
    followers: Vec<JoinHandle<()>>,
}

/// Serves `app` on `http` (and the console of `console`, the trails it reads), through `tls`
/// when it serves the side port too.
pub(super) fn start(
    http: TcpListener,
    mut app: Router,
    tls: Option<Arc<Acceptor>>,
    console: Option<(Parts, Trails)>,
) -> Result<SidePort, ServerError> {
    let tls = tls.filter(|tls| tls.serves_side_port());
    let (stop_following, following) = watch::channel(false);
    let mut followers = Vec::new();
    if let Some((parts, trails)) = console {
        let (console, tasks) = crate::console::start(parts, trails, tls.is_some(), following);
        followers = tasks;
        app = app.merge(console);
    }
    let addr = http.local_addr()?;
    tracing::info!(listen = %addr, tls = tls.is_some(), "HTTP side port serving");
    let (stop, stopped) = oneshot::channel::<()>();
    let stopped = async {
        let _ = stopped.await;
    };
    let task = match tls {
        Some(tls) => tokio::spawn(crate::http::serve(tls.side_listener(http)?, app, stopped)),
        None => tokio::spawn(crate::http::serve(http, app, stopped)),
    };
    Ok(SidePort { task, stop, stop_following, followers })
}

impl SidePort {
    /// Stops serving (the requests in flight finish), then the console's followers.
    pub(super) async fn stop(self) {
        let _ = self.stop.send(());
        if let Ok(Err(e)) = self.task.await {
            tracing::error!(error = %e, "the HTTP side port failed");
        }
        let _ = self.stop_following.send(true);
        for follower in self.followers {
            let _ = follower.await;
        }
    }
}
