//! What every server role serves the same way (the sidecar, `serve --audit-only`, `serve
//! --ingest`): gRPC health for its services, the HTTP side port, and the stop: the services
//! reported not serving and `/readyz` at 503 once shutdown begins, the calls in flight given
//! the grace period, then the side port stopped within the same grace.

use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use axum::Router;
use tokio::net::TcpListener;
use tokio::sync::{Notify, watch};
use tonic_health::ServingStatus;
use tonic_health::pb::health_server::{Health, HealthServer};
use tonic_health::server::HealthReporter;

use super::serving;
use super::tasks::Tasks;
use crate::audit::Trails;
use crate::config::Config;
use crate::console::{Parts, Watchers};
use crate::listener::Listener;
use crate::side::SidePort;
use crate::tls::Acceptor;

/// A role's front: its health, its side port, whether it serves.
pub struct Front {
    health: HealthReporter,
    /// The gRPC services reported serving until shutdown.
    services: &'static [&'static str],
    /// False once shutdown begins: `/readyz` says 503.
    pub serving: Arc<AtomicBool>,
    side: Option<SidePort>,
}

impl Front {
    /// Reports `services` (their gRPC names) serving; the health service for the router.
    pub async fn new(services: &'static [&'static str]) -> (Self, HealthServer<impl Health>) {
        let (health, health_service) = tonic_health::server::health_reporter();
        for service in services {
            health.set_service_status(service, ServingStatus::Serving).await;
        }
        let serving = Arc::new(AtomicBool::new(true));
        (Self { health, services, serving, side: None }, health_service)
    }

    /// The health reporter, for a task that reports a service down and up again.
    pub fn health(&self) -> HealthReporter {
        self.health.clone()
    }

    /// Serves the side port on `http`: `app`, and the console of `console` (the trails it
    /// reads) when given, its followers of the trails among `tasks`, alongside the services.
    pub fn side_port(
        &mut self,
        http: TcpListener,
        mut app: Router,
        console: Option<(Parts, Arc<dyn Trails>)>,
        tls: Option<Arc<Acceptor>>,
        config: &Config,
        tasks: &mut Tasks,
    ) -> std::io::Result<()> {
        if let Some((parts, trails)) = console {
            let secure = tls.as_ref().is_some_and(|tls| tls.serves_side_port());
            let (routes, watchers) = crate::console::start(parts, trails, secure);
            let Watchers { activity, health, trails } = watchers;
            // Read-only followers of the trails, simply stopped with the tasks alongside the
            // services: a whole-chain check in flight must not hold up the shutdown.
            let (running, stopping) = watch::channel(false);
            let following = trails.clone();
            let watching = stopping.clone();
            tasks.alongside(async move {
                let _running = running;
                let activity = crate::audit::activity::follow(activity, following, stopping);
                let health = crate::audit::health::watch(health, trails, watching);
                tokio::join!(activity, health);
            });
            app = app.merge(routes);
        }
        let guard = (config.auth.enabled(), &config.limits);
        self.side = Some(crate::side::start(http, app, tls, guard)?);
        Ok(())
    }

    /// Serves `router` on `listener` until `shutdown` resolves; then reports the services not
    /// serving, calls `stopping` (which ends the waits that last), gives the `work` in flight
    /// the grace period, and stops the side port. Whether anything was cut.
    pub async fn serve(
        self,
        router: serving::Router,
        listener: Listener,
        tls: Option<Arc<Acceptor>>,
        config: &Config,
        shutdown: impl Future<Output = ()> + Send,
        (stopping, work): (impl FnOnce() + Send, &'static str),
    ) -> (Result<(), tonic::transport::Error>, bool) {
        let shutting_down = Notify::new();
        let (health, services, serving) = (&self.health, self.services, &self.serving);
        let stop = async {
            shutdown.await;
            serving.store(false, Ordering::Relaxed);
            stopping();
            shutting_down.notify_one();
            tracing::info!("shutting down: finishing the {work} in flight");
            for service in services {
                health.set_service_status(service, ServingStatus::NotServing).await;
            }
        };
        let served = serving::serve(router, listener, tls, &config.limits, stop);
        let (served, cut) =
            serving::within_grace(served, &shutting_down, config.shutdown_grace_ms).await;
        // The side port answered through the drain (`/readyz` said 503); now it stops.
        let grace = Duration::from_millis(config.shutdown_grace_ms);
        let side_cut = match self.side {
            Some(side) => side.finish(grace).await,
            None => false,
        };
        (served, cut || side_cut)
    }
}
