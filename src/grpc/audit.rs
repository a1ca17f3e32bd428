//! `toolgate.v1.Audit`: read, export and verify the trail, over [`crate::store::Reader`] and
//! [`crate::audit`]. Malformed requests are refused by field and recorded like the Gate's.

use std::sync::Arc;

use tokio::sync::mpsc;
use tokio_stream::wrappers::ReceiverStream;
use tonic::{Request, Response, Status};

use super::Guard;
use super::convert::event_to_proto;
use crate::audit::{Anchors, Export, SharedBuffer, verify_trail};
use crate::auth::Rpc;
use crate::config::Limits;
use crate::error::{Error, FieldError};
use crate::proto::{self, audit_server::Audit};
use crate::request::{ArgsHasher, Page, hash_args_request, proof};
use crate::store::{Filter, Reader};
use crate::trail::Kind;

/// Most problems a Verify answer lists.
const MAX_PROBLEMS: usize = 1000;

/// The tonic service.
#[derive(Debug, Clone)]
pub struct AuditService {
    reader: Reader,
    guard: Guard,
    hasher: ArgsHasher,
    limits: Arc<Limits>,
}

impl AuditService {
    /// Serves the trail read through `reader` to auditors; HashArgs hashes as Decide does,
    /// within the same limits.
    pub fn new(reader: Reader, guard: Guard, hasher: ArgsHasher, limits: Limits) -> Self {
        Self { reader, guard, hasher, limits: Arc::new(limits) }
    }

    async fn filter(&self, rpc: Rpc, filter: Option<proto::Filter>) -> Result<Filter, Status> {
        match Filter::from_proto(filter.unwrap_or_default(), "filter.") {
            Ok(filter) => Ok(filter),
            Err(e) => Err(self.guard.invalid(rpc, e).await),
        }
    }
}

fn unavailable(error: crate::store::StoreError) -> Status {
    Error::from(error).into()
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
        let filter = self.filter(Rpc::Query, req.filter).await?;
        let page = match Page::from_proto(req.page_size, &req.page_token) {
            Ok(page) => page,
            Err(e) => return Err(self.guard.invalid(Rpc::Query, e).await),
        };
        let events =
            self.reader.query(&filter, page.after, page.size).await.map_err(unavailable)?;
        let next_page_token = match events.last() {
            Some(last) if events.len() == page.size as usize => last.seq.to_string(),
            _ => String::new(),
        };
        let events = events.into_iter().map(event_to_proto).collect();
        Ok(Response::new(proto::QueryResponse { events, next_page_token }))
    }

    type ExportCsvStream = ReceiverStream<Result<proto::CsvChunk, Status>>;

    #[tracing::instrument(name = "ExportCsv", skip_all)]
    async fn export_csv(
        &self,
        request: Request<proto::ExportRequest>,
    ) -> Result<Response<Self::ExportCsvStream>, Status> {
        self.guard.check(&request, Rpc::ExportCsv).await?;
        let req = request.into_inner();
        let filter = self.filter(Rpc::ExportCsv, req.filter).await?;
        let (chunks, stream) = mpsc::channel(4);
        let reader = self.reader.clone();
        tokio::spawn(async move {
            if let Err(status) = stream_export(&reader, filter, req.bom, &chunks).await {
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
        let report = verify_trail(&self.reader, from, to, &Anchors::default(), |_| {})
            .await
            .map_err(unavailable)?;
        let (last_seq, last_hash) = report.last.clone().unwrap_or_default();
        Ok(Response::new(proto::VerifyResponse {
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
        }))
    }

    #[tracing::instrument(name = "Head", skip_all)]
    async fn head(
        &self,
        request: Request<proto::HeadRequest>,
    ) -> Result<Response<proto::HeadResponse>, Status> {
        self.guard.check(&request, Rpc::Head).await?;
        let head = self.reader.head().await.map_err(unavailable)?;
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
        let size = request.into_inner().size;
        let event = match size {
            0 => self.reader.last_checkpoint().await,
            size => match i64::try_from(size + 1) {
                Ok(seq) => self.reader.event(seq).await,
                Err(_) => Ok(None),
            },
        }
        .map_err(unavailable)?;
        match event.filter(|e| e.record.kind == Kind::Checkpoint) {
            Some(event) => {
                let cosigned = self.reader.cosigned_note(&event).await.map_err(unavailable)?;
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
        let current = self.reader.tree_size().await.map_err(unavailable)?;
        let (seq, size) = match proof::inclusion(req.seq, req.tree_size, current) {
            Ok(range) => range,
            Err(e) => return Err(self.guard.invalid(Rpc::InclusionProof, e).await),
        };
        let leaf_hash = self.reader.leaf(seq).await.map_err(unavailable)?;
        let proof = self.reader.inclusion_proof(seq, size).await.map_err(unavailable)?;
        let root = self.reader.root(size).await.map_err(unavailable)?;
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
        let current = self.reader.tree_size().await.map_err(unavailable)?;
        let (old, new) = match proof::consistency(req.old_size, req.new_size, current) {
            Ok(range) => range,
            Err(e) => return Err(self.guard.invalid(Rpc::ConsistencyProof, e).await),
        };
        let proof = self.reader.consistency_proof(old, new).await.map_err(unavailable)?;
        Ok(Response::new(proto::ConsistencyProofResponse {
            old_size: old,
            new_size: new,
            hashes: proof.iter().map(|h| h.to_vec()).collect(),
            old_root: self.reader.root(old).await.map_err(unavailable)?.to_vec(),
            new_root: self.reader.root(new).await.map_err(unavailable)?.to_vec(),
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
        let stats = self.reader.stats(&range).await.map_err(unavailable)?;
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
    reader: &Reader,
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
        let more = export.next_page(reader).await.map_err(internal)?;
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
