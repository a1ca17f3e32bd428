//! The fleet sink: the sidecar's committed events go to the fleet's ingest service in batches,
//! on one `Ship` stream, each acknowledged with the last seq the store holds; shipping starts
//! from that seq as the service tells it (at start and after any trouble, so a restart of
//! any side resumes where the store stands: delivery at least once, storage exactly once).
//! Once the events are caught up, the witnesses' cosignatures of its checkpoints follow, from
//! where the store's cosignatures stand.
//!
//! Several ingest servers (`ingest_urls`) share one store: the shipper uses the first, moves to
//! the next when one fails (unreachable, hung, unavailable: never when one refuses, since they
//! all would), and tries the first again `fail_back_ms` after it left it. Every call has a deadline,
//! so a server that takes the connection and never answers is left like one that is down; at a
//! stop, a round in flight is cut after [`STOP_WITHIN`].

use std::path::Path;
use std::time::Duration;

use prometheus_client::metrics::counter::Counter;
use prost::Message;
use tokio::sync::mpsc;
use tokio_stream::wrappers::ReceiverStream;
use tonic::metadata::{Ascii, MetadataValue};
use tonic::service::Interceptor;
use tonic::service::interceptor::InterceptedService;
use tonic::transport::{Certificate, Channel, ClientTlsConfig, Endpoint};
use tonic::{Code, Request, Status, Streaming};

use super::{Follower, Sink, Taken, Trouble};
use crate::config::FleetConfig;
use crate::metrics::{Metrics, SinkNames};
use crate::proto;
use crate::proto::fleet_ingest_client::FleetIngestClient;
use crate::store::Reader;
use crate::trail::Event;
use crate::trail::cosignature::{CosignatureVerifier, Witnesses};
use crate::wire::event_to_proto;

/// Its metrics: `toolgate_fleet_shipped_events_total`, `toolgate_fleet_lag_events`, ….
const NAMES: SinkNames = SinkNames {
    delivered: "shipped_events",
    delivered_help: "Events stored in the fleet store by this node's shipper",
    taken: "stored",
    destination: "the fleet store",
    position: "shipped_seq",
};

/// The environment variable that may hold the node's token.
pub const TOKEN_ENV: &str = "TOOLGATE_FLEET_TOKEN";

/// The most bytes of events one batch carries (the ingest service takes 32 MiB messages).
const MAX_BATCH_BYTES: usize = 16 << 20;

/// The most cosignatures one batch carries (as many as the ingest service takes).
const COSIGNATURES: u32 = 10_000;

/// How long any call to the ingest service may go unanswered (a batch's acknowledgement: its
/// check and its `COPY`), and a TLS handshake may take.
const ANSWER_WITHIN: Duration = Duration::from_secs(30);
const HANDSHAKE_WITHIN: Duration = Duration::from_secs(10);

/// At a stop, how long a round still in flight may take: the events it did not get
/// acknowledged stay on the trail and ship after the restart.
pub const STOP_WITHIN: Duration = Duration::from_secs(3);

/// Why `[fleet]` is refused at start.
#[derive(Debug, thiserror::Error)]
pub enum FleetConfigError {
    #[error("[fleet] node_id needs ingest_url (or ingest_urls), the ingest service's URL")]
    NoUrl,
    #[error(
        "[fleet] postgres_url: sidecars ship through the ingest service now; set ingest_url and \
         token_file (docs/fleet.md, \"Upgrading from direct shipping\")"
    )]
    Direct,
    #[error("[fleet] node_id needs a token: token_file, or {TOKEN_ENV}")]
    NoToken,
    #[error("[fleet] {0}")]
    Invalid(String),
}

/// Adds the node's token to every call.
#[derive(Debug, Clone)]
pub struct Bearer(MetadataValue<Ascii>);

impl Interceptor for Bearer {
    fn call(&mut self, mut request: Request<()>) -> Result<Request<()>, Status> {
        request.metadata_mut().insert("authorization", self.0.clone());
        Ok(request)
    }
}

type Client = FleetIngestClient<InterceptedService<Channel, Bearer>>;

/// The `Ship` stream while it is open: where batches go, and their acknowledgements.
struct Shipping {
    batches: mpsc::Sender<proto::ShipRequest>,
    acks: Streaming<proto::ShipResponse>,
}

/// One ingest server.
struct Ingest {
    url: String,
    client: Client,
}

/// The sink of a configured shipper.
pub struct Fleet {
    /// The ingest servers, in the order configured, and the one in use.
    ingests: Vec<Ingest>,
    current: usize,
    /// When the shipper left the first one, while it uses another; how long until it tries
    /// the first again.
    away_since: Option<tokio::time::Instant>,
    fail_back: Duration,
    node: String,
    batch: u32,
    shipping: Option<Shipping>,
    /// The checkpoint seq the store's cosignatures stand at; asked again after any trouble.
    cosigned: Option<i64>,
    /// The witnesses the fleet said it requires: every batch then goes no further than the
    /// node's last checkpoint they cosigned, with that checkpoint. Asked again after trouble.
    fleet_witnesses: Option<Witnesses>,
    /// That checkpoint, found before the batch was read.
    later: Option<Cosigned>,
    /// The store's head when the fleet last said it awaits witnesses and stored nothing, and
    /// the checkpoint the node had for it then (its seq and how many cosignatures): nothing
    /// is read or sent again until that changes.
    awaiting: Option<(i64, Option<(i64, usize)>)>,
    cosignatures: Counter,
}

impl std::fmt::Debug for Fleet {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Fleet").field("node", &self.node).finish_non_exhaustive()
    }
}

/// The shipper `[fleet]` asks for, if it asks for one. Once caught up it looks every
/// `every_ms` for cosignatures, which come without a commit.
pub fn follower(
    config: &FleetConfig,
    metrics: &Metrics,
) -> Result<Option<Follower<Fleet>>, FleetConfigError> {
    let Some(node) = &config.node_id else { return Ok(None) };
    if config.postgres_url.is_some() {
        return Err(FleetConfigError::Direct);
    }
    let urls = match (&config.ingest_url, config.ingest_urls.as_slice()) {
        (Some(url), []) => vec![url.clone()],
        (None, []) => return Err(FleetConfigError::NoUrl),
        (None, urls) => urls.to_vec(),
        (Some(_), _) => {
            return Err(FleetConfigError::Invalid(
                "set ingest_url or ingest_urls, not both".into(),
            ));
        }
    };
    let token = token(config.token_file.as_deref())?;
    let bearer: MetadataValue<Ascii> = format!("Bearer {token}")
        .parse()
        .map_err(|_| FleetConfigError::Invalid("the token is not a header value".into()))?;
    let mut ingests = Vec::with_capacity(urls.len());
    for url in urls {
        let channel = endpoint(&url, config.ca_file.as_deref())?.connect_lazy();
        let client = FleetIngestClient::with_interceptor(channel, Bearer(bearer.clone()))
            .max_encoding_message_size(MAX_BATCH_BYTES * 2);
        ingests.push(Ingest { url, client });
    }
    let urls: Vec<&str> = ingests.iter().map(|i| i.url.as_str()).collect();
    tracing::info!(node = %node, urls = ?urls, "shipping the trail to the fleet's ingest service");
    let batch = config.batch_events.clamp(1, 10_000);
    let cosignatures = metrics.counter(
        "fleet_shipped_cosignatures",
        "Witness cosignatures stored in the fleet store by this node's shipper",
    );
    let sink = Fleet {
        ingests,
        current: 0,
        away_since: None,
        fail_back: Duration::from_millis(config.fail_back_ms),
        node: node.clone(),
        batch,
        shipping: None,
        cosigned: None,
        fleet_witnesses: None,
        later: None,
        awaiting: None,
        cosignatures,
    };
    let every = Duration::from_millis(config.every_ms.max(1));
    let follower =
        Follower::new(sink, batch, every).looking_every(every).coalescing(super::COALESCE);
    Ok(Some(follower.stopping_within(STOP_WITHIN).measured(metrics, NAMES)))
}

/// The node's token: the file's, else the environment's.
fn token(file: Option<&Path>) -> Result<String, FleetConfigError> {
    let token = match file {
        Some(path) => std::fs::read_to_string(path).map_err(|e| {
            FleetConfigError::Invalid(format!("token_file {}: {e}", path.display()))
        })?,
        None => std::env::var(TOKEN_ENV).map_err(|_| FleetConfigError::NoToken)?,
    };
    let token = token.trim().to_owned();
    if crate::fleet::token::hash(&token).is_none() {
        return Err(FleetConfigError::Invalid(
            "the token is not one `toolgate fleet register` issued".into(),
        ));
    }
    Ok(token)
}

/// The ingest service's endpoint: over TLS for `https://`, checked against `ca_file`'s CAs or
/// the system's roots.
fn endpoint(url: &str, ca_file: Option<&Path>) -> Result<Endpoint, FleetConfigError> {
    let invalid = |what: String| FleetConfigError::Invalid(what);
    let endpoint = Endpoint::from_shared(url.to_owned())
        .map_err(|_| invalid(format!("ingest_url {url:?} is not a URL")))?
        .connect_timeout(Duration::from_secs(5))
        .timeout(ANSWER_WITHIN)
        .http2_keep_alive_interval(Duration::from_secs(30))
        .keep_alive_timeout(Duration::from_secs(10));
    if !url.starts_with("https://") {
        // The token goes in every call: in clear only to this machine.
        let parsed = url::Url::parse(url).ok();
        let loopback = parsed.as_ref().and_then(url::Url::host).is_some_and(|host| match host {
            url::Host::Domain(name) => name == "localhost",
            url::Host::Ipv4(ip) => ip.is_loopback(),
            url::Host::Ipv6(ip) => ip.is_loopback(),
        });
        if !loopback {
            return Err(invalid(format!(
                "ingest_url {url:?}: the token would cross the network in clear; use https://"
            )));
        }
        return Ok(endpoint);
    }
    let tls = match ca_file {
        Some(path) => {
            let pem = std::fs::read(path)
                .map_err(|e| invalid(format!("ca_file {}: {e}", path.display())))?;
            ClientTlsConfig::new().ca_certificate(Certificate::from_pem(pem))
        }
        None => ClientTlsConfig::new().with_native_roots(),
    };
    let tls = tls.timeout(HANDSHAKE_WITHIN);
    endpoint.tls_config(tls).map_err(|e| invalid(format!("ingest_url {url:?}: {e}")))
}

impl Fleet {
    /// The ingest server in use.
    fn client(&mut self) -> &mut Client {
        // INVARIANT: `current` is kept below `ingests.len()`, which is at least 1.
        let at = self.current.min(self.ingests.len() - 1);
        &mut self.ingests[at].client
    }

    /// The trouble a failed call is; a failure (not a refusal: every server of one store would
    /// refuse alike) moves the shipper to the next ingest server.
    fn failed(&mut self, status: &Status) -> Trouble {
        let at = self.current.min(self.ingests.len() - 1);
        let trouble = trouble(status, &self.ingests[at].url);
        if matches!(trouble, Trouble::Failed(_)) && self.ingests.len() > 1 {
            self.shipping = None;
            self.current = (self.current + 1) % self.ingests.len();
            self.away_since = match self.current {
                0 => None,
                _ => Some(self.away_since.unwrap_or_else(tokio::time::Instant::now)),
            };
        }
        trouble
    }

    /// Back to the first ingest server, a while after it was left.
    fn fail_back(&mut self) {
        if self.away_since.is_some_and(|since| since.elapsed() >= self.fail_back) {
            tracing::info!(url = %self.ingests[0].url, "shipping to the first ingest server again");
            (self.current, self.away_since, self.shipping) = (0, None, None);
        }
    }

    /// The open `Ship` stream, opened if there is none.
    async fn shipping(&mut self) -> Result<&mut Shipping, Status> {
        if self.shipping.is_none() {
            let (batches, queue) = mpsc::channel(1);
            let acks = self.client().ship(ReceiverStream::new(queue)).await?.into_inner();
            self.shipping = Some(Shipping { batches, acks });
        }
        self.shipping.as_mut().ok_or_else(|| Status::internal("no stream"))
    }

    /// Where the store stands for the node: its last seq, and its cosignatures' checkpoint.
    async fn position(&mut self) -> Result<(i64, i64), Trouble> {
        let request = proto::PositionRequest { node_id: self.node.clone() };
        let position = match self.client().position(request).await {
            Ok(position) => position.into_inner(),
            Err(status) => return Err(self.failed(&status)),
        };
        Ok((position.seq, position.cosigned))
    }

    /// Sends one batch on the stream and waits for its acknowledgement, at most
    /// [`ANSWER_WITHIN`].
    async fn send(&mut self, batch: proto::ShipRequest) -> Result<proto::ShipResponse, Status> {
        let shipping = self.shipping().await?;
        if shipping.batches.send(batch).await.is_err() {
            return Err(Status::unavailable("the stream ended"));
        }
        match tokio::time::timeout(ANSWER_WITHIN, shipping.acks.message()).await {
            Ok(answer) => answer?.ok_or_else(|| Status::unavailable("the stream ended")),
            Err(_) => Err(Status::deadline_exceeded("no acknowledgement in time")),
        }
    }
}

/// The node's last checkpoint its fleet's witnesses cosigned: its seq, tree size, note and
/// cosignatures.
#[derive(Debug)]
struct Cosigned {
    seq: i64,
    size: u64,
    note: String,
    cosignatures: Vec<crate::query::Cosignature>,
}

/// The node's last checkpoint after `held` that `witnesses` cosigned (among the first
/// [`COSIGNATURES`] cosignatures after it), if any.
async fn latest_cosigned(
    reader: &Reader,
    held: i64,
    witnesses: &Witnesses,
) -> Result<Option<Cosigned>, crate::store::StoreError> {
    let mut all = reader.cosignatures_after(held, i64::MAX, COSIGNATURES).await?;
    while let Some(seq) = all.last().map(|c| c.seq) {
        let split = all.partition_point(|c| c.seq < seq);
        let cosignatures = all.split_off(split);
        let Some(event) = reader.event(seq).await? else { continue };
        let note = event.record.note.unwrap_or_default();
        let Ok(checkpoint) = crate::trail::checkpoint::Checkpoint::read(&note) else {
            tracing::warn!(seq, "the trail's cosignatures at seq {seq} are of no checkpoint");
            continue;
        };
        let lines: Vec<String> = cosignatures.iter().map(|c| c.line.clone()).collect();
        if witnesses.satisfied(&note, &lines) {
            return Ok(Some(Cosigned { seq, size: checkpoint.size, note, cosignatures }));
        }
    }
    Ok(None)
}

/// A cosignature as the ingest service takes it.
fn cosignature_to_proto(c: crate::query::Cosignature) -> proto::Cosignature {
    proto::Cosignature { seq: c.seq, witness: c.witness, size: c.size, time: c.time, line: c.line }
}

/// The trouble a failed call to the ingest service at `url` is: a refusal (an alarm at the
/// service) or a failure.
#[allow(clippy::wildcard_enum_match_arm, reason = "gRPC's other codes are all failures")]
fn trouble(status: &Status, url: &str) -> Trouble {
    let message = format!("the fleet's ingest service {url}: {}", status.message());
    match status.code() {
        Code::FailedPrecondition | Code::PermissionDenied | Code::Unauthenticated => {
            Trouble::Refused(message)
        }
        Code::ResourceExhausted => Trouble::TooLarge(message),
        _ => Trouble::Failed(message),
    }
}

impl Sink for Fleet {
    const NAME: &'static str = "fleet";
    const HOLDS: Option<&'static str> = Some("fleet");
    const DOING: &'static str = "shipping";
    const AGAIN: &'static str = "shipping to the fleet store again";

    fn destination(&self) -> &str {
        &self.node
    }

    /// The last seq the store holds for the node; its cosignatures are asked again too.
    async fn resume(&mut self, _reader: &Reader) -> Result<i64, Trouble> {
        self.fail_back();
        self.shipping = None;
        self.awaiting = None;
        self.fleet_witnesses = None;
        let (seq, cosigned) = self.position().await?;
        self.cosigned = Some(cosigned);
        Ok(seq)
    }

    /// One batch (as much of it as fits a message) on the stream; acknowledged once stored.
    /// With a fleet that requires witnesses: finds the node's last checkpoint they cosigned,
    /// and waits when there is none after the store's head, or the same as when the fleet last
    /// took nothing.
    async fn waits(&mut self, reader: &Reader, from: i64) -> Result<bool, Trouble> {
        let Some(witnesses) = &self.fleet_witnesses else { return Ok(false) };
        let latest = latest_cosigned(reader, from, witnesses)
            .await
            .map_err(|e| Trouble::Failed(format!("cannot read the trail: {e}")))?;
        let Some(latest) = latest else { return Ok(true) };
        let seen = Some((latest.seq, latest.cosignatures.len()));
        if self.awaiting == Some((from, seen)) {
            return Ok(true);
        }
        self.later = Some(latest);
        Ok(false)
    }

    async fn take(&mut self, reader: &Reader, events: Vec<Event>) -> Result<Taken, Trouble> {
        let (first, last) = match (events.first(), events.last()) {
            (Some(first), Some(last)) => (first.seq, last.seq),
            _ => return Err(Trouble::Failed("nothing to ship".into())),
        };
        let unreadable =
            |e: crate::store::StoreError| Trouble::Failed(format!("cannot read the trail: {e}"));
        let held = first - 1;
        // A fleet that requires witnesses takes events only as far as a checkpoint they
        // cosigned: the node's last, found by `waits`, sent with the batch.
        let later = self.later.take().filter(|l| l.seq > held);
        if self.fleet_witnesses.is_some() && later.is_none() {
            return Ok(Taken { through: held, counted: 0, waits: true });
        }
        let reach = later.as_ref().map_or(last, |l| l.seq.min(last));
        // The cosignatures of the batch's checkpoints go with them.
        let mut cosignatures =
            reader.cosignatures_after(held, reach, COSIGNATURES).await.map_err(unreadable)?;
        let events = events.into_iter().take_while(|e| e.seq <= reach);
        let mut batch = Vec::new();
        let mut bytes = 0;
        for event in events {
            let event = event_to_proto(event);
            bytes += event.encoded_len();
            if bytes > MAX_BATCH_BYTES && !batch.is_empty() {
                break;
            }
            batch.push(event);
        }
        let sent = batch.last().map_or(0, |e| i64::try_from(e.seq).unwrap_or(i64::MAX));
        cosignatures.retain(|c| c.seq <= sent);
        let seen = later.as_ref().map(|l| (l.seq, l.cosignatures.len()));
        let witnessed = match later.filter(|l| l.seq > sent) {
            Some(later) => {
                let size = u64::try_from(sent).unwrap_or(0);
                let proof = reader.consistency_proof(size, later.size).await.map_err(unreadable)?;
                Some(proto::Witnessed {
                    seq: later.seq,
                    note: later.note,
                    cosignatures: later
                        .cosignatures
                        .into_iter()
                        .map(cosignature_to_proto)
                        .collect(),
                    proof: proof.iter().map(|h| h.to_vec()).collect(),
                })
            }
            None => None,
        };
        let request = proto::ShipRequest {
            node_id: self.node.clone(),
            events: batch,
            cosignatures: cosignatures.into_iter().map(cosignature_to_proto).collect(),
            witnessed,
        };
        match self.send(request).await {
            Ok(ack) => {
                let waits = ack.awaiting_witnesses;
                if waits {
                    let keys =
                        ack.witnesses.iter().filter_map(|k| CosignatureVerifier::parse(k).ok());
                    let required = usize::try_from(ack.witnesses_required).ok();
                    self.fleet_witnesses =
                        Some(Witnesses::of(keys.collect(), required).unwrap_or_default());
                }
                // Waiting starts once a batch stored nothing: after progress, the next window
                // may hold what the fleet takes.
                self.awaiting = (waits && ack.stored == 0).then_some((ack.seq, seen));
                Ok(Taken { through: ack.seq, counted: ack.stored, waits: waits && ack.stored == 0 })
            }
            Err(status) => {
                self.shipping = None;
                Err(self.failed(&status))
            }
        }
    }

    /// Ships the cosignatures of checkpoint events up to `through` (which the store holds)
    /// that the store does not have yet.
    async fn caught_up(&mut self, reader: &Reader, through: i64) -> Result<(), Trouble> {
        // Every server of the fleet writes one store: where it stands is the same through
        // any of them, so the shipper may change servers between batches.
        self.fail_back();
        let from = match self.cosigned {
            Some(from) => from,
            None => self.position().await?.1,
        };
        let batch = reader
            .cosignatures_after(from, through, self.batch)
            .await
            .map_err(|e| Trouble::Failed(format!("cannot read the trail: {e}")))?;
        let Some(last) = batch.last().map(|c| c.seq) else { return Ok(()) };
        let full = batch.len() >= self.batch as usize;
        let request = proto::CosignRequest {
            node_id: self.node.clone(),
            cosignatures: batch.into_iter().map(cosignature_to_proto).collect(),
        };
        let stored = match self.client().cosign(request).await {
            Ok(stored) => stored,
            Err(status) => {
                self.cosigned = None;
                return Err(self.failed(&status));
            }
        };
        self.cosignatures.inc_by(stored.into_inner().stored);
        // A full batch may have cut the last checkpoint's witnesses short: that one again.
        self.cosigned = Some(if full { last - 1 } else { last });
        Ok(())
    }

    async fn close(self) {}
}
