//! `toolgate.v1.FleetIngest`: the nodes' calls, each authenticated by the node's token, which
//! alone decides the node; a call naming another node, a revoked token, and every refused
//! batch or cosignature are alarms. Nothing a caller sends is stored unchecked.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use prometheus_client::metrics::counter::Counter;
use tokio::sync::mpsc;
use tokio_stream::wrappers::ReceiverStream;
use tonic::{Request, Response, Status, Streaming};

use crate::fleet::ingest::check::{Batch, Refusal};
use crate::fleet::ingest::writer::{IngestError, Position, Shipped, Shipper, Writer};
use crate::fleet::token;
use crate::listener::{Door, Entry};
use crate::metrics::Metrics;
use crate::proto;
use crate::proto::fleet_ingest_server::FleetIngest;

/// The most events a batch (or cosignatures a call) may bring.
pub const MAX_BATCH: usize = 10_000;

/// The largest message a node may send: a batch of at most 16 MiB of events (or
/// [`MAX_BATCH`] cosignatures), with room. `Position` takes a node's id only.
pub const MAX_MESSAGE: usize = 32 << 20;
const MAX_POSITION: usize = 64 << 10;

/// How long a `Ship` stream may wait for its next batch before it is closed (the shipper opens
/// another when it has one).
const IDLE: Duration = Duration::from_secs(300);

/// The bearer token of a call.
fn bearer(headers: &http::HeaderMap) -> Option<&str> {
    let value = headers.get("authorization")?.to_str().ok()?;
    value.strip_prefix("Bearer ")
}
/// The service.
#[derive(Debug, Clone)]
pub struct IngestService {
    writer: Arc<Writer>,
    stored: Counter,
    refused: Counter,
}

impl IngestService {
    pub fn new(writer: Writer, metrics: &Metrics) -> Self {
        Self {
            writer: Arc::new(writer),
            stored: metrics.counter("ingest_stored_events", "Events the ingest service stored"),
            refused: metrics.counter(
                "ingest_refusals",
                "Calls the ingest service refused and recorded as alarms",
            ),
        }
    }

    /// The node a call's token is of: found by the port's front on the call's head (see
    /// [`Door`]), or looked up now.
    async fn shipper<T>(&self, request: &Request<T>) -> Result<Shipper, Status> {
        match request.extensions().get::<Shipper>() {
            Some(shipper) => Ok(shipper.clone()),
            None => self.of_head(request.metadata().as_ref(), request.remote_addr()).await,
        }
    }

    /// The node the token of a call's `headers` is of; refused (and, for a revoked token,
    /// recorded) when the token is missing, unknown or revoked.
    async fn of_head(
        &self,
        headers: &http::HeaderMap,
        peer: Option<std::net::SocketAddr>,
    ) -> Result<Shipper, Status> {
        let peer = peer.map(|a| a.to_string());
        let Some(hash) = bearer(headers).and_then(token::hash) else {
            return Err(Status::unauthenticated("a node's token is needed: Bearer <token>"));
        };
        let found = self.writer.token(&hash).await.map_err(|e| unavailable(&e))?;
        let Some((node, revoked)) = found else {
            tracing::warn!(peer, "an ingest call with a token that is no node's");
            return Err(Status::unauthenticated("not a node's token"));
        };
        let shipper = Shipper { node, token: hash, peer };
        if revoked {
            let refusal = Refusal::whole("a call with the node's revoked token");
            self.refuse(&shipper.node, &shipper, &refusal).await;
            return Err(IngestError::Revoked.into());
        }
        Ok(shipper)
    }

    /// Refuses a call that names another node than its token's, as an alarm (of the named
    /// node when it is a node id, else of the token's).
    async fn claims(&self, shipper: &Shipper, claimed: &str) -> Result<(), Status> {
        if claimed == shipper.node {
            return Ok(());
        }
        let refusal = Refusal::whole(format!(
            "a call under the id of node {claimed:?} with the token of node {:?}",
            shipper.node
        ));
        let named = if crate::fleet::valid_node(claimed) { claimed } else { &shipper.node };
        self.refuse(named, shipper, &refusal).await;
        Err(Status::permission_denied("this token does not ship for that node"))
    }

    async fn refuse(&self, claimed: &str, shipper: &Shipper, refusal: &Refusal) {
        self.refused.inc();
        self.writer.alarm(claimed, shipper, refusal).await;
    }

    /// Refuses a call that brings more than [`MAX_BATCH`] of `field`, as an alarm too.
    async fn oversized(&self, shipper: &Shipper, field: &str, what: &str) -> Status {
        let message = format!("{field}: at most {MAX_BATCH} in {what}");
        self.refuse(&shipper.node, shipper, &Refusal::whole(message.clone())).await;
        Status::invalid_argument(message)
    }

    /// The status of a failed call; a refusal is recorded first, as an alarm.
    async fn failed(&self, shipper: &Shipper, error: IngestError) -> Status {
        match &error {
            IngestError::Refused(refusal) => self.refuse(&shipper.node, shipper, refusal).await,
            IngestError::Revoked => {
                let refusal = Refusal::whole("a batch with the node's revoked token");
                self.refuse(&shipper.node, shipper, &refusal).await;
            }
            IngestError::Tree => tracing::error!(node = %shipper.node, "{error}"),
            IngestError::Unregistered | IngestError::Db(_) => {}
        }
        error.into()
    }

    /// One batch: checked, then stored or refused.
    async fn batch(
        &self,
        shipper: &Shipper,
        request: proto::ShipRequest,
    ) -> Result<proto::ShipResponse, Status> {
        self.claims(shipper, &request.node_id).await?;
        if request.events.len() > MAX_BATCH {
            return Err(self.oversized(shipper, "events", "a batch").await);
        }
        // Hashing every event's content is the costly part: off the async workers.
        if request.cosignatures.len() > MAX_BATCH {
            return Err(self.oversized(shipper, "cosignatures", "a batch").await);
        }
        let later = request.witnessed.as_ref().map_or(0, |w| w.cosignatures.len());
        if later > MAX_BATCH {
            return Err(self.oversized(shipper, "witnessed.cosignatures", "a batch").await);
        }
        let read = tokio::task::spawn_blocking(move || {
            Batch::read(request.events, request.cosignatures, request.witnessed)
        })
        .await;
        let batch = match read {
            Ok(Ok(batch)) => batch,
            Ok(Err(refusal)) => {
                return Err(self.failed(shipper, IngestError::Refused(refusal)).await);
            }
            Err(_) => return Err(Status::internal("the batch's check stopped")),
        };
        match self.writer.ship(shipper, &batch).await {
            Ok(Shipped { seq, stored, awaiting }) => {
                self.stored.inc_by(stored);
                let required = self.writer.witnesses();
                let (witnesses, witnesses_required) = match awaiting {
                    true => (
                        required.keys.iter().map(|k| k.encode()).collect(),
                        u32::try_from(required.required).unwrap_or(u32::MAX),
                    ),
                    false => (Vec::new(), 0),
                };
                Ok(proto::ShipResponse {
                    seq,
                    stored,
                    awaiting_witnesses: awaiting,
                    witnesses,
                    witnesses_required,
                })
            }
            Err(e) => Err(self.failed(shipper, e).await),
        }
    }
}

/// Every call is authenticated on its head, before its message is read: a peer without a
/// node's token, or with a made-up one, costs a lookup and nothing more.
impl Door for IngestService {
    fn admit<'a>(
        &'a self,
        head: &'a mut http::request::Parts,
    ) -> Pin<Box<dyn Future<Output = Result<Entry, Status>> + Send + 'a>> {
        Box::pin(async move {
            let max_message = match head.uri.path() {
                "/toolgate.v1.FleetIngest/Ship" | "/toolgate.v1.FleetIngest/Cosign" => MAX_MESSAGE,
                "/toolgate.v1.FleetIngest/Position" => MAX_POSITION,
                // Health and reflection: no credential, and no trust.
                _ => return Ok(Entry { trusted: false, max_message: MAX_POSITION }),
            };
            let shipper = self.of_head(&head.headers, crate::tls::peer_addr(&head.extensions));
            head.extensions.insert(shipper.await?);
            Ok(Entry { trusted: true, max_message })
        })
    }
}

/// The store could not be reached or failed: the detail in the log, not to the caller.
fn unavailable(error: &sqlx::Error) -> Status {
    tracing::warn!("the fleet store: {error}");
    Status::unavailable("the fleet store is unavailable")
}

#[tonic::async_trait]
impl FleetIngest for IngestService {
    async fn position(
        &self,
        request: Request<proto::PositionRequest>,
    ) -> Result<Response<proto::PositionResponse>, Status> {
        let shipper = self.shipper(&request).await?;
        self.claims(&shipper, &request.get_ref().node_id).await?;
        match self.writer.position(&shipper.node).await {
            Ok(Position { seq, cosigned }) => {
                Ok(Response::new(proto::PositionResponse { seq, cosigned }))
            }
            Err(e) => Err(self.failed(&shipper, e).await),
        }
    }

    type ShipStream = ReceiverStream<Result<proto::ShipResponse, Status>>;

    /// Each batch answered in turn; the stream ends at the first that fails.
    async fn ship(
        &self,
        request: Request<Streaming<proto::ShipRequest>>,
    ) -> Result<Response<Self::ShipStream>, Status> {
        let shipper = self.shipper(&request).await?;
        let mut batches = request.into_inner();
        let (answers, stream) = mpsc::channel(2);
        let service = self.clone();
        tokio::spawn(async move {
            loop {
                let answer = match tokio::time::timeout(IDLE, batches.message()).await {
                    Ok(Ok(Some(batch))) => service.batch(&shipper, batch).await,
                    Ok(Ok(None)) => return,
                    Ok(Err(status)) => Err(status),
                    Err(_) => Err(Status::deadline_exceeded("no batch for 5 minutes")),
                };
                let failed = answer.is_err();
                if answers.send(answer).await.is_err() || failed {
                    return;
                }
            }
        });
        Ok(Response::new(ReceiverStream::new(stream)))
    }

    async fn cosign(
        &self,
        request: Request<proto::CosignRequest>,
    ) -> Result<Response<proto::CosignResponse>, Status> {
        let shipper = self.shipper(&request).await?;
        let request = request.into_inner();
        self.claims(&shipper, &request.node_id).await?;
        if request.cosignatures.len() > MAX_BATCH {
            return Err(self.oversized(&shipper, "cosignatures", "a call").await);
        }
        match self.writer.cosign(&shipper.node, &request.cosignatures).await {
            Ok(stored) => Ok(Response::new(proto::CosignResponse { stored })),
            Err(e) => Err(self.failed(&shipper, e).await),
        }
    }
}

/// The status of an ingest call that failed: the one mapping of the ingest's errors.
impl From<IngestError> for Status {
    fn from(error: IngestError) -> Self {
        match error {
            IngestError::Refused(refusal) => {
                Status::failed_precondition(format!("the fleet store refused it: {refusal}"))
            }
            IngestError::Revoked => {
                Status::permission_denied("this node's registration is revoked")
            }
            IngestError::Unregistered => Status::failed_precondition("the node is not registered"),
            IngestError::Db(e) => unavailable(&e),
            IngestError::Tree => {
                Status::internal("the fleet store's tree of the node does not read")
            }
        }
    }
}
