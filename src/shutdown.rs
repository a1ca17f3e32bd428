//! The signals that stop the server: SIGINT (Ctrl-C) and SIGTERM (what Kubernetes sends).

use std::future::Future;

use tokio::signal::unix::{Signal, SignalKind, signal as listen};

/// A future that resolves at the first SIGINT or SIGTERM. The handlers are installed when this
/// is called, not when the future is first polled: a SIGTERM that comes while the server is
/// still starting (its side port may already answer probes) is then a graceful stop, not the
/// default action's kill.
pub fn signal() -> impl Future<Output = ()> + Send {
    let handler = |kind: SignalKind, name: &'static str| match listen(kind) {
        Ok(signal) => Some(signal),
        Err(e) => {
            tracing::error!(error = %e, "cannot listen for {name}");
            None
        }
    };
    let interrupt = handler(SignalKind::interrupt(), "SIGINT");
    let terminate = handler(SignalKind::terminate(), "SIGTERM");
    async move {
        async fn received(signal: Option<Signal>) {
            match signal {
                Some(mut signal) => {
                    signal.recv().await;
                }
                None => std::future::pending().await,
            }
        }
        tokio::select! {
            () = received(interrupt) => tracing::info!("SIGINT received"),
            () = received(terminate) => tracing::info!("SIGTERM received"),
        }
    }
}
