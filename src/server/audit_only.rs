//! The fleet's audit-only server (`toolgate serve --audit-only --postgres URL`): the `Audit`
//! service over the fleet store, with the sidecar's auth, roles and TLS, and nothing else (no
//! Gate, no Approvals, no shipping). Its own trail (`db`) records what every trail records of
//! a server's callers: the calls it refuses (unauthenticated, beyond a role, malformed). Its
//! HTTP side port, when set, has the probes, the metrics and (when enabled) the console over
//! every node's trail.

use std::future::Future;
use std::sync::Arc;

use tokio::net::TcpListener;
use tonic::server::NamedService;

use super::front::Front;
use super::tasks::Tasks;
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

/// The services it reports in gRPC health.
const SERVICES: &[&str] = &[<AuditServer<AuditService> as NamedService>::NAME];

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
    let (mut front, health_service) = Front::new(SERVICES).await;
    let mut tasks = Tasks::default();
    let door = Arc::new(guard.clone());
    let audit_service = AuditServer::new(AuditService::new(
        Arc::new(fleet.clone()),
        guard,
        hasher,
        config.limits.clone(),
    ));
    tracing::info!(db = %config.db.display(), "serving the fleet store's trails (audit only)");
    if let Some(http) = http {
        let app = crate::side::probes(metrics.clone(), front.serving.clone(), None);
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
        front.side_port(http, app, console, tls.clone(), &config, &mut tasks)?;
    }
    let router = serving::reflected(&config.limits, door)?
        .add_service(health_service)
        .add_service(audit_service);
    let (served, cut) =
        front.serve(router, listener, tls, &config, shutdown, (|| (), "calls")).await;
    tasks.stop().await;
    fleet.close().await;
    store.reader.close().await;
    drop(store);
    serving::join_writer(writer_thread, cut).await;
    tracing::info!("stopped");
    Ok(served?)
}
