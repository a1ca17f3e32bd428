//! `toolgate.v1.Audit`: read, export and verify the trail, over [`crate::audit::Trails`] (the
//! one read interface) and [`crate::audit`]; or, on a fleet server (`serve --audit-only`), every node's trail in the
//! fleet store, a node at a time where a chain is concerned. Malformed requests are refused by
//! field and recorded like the Gate's.

use std::sync::Arc;

use tokio::sync::{mpsc, watch};
use tokio_stream::wrappers::ReceiverStream;
use tonic::{Request, Response, Status};

use super::Guard;
use crate::audit::{Ask, At, Export, Located, Origin, SharedBuffer, Trails, prove};
use crate::auth::Rpc;
use crate::config::Limits;
use crate::error::FieldError;
use crate::follow::{Trail, subscribe};
use crate::proto::{self, audit_server::Audit};
use crate::request::WireFilter;
use crate::request::{ArgsHasher, Page, hash_args_request, proof};
use crate::trail::Filter;
use crate::trail::Report;
use crate::wire::event_to_proto;

/// Most problems a Verify answer lists.
const MAX_PROBLEMS: usize = 1000;

/// The tonic service.
#[derive(Debug, Clone)]
pub struct AuditService {
    trails: Arc<dyn Trails>,
    guard: Guard,
    hasher: ArgsHasher,
    limits: Arc<Limits>,
    /// What `Subscribe` waits on; a service without it (the fleet's) has no live stream.
    follow: Option<(Trail, watch::Receiver<bool>)>,
}

/// What a sidecar says of a node id.
const NOT_A_FLEET: &str =
    "this sidecar serves its own trail only: node ids are for a fleet server (serve --audit-only)";

impl AuditService {
    /// Serves `trails` to auditors; HashArgs hashes as Decide does, within the same limits.
    pub fn new(trails: Arc<dyn Trails>, guard: Guard, hasher: ArgsHasher, limits: Limits) -> Self {
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
        let problem = match self.trails.is_fleet() {
            _ if node.is_empty() => return Ok(None),
            false => NOT_A_FLEET,
            true if crate::fleet::valid_node(&node) => return Ok(Some(node)),
            true => crate::fleet::NODE_ID,
        };
        Err(self.guard.invalid(rpc, FieldError::new(field, problem)).await)
    }

    /// The one trail a request is about: the sidecar's own (node `""`), or on a fleet server
    /// that of the node it names (`field`), which it must.
    async fn origin(&self, rpc: Rpc, field: &str, node: String) -> Result<Origin, Status> {
        let trails = self.trails.clone();
        match (self.trails.is_fleet(), self.node(rpc, field, node).await?) {
            (false, _) => Ok(Origin { trails, node: String::new() }),
            (true, Some(node)) => Ok(Origin { trails, node }),
            (true, None) => {
                let e = FieldError::new(field, "required on a fleet server");
                Err(self.guard.invalid(rpc, e).await)
            }
        }
    }
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
        let fleet = self.trails.is_fleet();
        let page = match Page::from_proto(req.page_size, &req.page_token, fleet) {
            Ok(page) => page,
            Err(e) => return Err(self.guard.invalid(Rpc::Query, e).await),
        };
        let at = At { node: &page.after_node, seq: page.after };
        let ask = Ask {
            node: node.as_deref(),
            filter: &filter,
            at,
            size: page.size,
            newest_first: req.newest_first,
        };
        let events = self.trails.query(ask).await?;
        let next_page_token = match events.last() {
            Some(Located { node, event: last }) if events.len() == page.size as usize => {
                Page::token(node.as_deref(), last.seq)
            }
            _ => String::new(),
        };
        let events = events
            .into_iter()
            .map(|Located { node, event }| proto::Event {
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
        let (false, Some(follow)) = (self.trails.is_fleet(), &self.follow) else {
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
        let origin = self.origin(Rpc::Verify, "node_id", req.node_id).await?;
        if origin.trails.is_fleet() && (from > 1 || to.is_some()) {
            let e = FieldError::new("from_seq", "a fleet server verifies a node whole");
            return Err(self.guard.invalid(Rpc::Verify, e).await);
        }
        let report = origin.trails.verify(&origin.node, from, to).await;
        let report = report?;
        Ok(Response::new(verify_response(&report)))
    }

    #[tracing::instrument(name = "Head", skip_all)]
    async fn head(
        &self,
        request: Request<proto::HeadRequest>,
    ) -> Result<Response<proto::HeadResponse>, Status> {
        self.guard.check(&request, Rpc::Head).await?;
        let node = request.into_inner().node_id;
        let Origin { trails, node } = self.origin(Rpc::Head, "node_id", node).await?;
        let head = trails.head(&node).await?;
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
        let Origin { trails, node } = self.origin(Rpc::Checkpoint, "node_id", req.node_id).await?;
        match trails.checkpoint(&node, size).await? {
            Some(event) => {
                let cosigned = trails.cosigned_note(&node, &event).await;
                let cosigned = cosigned?;
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
        let tree = self.trails.tree()?;
        let current = tree.size().await?;
        let (seq, size) = match proof::inclusion(req.seq, req.tree_size, current) {
            Ok(range) => range,
            Err(e) => return Err(self.guard.invalid(Rpc::InclusionProof, e).await),
        };
        let leaf_hash = tree.leaf(seq).await?;
        let proof = tree.inclusion_proof(seq, size).await?;
        let root = tree.root(size).await?;
        Ok(Response::new(proto::InclusionProofResponse {
            tree_size: size,
            leaf_index: seq - 1,
            leaf_hash: leaf_hash.to_vec(),
            hashes: proof.iter().map(|h| h.to_vec()).collect(),
            root: root.to_vec(),
        }))
    }

    #[tracing::instrument(name = "TlogProof", skip_all)]
    async fn tlog_proof(
        &self,
        request: Request<proto::TlogProofRequest>,
    ) -> Result<Response<proto::TlogProofResponse>, Status> {
        self.guard.check(&request, Rpc::TlogProof).await?;
        let req = request.into_inner();
        if req.seq == 0 {
            let e = FieldError::new("seq", "required: the event to prove, from 1");
            return Err(self.guard.invalid(Rpc::TlogProof, e).await);
        }
        let (proof, tree_size) = prove(self.trails.as_ref(), "", req.seq, req.tree_size).await?;
        Ok(Response::new(proto::TlogProofResponse { proof: proof.encode(), tree_size }))
    }

    #[tracing::instrument(name = "ConsistencyProof", skip_all)]
    async fn consistency_proof(
        &self,
        request: Request<proto::ConsistencyProofRequest>,
    ) -> Result<Response<proto::ConsistencyProofResponse>, Status> {
        self.guard.check(&request, Rpc::ConsistencyProof).await?;
        let req = request.into_inner();
        let tree = self.trails.tree()?;
        let current = tree.size().await?;
        let (old, new) = match proof::consistency(req.old_size, req.new_size, current) {
            Ok(range) => range,
            Err(e) => return Err(self.guard.invalid(Rpc::ConsistencyProof, e).await),
        };
        let proof = tree.consistency_proof(old, new).await?;
        Ok(Response::new(proto::ConsistencyProofResponse {
            old_size: old,
            new_size: new,
            hashes: proof.iter().map(|h| h.to_vec()).collect(),
            old_root: tree.root(old).await?.to_vec(),
            new_root: tree.root(new).await?.to_vec(),
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
        let stats = self.trails.stats(node.as_deref(), &range).await;
        let stats = stats?;
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
    let csv_sha256 = export.finish().map_err(internal)?.sha256;
    let summary = proto::ExportSummary {
        rows,
        first_seq: first_seq.unwrap_or_default().unsigned_abs(),
        last_seq: last_seq.unwrap_or_default().unsigned_abs(),
        csv_sha256,
    };
    let _ = chunks.send(Ok(proto::CsvChunk { data: buffer.take(), summary: Some(summary) })).await;
    Ok(())
}
