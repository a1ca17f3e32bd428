//! `toolgate.v1.Audit`: read, export and verify the trail, over [`crate::store::Reader`] and
//! [`crate::audit`]; or, on a fleet server (`serve --audit-only`), every node's trail in the
//! fleet store, a node at a time where a chain is concerned. Malformed requests are refused by
//! field and recorded like the Gate's.

use std::sync::Arc;

use tokio::sync::{mpsc, watch};
use tokio_stream::wrappers::ReceiverStream;
use tonic::{Request, Response, Status};

use super::Guard;
use super::convert::event_to_proto;
use crate::audit::{
    Anchors, Export, Origin, Report, SharedBuffer, Trails, verify_fleet, verify_trail,
};
use crate::auth::Rpc;
use crate::config::Limits;
use crate::error::{Error, FieldError};
use crate::fleet::store::FleetError;
use crate::follow::{Trail, subscribe};
use crate::proto::{self, audit_server::Audit};
use crate::request::{ArgsHasher, Page, hash_args_request, proof};
use crate::store::{Filter, Head, Reader};
use crate::trail::{Event, Kind};

/// Most problems a Verify answer lists.
const MAX_PROBLEMS: usize = 1000;

/// The tonic service.
#[derive(Debug, Clone)]
pub struct AuditService {
    trails: Trails,
    guard: Guard,
    hasher: ArgsHasher,
    limits: Arc<Limits>,
    /// What `Subscribe` waits on; a service without it (the fleet's) has no live stream.
    follow: Option<(Trail, watch::Receiver<bool>)>,
}

impl AuditService {
    /// The trail whose tree proofs come from: a fleet store keeps only each node's right edge.
    fn tree(&self) -> Result<&Reader, Status> {
        match &self.trails {
            Trails::One(reader) => Ok(reader),
            Trails::Fleet(_) => Err(Status::failed_precondition(
                "proofs come from a node's own trail (its tree): the fleet store keeps only the \
                 right edge of each node's tree; ask the node's sidecar",
            )),
        }
    }
}

/// What a sidecar says of a node id.
const NOT_A_FLEET: &str =
    "this sidecar serves its own trail only: node ids are for a fleet server (serve --audit-only)";

impl AuditService {
    /// Serves `trails` to auditors; HashArgs hashes as Decide does, within the same limits.
    pub fn new(trails: Trails, guard: Guard, hasher: ArgsHasher, limits: Limits) -> Self {
        Self { trails, guard, hasher, limits: Arc::new(limits), follow: None }
    }

    /// The same service, its `Subscribe` woken by the writer's commits and ended by shutdown.
    pub fn following(self, trail: Trail, stopping: watch::Receiver<bool>) -> Self {
        let follow = (trail, stopping);
        Self { follow: Some(follow), ..self }
    }

    /// The filter of a request, and the node it names, if any (only a fleet server takes one).
    async fn filter(
        &self,
        rpc: Rpc,
        filter: Option<proto::Filter>,
    ) -> Result<(Filter, Option<String>), Status> {
        let mut filter = filter.unwrap_or_default();
        let node = std::mem::take(&mut filter.node_id);
        let node = self.node(rpc, "filter.node_id", node).await?;
        match Filter::from_proto(filter, "filter.") {
            Ok(filter) => Ok((filter, node)),
            Err(e) => Err(self.guard.invalid(rpc, e).await),
        }
    }

    /// A request's node id (`field`), if it names one: refused by a sidecar, and on a fleet
    /// server unless it is a node id.
    async fn node(&self, rpc: Rpc, field: &str, node: String) -> Result<Option<String>, Status> {
        let problem = match &self.trails {
            _ if node.is_empty() => return Ok(None),
            Trails::One(_) => NOT_A_FLEET,
            Trails::Fleet(_) if crate::fleet::valid_node(&node) => return Ok(Some(node)),
            Trails::Fleet(_) => crate::fleet::NODE_ID,
        };
        Err(self.guard.invalid(rpc, FieldError::new(field, problem)).await)
    }

    /// The one trail a request is about: the sidecar's own, or on a fleet server that of the
    /// node it names (`field`), which it must.
    async fn origin(&self, rpc: Rpc, field: &str, node: String) -> Result<Origin, Status> {
        match (&self.trails, self.node(rpc, field, node).await?) {
            (Trails::One(reader), _) => Ok(Origin::Trail(reader.clone())),
            (Trails::Fleet(store), Some(node)) => Ok(Origin::Fleet { store: store.clone(), node }),
            (Trails::Fleet(_), None) => {
                let e = FieldError::new(field, "required on a fleet server");
                Err(self.guard.invalid(rpc, e).await)
            }
        }
    }
}

fn unavailable(error: crate::store::StoreError) -> Status {
    Error::from(error).into()
}

fn fleet_unavailable(error: FleetError) -> Status {
    // The details are for the operator.
    tracing::error!(error = %error, "the fleet store failed");
    Status::unavailable("the fleet store is unavailable")
}

fn no_node(node: &str) -> Status {
    Status::not_found(format!("the fleet store has no node {node:?}"))
}

/// A Verify report on the wire.
fn verify_response(report: &Report) -> proto::VerifyResponse {
    let (last_seq, last_hash) = report.last.clone().unwrap_or_default();
    proto::VerifyResponse {
        intact: report.intact(),
        checked: report.checked,
        problems: report
            .problems
            .iter()
            .take(MAX_PROBLEMS)
            .map(|p| proto::Problem {
                seq: p.seq().unsigned_abs(),
                kind: p.kind().to_owned(),
                message: p.to_string(),
            })
            .collect(),
        last_seq: last_seq.unsigned_abs(),
        last_hash,
    }
}

#[tonic::async_trait]
impl Audit for AuditService {
    #[tracing::instrument(name = "HashArgs", skip_all)]
    async fn hash_args(
        &self,
        request: Request<proto::HashArgsRequest>,
    ) -> Result<Response<proto::HashArgsResponse>, Status> {
        self.guard.check(&request, Rpc::HashArgs).await?;
        let req = request.into_inner();
        let hashed = hash_args_request(&req.args_json, &self.limits).and_then(|args| {
            self.hasher.hash(&args).map_err(|e| FieldError::new("args_json", e.to_string()))
        });
        match hashed {
            Ok(hashed) => Ok(Response::new(proto::HashArgsResponse {
                args_hash: hashed.hash,
                canonical_json: hashed.json,
            })),
            Err(e) => Err(self.guard.invalid(Rpc::HashArgs, e).await),
        }
    }

    #[tracing::instrument(name = "Query", skip_all)]
    async fn query(
        &self,
        request: Request<proto::QueryRequest>,
    ) -> Result<Response<proto::QueryResponse>, Status> {
        self.guard.check(&request, Rpc::Query).await?;
        let req = request.into_inner();
        let (filter, node) = self.filter(Rpc::Query, req.filter).await?;
        let fleet = matches!(self.trails, Trails::Fleet(_));
        let page = match Page::from_proto(req.page_size, &req.page_token, fleet) {
            Ok(page) => page,
            Err(e) => return Err(self.guard.invalid(Rpc::Query, e).await),
        };
        let events: Vec<(Option<String>, Event)> = match (&self.trails, req.newest_first) {
            (Trails::One(reader), false) => {
                let events = reader.query(&filter, page.after, page.size).await;
                events.map_err(unavailable)?.into_iter().map(|e| (None, e)).collect()
            }
            (Trails::One(reader), true) => {
                let events = reader.query_newest(&filter, page.after, page.size).await;
                events.map_err(unavailable)?.into_iter().map(|e| (None, e)).collect()
            }
            (Trails::Fleet(store), newest_first) => {
                let node = node.as_deref();
                let at = (page.after_node.as_str(), page.after);
                let events = match newest_first {
                    false => store.query(node, &filter, at, page.size).await,
                    true => {
                        let before = (!page.after_node.is_empty()).then_some(at);
                        store.query_newest(node, &filter, before, page.size).await
                    }
                };
                events.map_err(fleet_unavailable)?.into_iter().map(|(n, e)| (Some(n), e)).collect()
            }
        };
        let next_page_token = match events.last() {
            Some((node, last)) if events.len() == page.size as usize => {
                Page::token(node.as_deref(), last.seq)
            }
            _ => String::new(),
        };
        let events = events
            .into_iter()
            .map(|(node, event)| proto::Event {
                node_id: node.unwrap_or_default(),
                ..event_to_proto(event)
            })
            .collect();
        Ok(Response::new(proto::QueryResponse { events, next_page_token }))
    }

    type ExportCsvStream = ReceiverStream<Result<proto::CsvChunk, Status>>;
    type SubscribeStream = ReceiverStream<Result<proto::Event, Status>>;

    #[tracing::instrument(name = "Subscribe", skip_all)]
    async fn subscribe(
        &self,
        request: Request<proto::SubscribeRequest>,
    ) -> Result<Response<Self::SubscribeStream>, Status> {
        self.guard.check(&request, Rpc::Subscribe).await?;
        let req = request.into_inner();
        let (Trails::One(_), Some(follow)) = (&self.trails, &self.follow) else {
            return Err(Status::failed_precondition(
                "a live stream comes from a node's own trail: subscribe to the node's sidecar",
            ));
        };
        let follow = follow.clone();
        let (filter, _) = self.filter(Rpc::Subscribe, req.filter).await?;
        let after = match i64::try_from(req.from_seq) {
            Ok(from) => from.saturating_sub(1),
            Err(_) => {
                let e = FieldError::new("from_seq", "out of range");
                return Err(self.guard.invalid(Rpc::Subscribe, e).await);
            }
        };
        let (events, stream) = mpsc::channel(64);
        tokio::spawn(subscribe::follow(follow, filter, after, event_to_proto, events));
        Ok(Response::new(ReceiverStream::new(stream)))
    }

    #[tracing::instrument(name = "ExportCsv", skip_all)]
    async fn export_csv(
        &self,
        request: Request<proto::ExportRequest>,
    ) -> Result<Response<Self::ExportCsvStream>, Status> {
        self.guard.check(&request, Rpc::ExportCsv).await?;
        let req = request.into_inner();
        let mut wire = req.filter.unwrap_or_default();
        let node = std::mem::take(&mut wire.node_id);
        let origin = self.origin(Rpc::ExportCsv, "filter.node_id", node).await?;
        let (filter, _) = self.filter(Rpc::ExportCsv, Some(wire)).await?;
        let (chunks, stream) = mpsc::channel(4);
        tokio::spawn(async move {
            if let Err(status) = stream_export(origin, filter, req.bom, &chunks).await {
                let _ = chunks.send(Err(status)).await;
            }
        });
        Ok(Response::new(ReceiverStream::new(stream)))
    }

    #[tracing::instrument(name = "Verify", skip_all)]
    async fn verify(
        &self,
        request: Request<proto::VerifyRequest>,
    ) -> Result<Response<proto::VerifyResponse>, Status> {
        self.guard.check(&request, Rpc::Verify).await?;
        let req = request.into_inner();
        let bound = |field: &str, v: u64| {
            i64::try_from(v).map_err(|_| FieldError::new(field, "out of range"))
        };
        let range = bound("from_seq", req.from_seq)
            .and_then(|from| Ok((from, bound("to_seq", req.to_seq)?)));
        let (from, to) = match range {
            Ok(range) => range,
            Err(e) => return Err(self.guard.invalid(Rpc::Verify, e).await),
        };
        let to = (to > 0).then_some(to);
        let report = match self.origin(Rpc::Verify, "node_id", req.node_id).await? {
            Origin::Trail(reader) => verify_trail(&reader, from, to, &Anchors::default(), |_| {})
                .await
                .map_err(unavailable)?,
            Origin::Fleet { store, node } => {
                if from > 1 || to.is_some() {
                    let e = FieldError::new("from_seq", "a fleet server verifies a node whole");
                    return Err(self.guard.invalid(Rpc::Verify, e).await);
                }
                let reports = verify_fleet(&store, Some(&node), &Default::default()).await;
                let reports = reports.map_err(fleet_unavailable)?;
                reports.into_iter().next().ok_or_else(|| no_node(&node))?.1
            }
        };
        Ok(Response::new(verify_response(&report)))
    }

    #[tracing::instrument(name = "Head", skip_all)]
    async fn head(
        &self,
        request: Request<proto::HeadRequest>,
    ) -> Result<Response<proto::HeadResponse>, Status> {
        self.guard.check(&request, Rpc::Head).await?;
        let node = request.into_inner().node_id;
        let head = match self.origin(Rpc::Head, "node_id", node).await? {
            Origin::Trail(reader) => reader.head().await.map_err(unavailable)?,
            Origin::Fleet { store, node } => {
                let (seq, _) = store.head(&node).await.map_err(fleet_unavailable)?;
                let event = store.event(&node, seq).await.map_err(fleet_unavailable)?;
                event.map(|e| Head { seq: e.seq, hash: e.hash, ts: e.ts })
            }
        };
        Ok(Response::new(head.map_or_else(proto::HeadResponse::default, |h| proto::HeadResponse {
            seq: h.seq.unsigned_abs(),
            hash: h.hash,
            ts: h.ts,
        })))
    }

    #[tracing::instrument(name = "Checkpoint", skip_all)]
    async fn checkpoint(
        &self,
        request: Request<proto::CheckpointRequest>,
    ) -> Result<Response<proto::CheckpointResponse>, Status> {
        self.guard.check(&request, Rpc::Checkpoint).await?;
        let req = request.into_inner();
        let size = req.size;
        let origin = self.origin(Rpc::Checkpoint, "node_id", req.node_id).await?;
        let seq = i64::try_from(size + 1).ok();
        let found = match (&origin, size, seq) {
            (Origin::Trail(reader), 0, _) => reader.last_checkpoint().await.map_err(unavailable),
            (Origin::Trail(reader), _, Some(seq)) => reader.event(seq).await.map_err(unavailable),
            (Origin::Fleet { store, node }, 0, _) => {
                store.last_checkpoint(node).await.map_err(fleet_unavailable)
            }
            (Origin::Fleet { store, node }, _, Some(seq)) => {
                store.event(node, seq).await.map_err(fleet_unavailable)
            }
            (_, _, None) => Ok(None),
        }?;
        match found.filter(|e| e.record.kind == Kind::Checkpoint) {
            Some(event) => {
                let cosigned = match &origin {
                    Origin::Trail(reader) => {
                        reader.cosigned_note(&event).await.map_err(unavailable)?
                    }
                    Origin::Fleet { store, node } => {
                        let lines = store.cosignature_lines(node, event.seq).await;
                        let lines = lines.map_err(fleet_unavailable)?;
                        let note = event.record.note.clone().unwrap_or_default();
                        lines.into_iter().fold(note, |note, line| note + &line)
                    }
                };
                Ok(Response::new(proto::CheckpointResponse {
                    size: event.seq.unsigned_abs() - 1,
                    seq: event.seq.unsigned_abs(),
                    cosigned,
                    note: event.record.note.unwrap_or_default(),
                }))
            }
            None => Err(Status::not_found(match size {
                0 => "the trail has no checkpoint (is [checkpoints] configured?)".to_owned(),
                size => format!("no checkpoint of the tree of {size} events"),
            })),
        }
    }

    #[tracing::instrument(name = "InclusionProof", skip_all)]
    async fn inclusion_proof(
        &self,
        request: Request<proto::InclusionProofRequest>,
    ) -> Result<Response<proto::InclusionProofResponse>, Status> {
        self.guard.check(&request, Rpc::InclusionProof).await?;
        let req = request.into_inner();
        let reader = self.tree()?;
        let current = reader.tree_size().await.map_err(unavailable)?;
        let (seq, size) = match proof::inclusion(req.seq, req.tree_size, current) {
            Ok(range) => range,
            Err(e) => return Err(self.guard.invalid(Rpc::InclusionProof, e).await),
        };
        let leaf_hash = reader.leaf(seq).await.map_err(unavailable)?;
        let proof = reader.inclusion_proof(seq, size).await.map_err(unavailable)?;
        let root = reader.root(size).await.map_err(unavailable)?;
        Ok(Response::new(proto::InclusionProofResponse {
            tree_size: size,
            leaf_index: seq - 1,
            leaf_hash: leaf_hash.to_vec(),
            hashes: proof.iter().map(|h| h.to_vec()).collect(),
            root: root.to_vec(),
        }))
    }

    #[tracing::instrument(name = "ConsistencyProof", skip_all)]
    async fn consistency_proof(
        &self,
        request: Request<proto::ConsistencyProofRequest>,
    ) -> Result<Response<proto::ConsistencyProofResponse>, Status> {
        self.guard.check(&request, Rpc::ConsistencyProof).await?;
        let req = request.into_inner();
        let reader = self.tree()?;
        let current = reader.tree_size().await.map_err(unavailable)?;
        let (old, new) = match proof::consistency(req.old_size, req.new_size, current) {
            Ok(range) => range,
            Err(e) => return Err(self.guard.invalid(Rpc::ConsistencyProof, e).await),
        };
        let proof = reader.consistency_proof(old, new).await.map_err(unavailable)?;
        Ok(Response::new(proto::ConsistencyProofResponse {
            old_size: old,
            new_size: new,
            hashes: proof.iter().map(|h| h.to_vec()).collect(),
            old_root: reader.root(old).await.map_err(unavailable)?.to_vec(),
            new_root: reader.root(new).await.map_err(unavailable)?.to_vec(),
        }))
    }

    #[tracing::instrument(name = "Stats", skip_all)]
    async fn stats(
        &self,
        request: Request<proto::StatsRequest>,
    ) -> Result<Response<proto::StatsResponse>, Status> {
        self.guard.check(&request, Rpc::Stats).await?;
        let req = request.into_inner();
        let range = match Filter::time_range(&req.since, &req.until, "") {
            Ok(range) => range,
            Err(e) => return Err(self.guard.invalid(Rpc::Stats, e).await),
        };
        let node = self.node(Rpc::Stats, "node_id", req.node_id).await?;
        let stats = match &self.trails {
            Trails::One(reader) => reader.stats(&range).await.map_err(unavailable)?,
            Trails::Fleet(store) => {
                store.stats(node.as_deref(), &range).await.map_err(fleet_unavailable)?
            }
        };
        let counts = |list: Vec<(String, u64)>| {
            list.into_iter().map(|(key, count)| proto::Count { key, count }).collect()
        };
        Ok(Response::new(proto::StatsResponse {
            total: stats.total,
            by_outcome: counts(stats.by_outcome),
            by_tool: counts(stats.by_tool),
            by_actor: counts(stats.by_actor),
            by_kind: counts(stats.by_kind),
        }))
    }
}

/// Writes the export page by page and sends each page's bytes as a chunk; the last chunk
/// carries the summary.
async fn stream_export(
    origin: Origin,
    filter: Filter,
    bom: bool,
    chunks: &mpsc::Sender<Result<proto::CsvChunk, Status>>,
) -> Result<(), Status> {
    let buffer = SharedBuffer::default();
    let internal = |e: crate::audit::ExportError| {
        tracing::error!(error = %e, "export failed");
        Status::unavailable("audit trail unavailable: the export stopped")
    };
    let mut export = Export::new(buffer.clone(), filter, bom).map_err(internal)?;
    loop {
        let more = export.next_page(origin.clone()).await.map_err(internal)?;
        if !more {
            break; // The last page goes out with the summary.
        }
        export.flush().map_err(internal)?;
        let data = buffer.take();
        if chunks.send(Ok(proto::CsvChunk { data, summary: None })).await.is_err() {
            return Ok(()); // The client went away.
        }
    }
    let (rows, first_seq, last_seq) = (export.rows, export.first_seq, export.last_seq);
    let (_, csv_sha256, _) = export.finish().map_err(internal)?;
    let summary = proto::ExportSummary {
        rows,
        first_seq: first_seq.unwrap_or_default().unsigned_abs(),
        last_seq: last_seq.unwrap_or_default().unsigned_abs(),
        csv_sha256,
    };
    let _ = chunks.send(Ok(proto::CsvChunk { data: buffer.take(), summary: Some(summary) })).await;
    Ok(())
}
