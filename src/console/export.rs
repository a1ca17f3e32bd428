//! Export and verify: the trail's filter as a CSV file (`Audit/ExportCsv`, streamed through as
//! it comes) with its manifest, made from that very download (the rows, the file's SHA-256
//! checked against the server's, the head when it started), and the chain verified over a
//! `seq` range (`Audit/Verify`).

use std::sync::Arc;

use axum::body::{Body, Bytes};
use axum::extract::Query;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use chrono::{SecondsFormat, Utc};
use maud::{Markup, html};
use serde::Deserialize;
use sha2::{Digest, Sha256};

use super::page::{Nav, Text, href};
use super::session::random_id;
use super::trail::Filters;
use super::{Console, Seen};
use crate::proto;
use crate::request::WireFilter;
use crate::trail::Filter;
use crate::trail::MANIFEST_FORMAT;
use crate::trail::Manifest;

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct Download {
    #[serde(flatten)]
    filters: Filters,
    /// Names the download, so that its manifest can be asked for after it.
    download: String,
    bom: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct ManifestOf {
    download: String,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct Range {
    from: String,
    to: String,
    node: String,
}

/// `GET /ui/export`.
pub async fn page(Seen { console, visitor }: Seen, Query(filters): Query<Filters>) -> Response {
    let body = html! {
        h1 { "Export & verify" }
        (export_form(&console, &filters))
        (verify_form(&console, &Range { from: String::new(), to: String::new(), node: filters.node.clone() }))
    };
    console.page("Export & verify", Nav::Export, &visitor, body)
}

fn export_form(console: &Console, filters: &Filters) -> Markup {
    let download = random_id().unwrap_or_default();
    let mut params = filters.params();
    params.push(("download", &download));
    html! {
        section.card {
            h2 { "Export to CSV" }
            p.muted {
                "The events the filter selects, oldest first, in the columns of docs/csv-export.md. \
                 The manifest describes the download just made (its rows, its SHA-256, the head of the \
                 trail when it began): keep both, and check them with "
                code { "toolgate verify --csv FILE --manifest FILE --db TRAIL" } "."
            }
            form.filters method="get" action="/ui/export" {
                (filters.fields(console.fleet()))
                button.secondary type="submit" { "Change the filter" }
            }
            @if !download.is_empty() {
                p {
                    a.button href=(href("/ui/export/csv", &params)) download="toolgate-export.csv" { "Download the CSV" }
                    " "
                    a.button.secondary href=(href("/ui/export/manifest", &[("download", &download)])) download="toolgate-export.manifest.json" {
                        "…then its manifest"
                    }
                }
            }
        }
    }
}

fn verify_form(console: &Console, range: &Range) -> Markup {
    html! {
        section.card {
            h2 { "Verify the chain" }
            p.muted { "Recomputes every event's hash and link, and the Merkle tree against each checkpoint on the way." }
            form.filters method="get" action="/ui/verify" {
                label { "From seq" input type="text" name="from" value=(range.from) placeholder="1"; }
                label { "To seq" input type="text" name="to" value=(range.to) placeholder="the head"; }
                @if console.fleet() { label { "Node" input type="text" name="node" value=(range.node); } }
                button type="submit" { "Verify" }
            }
        }
    }
}

/// `GET /ui/export/csv`: the file, streamed; its manifest is kept in the session at the end.
pub async fn csv(Seen { console, visitor }: Seen, Query(download): Query<Download>) -> Response {
    let wire = download.filters.to_proto();
    let node = wire.node_id.clone();
    let bom = download.bom.as_deref().is_some_and(|b| !b.is_empty() && b != "0");
    let mut audit = console.audit.clone();
    // The filter as the server will apply it (times normalized once, here), for the manifest.
    let local =
        Filter::from_proto(proto::Filter { node_id: String::new(), ..wire.clone() }, "filter.");
    let filter = match local {
        Ok(filter) => filter,
        Err(_) => {
            // The server refuses it too, by field, and records the refusal.
            let ask = proto::ExportRequest { filter: Some(wire), bom };
            return match audit.export_csv(visitor.request(ask)).await {
                Err(status) => console.refused(&visitor, &status),
                Ok(_) => console.not_taken(
                    Some(&visitor),
                    StatusCode::BAD_REQUEST,
                    "the filter does not validate",
                ),
            };
        }
    };
    let exported_at = Utc::now().to_rfc3339_opts(SecondsFormat::Micros, true);
    let head = match audit.head(visitor.request(proto::HeadRequest { node_id: node.clone() })).await
    {
        Ok(head) => head.into_inner(),
        Err(status) => return console.refused(&visitor, &status),
    };
    let sent = proto::Filter { node_id: node, ..filter.to_proto() };
    let ask = proto::ExportRequest { filter: Some(sent), bom };
    let stream = match audit.export_csv(visitor.request(ask)).await {
        Ok(stream) => stream.into_inner(),
        Err(status) => return console.refused(&visitor, &status),
    };
    let manifest = Manifest {
        format: MANIFEST_FORMAT.to_owned(),
        filter,
        first_seq: None,
        last_seq: None,
        rows: 0,
        head_seq: (head.seq > 0).then_some(head.seq as i64),
        head_hash: (head.seq > 0).then_some(head.hash),
        csv_sha256: String::new(),
        bom,
        exported_at,
        checkpoint: None,
        proofs_file: None,
        proofs_sha256: None,
        signature: None,
    };
    let keep = Keep {
        console: console.clone(),
        session: visitor.id.clone(),
        download: download.download,
        manifest,
    };
    let body = streamed(stream, keep);
    (
        [
            (header::CONTENT_TYPE, "text/csv; charset=utf-8"),
            (header::CONTENT_DISPOSITION, "attachment; filename=\"toolgate-export.csv\""),
        ],
        Body::from_stream(body),
    )
        .into_response()
}

/// The export's chunks as they stream in, hashed as they pass, the manifest kept for the
/// download once the summary comes; a stream that stops fails the body.
fn streamed(
    stream: tonic::Streaming<proto::CsvChunk>,
    keep: Keep,
) -> impl futures_util::Stream<Item = Result<Bytes, std::io::Error>> {
    futures_util::stream::unfold(
        (stream, Sha256::new(), Some(keep)),
        |(mut stream, mut hasher, keep)| async move {
            match stream.message().await {
                Ok(Some(chunk)) => {
                    hasher.update(&chunk.data);
                    let keep = match (chunk.summary, keep) {
                        (Some(summary), Some(keep)) => {
                            keep.finish(&summary, hex::encode(hasher.clone().finalize()));
                            None
                        }
                        (_, keep) => keep,
                    };
                    Some((Ok(Bytes::from(chunk.data)), (stream, hasher, keep)))
                }
                Ok(None) => None,
                Err(status) => {
                    tracing::warn!(error = %status, "a console export stopped");
                    Some((Err(std::io::Error::other("the export stopped")), (stream, hasher, None)))
                }
            }
        },
    )
}

/// A download's manifest, kept once its last chunk is out.
struct Keep {
    console: Arc<Console>,
    session: String,
    download: String,
    manifest: Manifest,
}

impl Keep {
    fn finish(self, summary: &proto::ExportSummary, sha256: String) {
        if sha256 != summary.csv_sha256 || self.download.is_empty() {
            if !self.download.is_empty() {
                tracing::error!("a console export's hash differs from the server's: no manifest");
            }
            return;
        }
        let seq = |n: u64| (summary.rows > 0).then_some(n as i64);
        let manifest = Manifest {
            rows: summary.rows,
            first_seq: seq(summary.first_seq),
            last_seq: seq(summary.last_seq),
            csv_sha256: sha256,
            ..self.manifest
        };
        self.console.sessions.keep_export(&self.session, self.download, manifest);
    }
}

/// `GET /ui/export/manifest`: the manifest of this session's download.
pub async fn manifest(Seen { console, visitor }: Seen, Query(of): Query<ManifestOf>) -> Response {
    let Some(manifest) = console.sessions.export(&visitor.id, &of.download) else {
        let why = "no finished download of this session has that name: download the CSV first \
                   (the manifest describes that download)";
        return console.not_taken(Some(&visitor), StatusCode::NOT_FOUND, why);
    };
    let json = serde_json::to_string_pretty(&manifest).unwrap_or_default() + "\n";
    (
        [
            (header::CONTENT_TYPE, "application/json"),
            (header::CONTENT_DISPOSITION, "attachment; filename=\"toolgate-export.manifest.json\""),
        ],
        json,
    )
        .into_response()
}

/// `GET /ui/verify`.
pub async fn verify(Seen { console, visitor }: Seen, Query(range): Query<Range>) -> Response {
    let number = |field: &str, text: &str| match text.trim() {
        "" => Ok(0),
        text => text.parse::<u64>().map_err(|_| format!("{field}: a seq (a whole number)")),
    };
    let bounds = number("from", &range.from).and_then(|f| Ok((f, number("to", &range.to)?)));
    let (from_seq, to_seq) = match bounds {
        Ok(bounds) => bounds,
        Err(why) => return console.not_taken(Some(&visitor), StatusCode::BAD_REQUEST, &why),
    };
    let ask = proto::VerifyRequest { from_seq, to_seq, node_id: range.node.clone() };
    let report = match console.audit.clone().verify(visitor.request(ask)).await {
        Ok(report) => report.into_inner(),
        Err(status) => return console.refused(&visitor, &status),
    };
    let body = html! {
        h1 { "Export & verify" }
        section.card {
            h2 { "Verification" }
            @if report.intact {
                p { span.ok-mark { "✓ Intact" } " — " (report.checked) " events checked, through seq " (report.last_seq) "." }
            } @else {
                p.bad-mark { "✗ Broken: " (report.problems.len()) " problem(s) in " (report.checked) " events checked" }
                table {
                    tr { th { "Seq" } th { "Kind" } th { "Finding" } }
                    @for problem in &report.problems {
                        tr { td { (problem.seq) } td { (Text(&problem.kind)) } td { (Text(&problem.message)) } }
                    }
                }
            }
            @if !report.last_hash.is_empty() {
                p.muted { "The last event checked has the hash " code { (Text(&report.last_hash)) } ": keep it elsewhere to tell later whether the trail was rewritten." }
            }
        }
        (verify_form(&console, &range))
    };
    console.page("Export & verify", Nav::Export, &visitor, body)
}
