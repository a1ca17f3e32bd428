//! `toolgate.v1.Audit`: read, export and verify the trail, over [`crate::store::Reader`] and
//! [`crate::audit`]. Malformed requests are refused by field and recorded like the Gate's.

use std::sync::Arc;

use tokio::sync::mpsc;
use tokio_stream::wrappers::ReceiverStream;
use tonic::{Request, Response, Status};

use super::convert::event_to_proto;
use crate::audit::{Export, SharedBuffer, verify_trail};
use crate::auth::{Auth, Role};
use crate::error::{Error, refuse};
use crate::proto::{self, audit_server::Audit};
use crate::request::{ArgsHasher, FieldError, Filter};
use crate::store::{Reader, Writer};

/// Largest page a Query may ask for.
const MAX_PAGE_SIZE: u32 = 1000;
/// Page size when the request names none.
const DEFAULT_PAGE_SIZE: u32 = 100;
/// Most problems a Verify answer lists.
const MAX_PROBLEMS: usize = 1000;

/// The tonic service.
#[derive(Debug, Clone)]
pub struct AuditService {
    reader: Reader,
    writer: Writer,
    auth: Arc<Auth>,
    hasher: ArgsHasher,
}

impl AuditService {
    /// Serves the trail read through `reader` to auditors; refusals are recorded through
    /// `writer`.
    pub fn new(reader: Reader, writer: Writer, auth: Arc<Auth>, hasher: ArgsHasher) -> Self {
        Self { reader, writer, auth, hasher }
    }

    async fn refuse(&self, rpc: &str, error: FieldError) -> Status {
        refuse(&self.writer, &format!("toolgate.v1.Audit/{rpc}"), error).await.into()
    }

    async fn filter(&self, rpc: &str, filter: Option<proto::Filter>) -> Result<Filter, Status> {
        match Filter::from_proto(filter.unwrap_or_default(), "filter.") {
            Ok(filter) => Ok(filter),
            Err(e) => Err(self.refuse(rpc, e).await),
        }
    }
}

fn unavailable(error: crate::store::StoreError) -> Status {
    Error::Unavailable(error).into()
}

#[tonic::async_trait]
impl Audit for AuditService {
    #[tracing::instrument(name = "HashArgs", skip_all)]
    async fn hash_args(
        &self,
        request: Request<proto::HashArgsRequest>,
    ) -> Result<Response<proto::HashArgsResponse>, Status> {
        self.auth.authorize(&request, "toolgate.v1.Audit/HashArgs", &[Role::Auditor]).await?;
        let req = request.into_inner();
        let args = match serde_json::from_str::<serde_json::Value>(&req.args_json) {
            Ok(serde_json::Value::Object(args)) => args,
            _ => {
                let e = FieldError::new("args_json", "must be a JSON object");
                return Err(self.refuse("HashArgs", e).await);
            }
        };
        match self.hasher.hash(&args) {
            Ok(hashed) => Ok(Response::new(proto::HashArgsResponse {
                args_hash: hashed.hash,
                canonical_json: hashed.json,
            })),
            Err(e) => {
                Err(self.refuse("HashArgs", FieldError::new("args_json", e.to_string())).await)
            }
        }
    }

    #[tracing::instrument(name = "Query", skip_all)]
    async fn query(
        &self,
        request: Request<proto::QueryRequest>,
    ) -> Result<Response<proto::QueryResponse>, Status> {
        self.auth.authorize(&request, "toolgate.v1.Audit/Query", &[Role::Auditor]).await?;
        let req = request.into_inner();
        let filter = self.filter("Query", req.filter).await?;
        let page_size = match req.page_size {
            0 => DEFAULT_PAGE_SIZE,
            n if n > MAX_PAGE_SIZE => {
                let e = FieldError::new(
                    "page_size",
                    format!("{n} is over the limit of {MAX_PAGE_SIZE}"),
                );
                return Err(self.refuse("Query", e).await);
            }
            n => n,
        };
        let after = match req.page_token.as_str() {
            "" => 0,
            token => match token.parse::<i64>() {
                Ok(seq) if seq >= 0 => seq,
                _ => {
                    let e = FieldError::new("page_token", "not a token this server gave");
                    return Err(self.refuse("Query", e).await);
                }
            },
        };
        let events = self.reader.query(&filter, after, page_size).await.map_err(unavailable)?;
        let next_page_token = match events.last() {
            Some(last) if events.len() == page_size as usize => last.seq.to_string(),
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
        self.auth.authorize(&request, "toolgate.v1.Audit/ExportCsv", &[Role::Auditor]).await?;
        let req = request.into_inner();
        let filter = self.filter("ExportCsv", req.filter).await?;
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
        self.auth.authorize(&request, "toolgate.v1.Audit/Verify", &[Role::Auditor]).await?;
        let req = request.into_inner();
        let bound = |field: &str, v: u64| {
            i64::try_from(v).map_err(|_| FieldError::new(field, "out of range"))
        };
        let range = bound("from_seq", req.from_seq)
            .and_then(|from| Ok((from, bound("to_seq", req.to_seq)?)));
        let (from, to) = match range {
            Ok(range) => range,
            Err(e) => return Err(self.refuse("Verify", e).await),
        };
        let to = (to > 0).then_some(to);
        let report = verify_trail(&self.reader, from, to, |_| {}).await.map_err(unavailable)?;
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
        self.auth.authorize(&request, "toolgate.v1.Audit/Head", &[Role::Auditor]).await?;
        let head = self.reader.head().await.map_err(unavailable)?;
        Ok(Response::new(head.map_or_else(proto::HeadResponse::default, |h| proto::HeadResponse {
            seq: h.seq.unsigned_abs(),
            hash: h.hash,
            ts: h.ts,
        })))
    }

    #[tracing::instrument(name = "Stats", skip_all)]
    async fn stats(
        &self,
        request: Request<proto::StatsRequest>,
    ) -> Result<Response<proto::StatsResponse>, Status> {
        self.auth.authorize(&request, "toolgate.v1.Audit/Stats", &[Role::Auditor]).await?;
        let req = request.into_inner();
        let range = match Filter::time_range(&req.since, &req.until, "") {
            Ok(range) => range,
            Err(e) => return Err(self.refuse("Stats", e).await),
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
    let (_, csv_sha256) = export.finish().map_err(internal)?;
    let summary = proto::ExportSummary {
        rows,
        first_seq: first_seq.unwrap_or_default().unsigned_abs(),
        last_seq: last_seq.unwrap_or_default().unsigned_abs(),
        csv_sha256,
    };
    let _ = chunks.send(Ok(proto::CsvChunk { data: buffer.take(), summary: Some(summary) })).await;
    Ok(())
}
