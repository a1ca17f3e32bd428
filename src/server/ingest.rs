//! The fleet's ingest server (`toolgate serve --ingest --postgres URL`): the `FleetIngest`
//! service over the fleet store, with the sidecar's listener, connection caps and TLS, and
//! nothing else (no trail of its own: what it refuses is recorded in the store, as alarms, and
//! in its log). Stateless: run as many as the fleet needs behind one address. Its HTTP side
//! port, when set, has the probes and the metrics.

use std::future::Future;
use std::sync::Arc;

use tokio::net::TcpListener;
use tonic::server::NamedService;

use super::front::Front;
use super::tasks::Tasks;
use super::{ServerError, serving};
use crate::config::{Config, IngestConfig};
use crate::fleet::ingest::Writer;
use crate::fleet::store::FleetStore;
use crate::grpc::{IngestService, MAX_MESSAGE};
use crate::listener::Listener;
use crate::metrics::Metrics;
use crate::proto::fleet_ingest_server::FleetIngestServer;
use crate::tls::Acceptor;
use crate::trail::cosignature::{Witnesses, WitnessesError};

/// The services it reports in gRPC health.
const SERVICES: &[&str] = &[<FleetIngestServer<IngestService> as NamedService>::NAME];

/// Connections to the fleet store the server keeps at most.
const CONNECTIONS: u32 = 16;

/// Serves the `FleetIngest` service over the fleet store at `postgres_url` until `shutdown`
/// resolves. The store is connected to when first asked: one that is down makes calls
/// UNAVAILABLE (the nodes try again), not the start fail.
pub async fn run_ingest(
    config: Config,
    listener: Listener,
    http: Option<TcpListener>,
    postgres_url: &str,
    shutdown: impl Future<Output = ()> + Send,
) -> Result<(), ServerError> {
    let metrics = Arc::new(Metrics::default());
    let tls = Acceptor::new(&config.tls, metrics.clone())?;
    let store = FleetStore::lazy(postgres_url, CONNECTIONS)?;
    let witnesses = required_witnesses(&config.ingest)?;
    let ingest = IngestService::new(Writer::new(&store, witnesses), &metrics);
    let service = FleetIngestServer::new(ingest.clone()).max_decoding_message_size(MAX_MESSAGE);
    let (mut front, health_service) = Front::new(SERVICES).await;
    tracing::info!("serving the fleet's ingest service");
    if let Some(http) = http {
        let app = crate::side::probes(metrics.clone(), front.serving.clone(), None);
        front.side_port(http, app, None, tls.clone(), &config, &mut Tasks::default())?;
    }
    let router = serving::reflected(&config.limits, Arc::new(ingest))?
        .add_service(health_service)
        .add_service(service);
    let (served, _) =
        front.serve(router, listener, tls, &config, shutdown, (|| (), "batches")).await;
    store.close().await;
    tracing::info!("stopped");
    Ok(served?)
}

/// `[ingest]`'s witnesses, their keys read, each once, and how many are required (all, by
/// default).
fn required_witnesses(config: &IngestConfig) -> Result<Witnesses, ServerError> {
    Witnesses::parse(&config.witnesses, config.witnesses_required).map_err(|e| match e {
        WitnessesError::Key(..) => ServerError::Ingest(format!("witnesses: {e}")),
        WitnessesError::Required(_) => ServerError::Ingest(format!("witnesses_required: {e}")),
    })
}
