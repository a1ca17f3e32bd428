//! Puts the pieces together: opens the trail, loads the policy, records that it is in force,
//! and serves gRPC on an already-bound listener until the shutdown future resolves. Then it
//! stops taking calls, lets the calls in flight finish, and waits for the writer to commit
//! what it holds.

mod audit_only;
mod ingest;
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
use crate::follow::Trail;
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
use crate::store::disk::Disk;
use crate::store::{Store, StoreError};
use crate::tls::Acceptor;
use tasks::{Stage, Tasks};

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
    #[error("[archive] needs [checkpoints]: an archive reaches as far as a signed checkpoint")]
    ArchiveUnsigned,
    #[error("[retention] needs [archive]: nothing leaves the trail that is not archived")]
    RetentionUnarchived,
    #[error("[ingest] {0}")]
    Ingest(String),
}

/// Serves until `shutdown` resolves.
pub async fn run(
    config: Config,
    listener: Listener,
    http: Option<TcpListener>,
    shutdown: impl Future<Output = ()> + Send,
) -> Result<(), ServerError> {
    let hangups = hangups();
    let metrics = Arc::new(Metrics::default());
    let tls = Acceptor::new(&config.tls, metrics.clone())?;
    // Everything the configuration can get wrong is refused before the trail is touched, so
    // that a start it refuses leaves no event behind.
    let auth = Arc::new(Auth::new(&config.auth)?);
    let hasher = ArgsHasher::from_config(&config.args_hash)?;
    let signer = crate::trust::publisher::signer(&config.checkpoints)?.map(Arc::new);
    let witnesses = crate::trust::submitter::targets(&config.checkpoints.witnesses)?;
    let shipping = crate::follow::fleet::follower(&config.fleet, &metrics)?;
    let exporting = crate::follow::otlp::follower(&config, &metrics)?;
    let archiving = crate::follow::archive::follower(&config.archive, &metrics)?;
    if archiving.is_some() && signer.is_none() {
        return Err(ServerError::ArchiveUnsigned);
    }
    if config.retention.prunes() && archiving.is_none() {
        return Err(ServerError::RetentionUnarchived);
    }
    // Where each destination that must take an event before it may leave the file stands.
    let mut destinations = Vec::new();
    let mut reporting = |name: &'static str| {
        let (stands, standing) = tokio::sync::watch::channel(0);
        destinations.push((name, standing));
        stands
    };
    let shipping = shipping.map(|follower| follower.reporting(reporting("fleet")));
    let exporting = exporting.map(|follower| follower.reporting(reporting("OTLP")));
    let cadence = signer.clone().map(|signer| crate::store::Cadence {
        signer,
        every_events: config.checkpoints.every_events.max(1),
    });
    let (store, writer_thread) =
        Store::open(&config.db, config.durability, &config.writer, metrics.clone(), cadence)
            .await?;
    let state = State::rebuild(&config, &store.reader).await?;
    let gate = Gatekeeper::new(&config, state, store.writer.clone(), hasher.clone())?;
    let loaded = gate.record_policy_loaded().await?;
    tracing::info!(
        policy_version = loaded.record.policy_version.as_deref().unwrap_or_default(),
        seq = loaded.seq,
        "policy in force"
    );

    // What follows the trail: the checkpoints, the witnesses, the followers' sinks.
    let trail = Trail { reader: store.reader.clone(), commits: store.writer.committed() };
    // The auditors' reads: the file, and below its prunes, the archive.
    let archive = match &config.archive.url {
        Some(url) => Some(crate::archive::Archive::open(url, &config.archive.options)?),
        None => None,
    };
    let local = crate::audit::Local::new(store.reader.clone(), archive.clone());
    let mut tasks = Tasks::default();
    let indexing = crate::follow::index::follower(&config.db, &metrics)?;
    let following = trail.clone();
    tasks.start(Stage::Followers, "index", |stopping| indexing.run(following, stopping));
    // What the console shows of the checkpoints: who signs them, who cosigns them.
    let log_key = signer.as_ref().map(|signer| signer.verifier());
    let witness_keys: Vec<_> = witnesses.iter().map(|w| w.key().clone()).collect();
    let retention_signer = signer.clone();
    if let Some(signer) = signer {
        let (writer, config) = (store.writer.clone(), config.checkpoints.clone());
        let trail = trail.clone();
        tasks.start(Stage::Checkpoints, "checkpoints", |stopping| {
            crate::trust::publisher::run(writer, trail, signer, config, stopping)
        });
    }
    if !witnesses.is_empty() {
        tracing::info!(witnesses = witnesses.len(), "submitting checkpoints to witnesses");
        let (reader, writer) = (store.reader.clone(), store.writer.clone());
        tasks.start(Stage::Witnesses, "witnesses", |stopping| {
            crate::trust::submitter::run(reader, writer, witnesses, stopping)
        });
    }
    if let Some(follower) = shipping {
        let trail = trail.clone();
        tasks.start(Stage::Followers, "fleet", |stopping| follower.run(trail, stopping));
    }
    if let Some(follower) = archiving {
        let trail = trail.clone();
        tasks.start(Stage::Followers, "archive", |stopping| follower.run(trail, stopping));
    }
    if let (true, Some(archive), Some(signer)) =
        (config.retention.prunes(), archive, retention_signer)
    {
        let retention = crate::retention::Retention {
            config: config.retention.clone(),
            archive,
            key: signer.verifier(),
            signer,
            reader: store.reader.clone(),
            writer: store.writer.clone(),
            destinations,
            // As the submitter keeps their cosignatures: under each key as it encodes.
            witnesses: witness_keys.iter().map(|key| key.encode()).collect(),
        };
        let metrics = metrics.clone();
        tasks.start(Stage::Retention, "retention", |stopping| async move {
            retention.run(&metrics, stopping).await
        });
    }
    if let Some(follower) = exporting {
        let trail = trail.clone();
        tasks.start(Stage::Followers, "otlp", |stopping| follower.run(trail, stopping));
    }

    let (health, health_service) = tonic_health::server::health_reporter();
    health.set_serving::<GateServer<GateService>>().await;
    health.set_serving::<AuditServer<AuditService>>().await;
    health.set_serving::<ApprovalsServer<ApprovalsService>>().await;
    let guard = Guard::new(auth, store.writer.clone(), &config.limits);
    // The console's, if it is served: every other holder of a writer handle is gone with the
    // services and the side port, so that the writer can finish at shutdown.
    let console_guard = (config.console.enabled && http.is_some()).then(|| guard.clone());
    let oidc = match &config.console.oidc {
        Some(oidc) => Some(crate::console::Oidc::new(oidc, &config.auth)?),
        None => None,
    };
    let admin_service = AdminServer::new(AdminService::new(gate.clone(), guard.clone()));
    let door = Arc::new(guard.clone());
    let serving = Arc::new(AtomicBool::new(true));
    tasks.alongside(reload_on_sighup(gate.clone(), tls.clone(), hangups));
    if let Some(tls) = tls.clone() {
        tasks.alongside(async move { tls.watch().await });
    }
    tasks.alongside(expire_approvals(gate.clone()));
    tasks.alongside(watch_trail(health.clone(), metrics.clone(), serving.clone()));
    let disk = Disk::new(&config.db, &config.disk, &metrics);
    tasks.alongside(disk.clone().run());
    // Ends the waits that last (approvals waited on, live streams) at shutdown.
    let (stop_waits, stopping_waits) = tokio::sync::watch::channel(false);
    let approvals_service = ApprovalsServer::new(ApprovalsService::new(
        gate.clone(),
        store.reader.clone(),
        stopping_waits.clone(),
        guard.clone(),
    ));
    let gate_service = GateServer::new(GateService::new(gate, guard.clone()))
        .max_decoding_message_size(config.limits.max_message_bytes());
    let audit_service = AuditServer::new(
        AuditService::new(
            Arc::new(local.clone()),
            // The last holder: `Guard` keeps a writer handle, which must be gone for the writer
            // to finish at shutdown.
            guard,
            hasher,
            config.limits.clone(),
        )
        .following(trail, stopping_waits),
    );

    let side = match http {
        Some(http) => {
            // In process: the hook's calls skip the network (and TLS), and carry the hook's
            // own `Authorization` header.
            let sidecar = Sidecar::new(conn(gate_service.clone()), conn(approvals_service.clone()));
            let app = crate::side::probes(metrics.clone(), serving.clone(), Some(disk.clone()))
                .merge(crate::side::hooks(sidecar, config.hooks.clone()));
            let console = console_guard.map(|guard| {
                let parts = crate::console::Parts {
                    audit: conn(audit_service.clone()),
                    approvals: Some(conn(approvals_service.clone())),
                    guard,
                    auth: config.auth.enabled(),
                    session_minutes: config.console.session_minutes,
                    oidc,
                    log_key,
                    witnesses: witness_keys,
                    disk: Some(disk),
                };
                (parts, Arc::new(local) as Arc<dyn Trails>)
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
        stop_waits.send_replace(true);
        shutting_down.notify_one();
        tracing::info!("shutting down: finishing the calls in flight");
        health.set_not_serving::<GateServer<GateService>>().await;
        health.set_not_serving::<AuditServer<AuditService>>().await;
        health.set_not_serving::<ApprovalsServer<ApprovalsService>>().await;
    };
    // The one line an operator looks for: serving, where, on what, how guarded.
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
    let router = serving::reflected(&config.limits, door)?
        .add_service(health_service)
        .add_service(gate_service)
        .add_service(audit_service)
        .add_service(approvals_service)
        .add_service(admin_service);
    let served = serving::serve(router, listener, tls, &config.limits, stopping);
    let (served, cut) =
        serving::within_grace(served, &shutting_down, config.shutdown_grace_ms).await;

    // The services are gone with the server (and their clones in the side port once it has
    // stopped, below), and the tasks alongside them now; the publisher and the submitter keep
    // the last writer handles, so the writer commits what it holds and stops after them.
    tasks.stop_alongside().await;
    // The side port answered through the drain (`/readyz` said 503); now it stops.
    let grace = std::time::Duration::from_millis(config.shutdown_grace_ms);
    let side_cut = match side {
        Some(side) => side.finish(grace).await,
        None => false,
    };
    tasks.stop().await;
    store.reader.close().await;
    drop(store);
    serving::join_writer(writer_thread, cut || side_cut).await;
    tracing::info!("stopped");
    Ok(served?)
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
