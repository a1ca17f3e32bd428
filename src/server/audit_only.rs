//! The fleet's audit-only server (`toolgate serve --audit-only --postgres URL`): the `Audit`
//! service over the fleet store, with the sidecar's auth, roles and TLS, and nothing else (no
//! Gate, no Approvals, no shipping). Its own trail (`db`) records what every trail records of
//! a server's callers: the calls it refuses (unauthenticated, beyond a role, malformed). Its
//! HTTP side port, when set, has the probes, the metrics and (when enabled) the console over
//! every node's trail.

use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use tokio::net::TcpListener;

use super::{ServerError, serving};
use crate::audit::Trails;
use crate::auth::Auth;
use crate::config::Config;
use crate::fleet::store::FleetStore;
use crate::grpc::{AuditService, Guard};
use crate::listener::Listener;
use crate::metrics::Metrics;
use crate::proto::audit_server::AuditServer;
use crate::request::ArgsHasher;
use crate::sidecar::conn;
use crate::store::Store;
use crate::tls::Acceptor;

/// Connections to the fleet store the server keeps at most.
const CONNECTIONS: u32 = 8;

/// Serves the `Audit` service over the fleet store at `postgres_url` until `shutdown`
/// resolves. The store is connected to when first asked: one that is down makes calls
/// UNAVAILABLE, not the start fail.
pub async fn run_audit_only(
    config: Config,
    listener: Listener,
    http: Option<TcpListener>,
    postgres_url: &str,
    shutdown: impl Future<Output = ()> + Send,
) -> Result<(), ServerError> {
    let metrics = Arc::new(Metrics::default());
    let tls = Acceptor::new(&config.tls, metrics.clone())?;
    let fleet = FleetStore::lazy(postgres_url, CONNECTIONS)?;
    let auth = Arc::new(Auth::new(&config.auth)?);
    let hasher = ArgsHasher::from_config(&config.args_hash)?;
    let (store, writer_thread) =
        Store::open(&config.db, config.durability, &config.writer, metrics.clone(), None).await?;
    let guard = Guard::new(auth, store.writer.clone(), &config.limits);
    let console_guard = (config.console.enabled && http.is_some()).then(|| guard.clone());
    let oidc = match &config.console.oidc {
        Some(oidc) => Some(crate::console::Oidc::new(oidc, &config.auth)?),
        None => None,
    };
    let (health, health_service) = tonic_health::server::health_reporter();
    health.set_serving::<AuditServer<AuditService>>().await;
    let door = Arc::new(guard.clone());
    let audit_service = AuditServer::new(AuditService::new(
        Arc::new(fleet.clone()),
        guard,
        hasher,
        config.limits.clone(),
    ));
    tracing::info!(db = %config.db.display(), "serving the fleet store's trails (audit only)");
    let serving = Arc::new(AtomicBool::new(true));
    let side = match http {
        Some(http) => {
            let app = crate::side::probes(metrics.clone(), serving.clone(), None);
            let console = console_guard.map(|guard| {
                let parts = crate::console::Parts {
                    audit: conn(audit_service.clone()),
                    approvals: None,
                    guard,
                    auth: config.auth.enabled(),
                    session_minutes: config.console.session_minutes,
                    oidc,
                    log_key: None,
                    witnesses: Vec::new(),
                    disk: None,
                };
                (parts, Arc::new(fleet.clone()) as Arc<dyn Trails>)
            });
            let guard = (config.auth.enabled(), &config.limits);
            Some(crate::side::start(http, app, tls.clone(), console, guard)?)
        }
        None => None,
    };
    let shutting_down = tokio::sync::Notify::new();
    let stopping = async {
        shutdown.await;
        serving.store(false, Ordering::Relaxed);
        shutting_down.notify_one();
        tracing::info!("shutting down: finishing the calls in flight");
        health.set_not_serving::<AuditServer<AuditService>>().await;
    };
    let router = serving::reflected(&config.limits, door)?
        .add_service(health_service)
        .add_service(audit_service);
    let served = serving::serve(router, listener, tls, &config.limits, stopping);
    let (served, cut) =
        serving::within_grace(served, &shutting_down, config.shutdown_grace_ms).await;
    // The side port answered through the drain (`/readyz` said 503); now it stops.
    let grace = std::time::Duration::from_millis(config.shutdown_grace_ms);
    let side_cut = match side {
        Some(side) => side.finish(grace).await,
        None => false,
    };
    fleet.close().await;
    store.reader.close().await;
    drop(store);
    serving::join_writer(writer_thread, cut || side_cut).await;
    tracing::info!("stopped");
    Ok(served?)
}
