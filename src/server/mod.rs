//! Puts the pieces together: opens the trail, loads the policy, records that it is in force,
//! and serves gRPC on an already-bound listener until the shutdown future resolves. Then it
//! stops taking calls, lets the calls in flight finish, and waits for the writer to commit
//! what it holds.

mod audit_only;
mod front;
mod ingest;
mod lifecycle;
mod serving;
mod tasks;

use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use tokio::net::TcpListener;

pub use audit_only::run_audit_only;
pub use ingest::run_ingest;

use crate::audit::Trails;
use crate::auth::Auth;
use crate::config::Config;
use crate::error::Error;
use crate::gate::Gatekeeper;
use crate::grpc::{AdminService, ApprovalsService, AuditService, GateService, Guard};
use crate::listener::Listener;
use crate::metrics::Metrics;
use crate::policy::PolicyError;
use crate::proto::admin_server::AdminServer;
use crate::proto::approvals_server::ApprovalsServer;
use crate::proto::audit_server::AuditServer;
use crate::proto::gate_server::GateServer;
use crate::request::ArgsHasher;
use crate::sidecar::{Sidecar, conn};
use crate::state::State;
use crate::store::StoreError;
use crate::store::disk::Disk;
use crate::tls::Acceptor;
use front::Front;
use lifecycle::Lifecycle;
use tasks::Tasks;
use tonic::server::NamedService;

/// Why the server could not start or stopped with an error.
#[derive(Debug, thiserror::Error)]
pub enum ServerError {
    #[error(transparent)]
    Policy(#[from] PolicyError),
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("cannot record the policy in force: {0}")]
    Record(#[from] Error),
    #[error("reflection service: {0}")]
    Reflection(#[from] tonic_reflection::server::Error),
    #[error("transport: {0}")]
    Transport(#[from] tonic::transport::Error),
    #[error("listener: {0}")]
    Io(#[from] std::io::Error),
    #[error(transparent)]
    Auth(#[from] crate::auth::BadAuth),
    #[error(transparent)]
    Config(#[from] crate::config::ConfigError),
    #[error(transparent)]
    Tls(#[from] crate::tls::TlsError),
    #[error(transparent)]
    Checkpoints(#[from] crate::trust::publisher::KeyError),
    #[error(transparent)]
    Witnesses(#[from] crate::trust::submitter::WitnessKeyError),
    #[error(transparent)]
    Fleet(#[from] crate::follow::fleet::FleetConfigError),
    #[error(transparent)]
    FleetStore(#[from] crate::fleet::store::FleetError),
    #[error(transparent)]
    Otlp(#[from] crate::follow::otlp::OtlpConfigError),
    #[error(transparent)]
    Archive(#[from] crate::archive::ArchiveError),
    #[error("[ingest] {0}")]
    Ingest(String),
}

/// The services the sidecar reports in gRPC health.
const SERVICES: &[&str] = &[
    <GateServer<GateService> as NamedService>::NAME,
    <AuditServer<AuditService> as NamedService>::NAME,
    <ApprovalsServer<ApprovalsService> as NamedService>::NAME,
];

/// Serves until `shutdown` resolves.
pub async fn run(
    config: Config,
    listener: Listener,
    http: Option<TcpListener>,
    shutdown: impl Future<Output = ()> + Send,
) -> Result<(), ServerError> {
    // Everything the configuration can get wrong is refused before the trail is touched, so
    // that a start it refuses leaves no event behind (`Lifecycle::open` checks the rest).
    let hangups = hangups();
    let metrics = Arc::new(Metrics::default());
    let tls = Acceptor::new(&config.tls, metrics.clone())?;
    let auth = Arc::new(Auth::new(&config.auth)?);
    let hasher = ArgsHasher::from_config(&config.args_hash)?;
    let oidc = oidc(&config)?;
    let lifecycle = Lifecycle::open(&config, &metrics).await?;
    let state = State::rebuild(&config, &lifecycle.store.reader).await?;
    let gate = Gatekeeper::new(&config, state, lifecycle.store.writer.clone(), hasher.clone())?;
    let loaded = gate.record_policy_loaded().await?;
    let version = loaded.record.policy_version.as_deref().unwrap_or_default();
    tracing::info!(policy_version = version, seq = loaded.seq, "policy in force");
    let mut tasks = Tasks::default();
    let trail = lifecycle.start(&mut tasks, &metrics);
    let (mut front, health_service) = Front::new(SERVICES).await;
    let disk = Disk::new(&config.db, &config.disk, &metrics);
    tasks.alongside(reload_on_sighup(gate.clone(), tls.clone(), hangups));
    if let Some(tls) = tls.clone() {
        tasks.alongside(async move { tls.watch().await });
    }
    tasks.alongside(expire_approvals(gate.clone()));
    tasks.alongside(watch_trail(front.health(), metrics.clone(), front.serving.clone()));
    tasks.alongside(disk.clone().run());
    // Ends the waits that last (approvals waited on, live streams) at shutdown.
    let (stop_waits, stopping_waits) = tokio::sync::watch::channel(false);
    let guard = Guard::new(auth, trail.store.writer.clone(), &config.limits);
    let services = Services::new(&config, gate, guard.clone(), hasher, &trail, stopping_waits);
    if let Some(http) = http {
        let app = crate::side::probes(metrics.clone(), front.serving.clone(), Some(disk.clone()))
            .merge(crate::side::hooks(services.sidecar(), config.hooks.clone()));
        let console = config.console.enabled.then(|| {
            let trails = Arc::new(trail.local.clone()) as Arc<dyn Trails>;
            (console_parts(&config, &services, &guard, oidc, &trail, disk), trails)
        });
        front.side_port(http, app, console, tls.clone(), &config, &mut tasks)?;
    }
    serving_line(&config, &listener);
    let router = services.router(&config, guard)?.add_service(health_service);
    let stopping = || {
        stop_waits.send_replace(true);
    };
    let (served, cut) =
        front.serve(router, listener, tls, &config, shutdown, (stopping, "calls")).await;
    // The services are gone with the server and the side port, and the tasks alongside them
    // now; the publisher and the submitter keep the last writer handles, so the writer
    // commits what it holds and stops after them.
    tasks.stop().await;
    trail.store.reader.close().await;
    drop(trail.store);
    serving::join_writer(trail.writer, cut).await;
    tracing::info!("stopped");
    Ok(served?)
}

/// What the console is served with: the services in process, the guard, the keys that
/// verify the trail's checkpoints, and the disk's measure. Every other holder of a writer
/// handle is gone with the services and the side port, so that the writer can finish at
/// shutdown.
fn console_parts(
    config: &Config,
    services: &Services,
    guard: &Guard,
    oidc: Option<crate::console::Oidc>,
    trail: &lifecycle::Parts,
    disk: Disk,
) -> crate::console::Parts {
    crate::console::Parts {
        audit: conn(services.audit.clone()),
        approvals: Some(conn(services.approvals.clone())),
        guard: guard.clone(),
        auth: config.auth.enabled(),
        session_minutes: config.console.session_minutes,
        oidc,
        log_key: trail.log_key.clone(),
        witnesses: trail.witness_keys.clone(),
        disk: Some(disk),
    }
}

/// The sidecar's gRPC services, over one gate and one guard.
struct Services {
    gate: GateServer<GateService>,
    approvals: ApprovalsServer<ApprovalsService>,
    audit: AuditServer<AuditService>,
    admin: AdminServer<AdminService>,
}

impl Services {
    fn new(
        config: &Config,
        gate: Gatekeeper,
        guard: Guard,
        hasher: ArgsHasher,
        trail: &lifecycle::Parts,
        stopping_waits: tokio::sync::watch::Receiver<bool>,
    ) -> Self {
        let reader = trail.store.reader.clone();
        let approvals =
            ApprovalsService::new(gate.clone(), reader, stopping_waits.clone(), guard.clone());
        let audit = AuditService::new(
            Arc::new(trail.local.clone()),
            guard.clone(),
            hasher,
            config.limits.clone(),
        );
        Self {
            admin: AdminServer::new(AdminService::new(gate.clone(), guard.clone())),
            approvals: ApprovalsServer::new(approvals),
            gate: GateServer::new(GateService::new(gate, guard))
                .max_decoding_message_size(config.limits.max_message_bytes()),
            audit: AuditServer::new(audit.following(trail.trail.clone(), stopping_waits)),
        }
    }

    /// The services as the adapters reach them in process: the hook's calls skip the
    /// network (and TLS), and carry the hook's own `Authorization` header.
    fn sidecar(&self) -> Sidecar {
        Sidecar::new(conn(self.gate.clone()), conn(self.approvals.clone()))
    }

    /// The gRPC router: every call through `guard` first, then to its service.
    fn router(self, config: &Config, guard: Guard) -> Result<serving::Router, ServerError> {
        Ok(serving::reflected(&config.limits, Arc::new(guard))?
            .add_service(self.gate)
            .add_service(self.audit)
            .add_service(self.approvals)
            .add_service(self.admin))
    }
}

/// The console's OpenID Connect sign-in, when configured.
fn oidc(config: &Config) -> Result<Option<crate::console::Oidc>, ServerError> {
    Ok(match &config.console.oidc {
        Some(oidc) => Some(crate::console::Oidc::new(oidc, &config.auth)?),
        None => None,
    })
}

/// The one line an operator looks for: serving, where, on what, how guarded.
fn serving_line(config: &Config, listener: &Listener) {
    tracing::info!(
        grpc = %listener.describe(),
        http = config.http_listen.as_deref().unwrap_or("off"),
        db = %config.db.display(),
        policy = %config.policy.as_ref().map_or("built-in".into(), |p| p.display().to_string()),
        auth = if config.auth.enabled() { "on" } else { "off" },
        tls = config.tls.mode(),
        console = config.console.enabled,
        "serving"
    );
}

/// Reports Gate and Approvals as not serving while the trail cannot commit, and as serving
/// again once a commit succeeds (calls keep trying: the first that commits brings it back).
async fn watch_trail(
    health: tonic_health::server::HealthReporter,
    metrics: Arc<Metrics>,
    serving: Arc<AtomicBool>,
) {
    let mut failing = false;
    let mut ticks = tokio::time::interval(std::time::Duration::from_millis(200));
    loop {
        ticks.tick().await;
        let now = metrics.trail_failing();
        if now == failing || !serving.load(Ordering::Relaxed) {
            continue;
        }
        failing = now;
        if failing {
            tracing::error!("the trail cannot commit: reporting not serving");
            health.set_not_serving::<GateServer<GateService>>().await;
            health.set_not_serving::<ApprovalsServer<ApprovalsService>>().await;
        } else {
            tracing::info!("the trail commits again: reporting serving");
            health.set_serving::<GateServer<GateService>>().await;
            health.set_serving::<ApprovalsServer<ApprovalsService>>().await;
        }
    }
}

/// Expires the approvals past their time, checking every second.
async fn expire_approvals(gate: Gatekeeper) {
    let mut ticks = tokio::time::interval(std::time::Duration::from_secs(1));
    ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        ticks.tick().await;
        let expired = gate.expire_approvals().await;
        if expired > 0 {
            tracing::info!(expired, "approvals expired");
        }
    }
}

/// Reloads the policy (and the TLS files) at every SIGHUP; a policy that does not load is
/// logged and the one in force stays. The listener is installed before the server records
/// that it started, so a SIGHUP that follows the `policy_loaded` event can never meet SIGHUP's
/// default (exit).
#[cfg(unix)]
fn hangups() -> Option<tokio::signal::unix::Signal> {
    use tokio::signal::unix::{SignalKind, signal};
    signal(SignalKind::hangup())
        .inspect_err(|e| tracing::error!(error = %e, "no SIGHUP reloads: use the Admin service"))
        .ok()
}

#[cfg(unix)]
async fn reload_on_sighup(
    gate: Gatekeeper,
    tls: Option<Arc<Acceptor>>,
    hangups: Option<tokio::signal::unix::Signal>,
) {
    let Some(mut hangups) = hangups else { return };
    while hangups.recv().await.is_some() {
        tracing::info!("SIGHUP received: reloading the policy");
        if let Err(e) = gate.reload_policy().await {
            tracing::error!(error = %e, "reload refused; the policy in force stays");
        }
        if let Some(tls) = &tls {
            tls.reload();
        }
    }
}

#[cfg(not(unix))]
fn hangups() -> Option<()> {
    None
}

#[cfg(not(unix))]
async fn reload_on_sighup(_gate: Gatekeeper, _tls: Option<Arc<Acceptor>>, _hangups: Option<()>) {}
