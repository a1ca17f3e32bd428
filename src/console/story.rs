//! One call's story: every event of a decision (the request and its outcome, each approval
//! step, the execution, any violation), each with its seq, hash and, on a sidecar, its
//! inclusion proof in the tree of the latest signed checkpoint, checked here against that
//! checkpoint's root. And one event alone, for the events of no call.

use axum::extract::Query;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use maud::{Markup, html};
use serde::Deserialize;
use tonic::{Code, Status};

use super::page::{self, Lines, Nav, Text, href, text, time};
use super::trail::{kind, result};
use super::{Console, Seen, Visitor, checkpoint};
use crate::proto;
use crate::trail::{Value, decode, event_hash, leaf_hash, verify_inclusion};
use crate::wire::event_from_proto;

/// The most events one story shows.
const MOST: u32 = 1000;
/// The most of them whose inclusion proofs are fetched and checked.
const PROVEN: usize = 50;

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct Call {
    decision: String,
    node: String,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct One {
    seq: String,
    node: String,
}

/// `GET /ui/story?decision=…`.
pub async fn page(Seen { console, visitor }: Seen, Query(call): Query<Call>) -> Response {
    if call.decision.is_empty() {
        return console.not_taken(Some(&visitor), StatusCode::BAD_REQUEST, "decision: required");
    }
    let filter = proto::Filter {
        decision_id: call.decision.clone(),
        node_id: call.node,
        ..Default::default()
    };
    let ask = proto::QueryRequest { filter: Some(filter), page_size: MOST, ..Default::default() };
    let events = match console.audit.clone().query(visitor.request(ask)).await {
        Ok(page) => page.into_inner().events,
        Err(status) => return console.refused(&visitor, &status),
    };
    if events.is_empty() {
        let why = format!("no event of the decision {:?} is on the trail", call.decision);
        let body = html! { h1 { "Not found" } (page::notice("error", &why)) };
        let frame = console.frame("Not found", Nav::None, Some(&visitor));
        return page::with_status(StatusCode::NOT_FOUND, page::frame(&frame, body));
    }
    let proofs = match Proofs::fetch(&console, &visitor, &events).await {
        Ok(proofs) => proofs,
        Err(status) => return console.refused(&visitor, &status),
    };
    let decision = events.iter().find(|e| e.kind == "decision");
    let body = html! {
        h1 { "A call's story" }
        p.muted { "Decision " code { (Text(&call.decision)) } }
        @if let Some(decision) = decision { (summary(decision, &events)) }
        @else { (page::notice("info", "The decision itself is not among these events (a refused request that named it, say).")) }
        section.card {
            h2 { "Every event, in order" }
            ol.timeline { @for event in &events { (entry(event, &proofs)) } }
        }
        (proofs.about())
    };
    console.page("A call's story", Nav::Trail, &visitor, body)
}

/// Which event's offline proof, in the tree of which checkpoint.
#[derive(Debug, Deserialize)]
pub struct ProofOf {
    seq: String,
    #[serde(default)]
    size: String,
}

/// `GET /ui/proof`: one event's offline proof (C2SP tlog-proof), as a download.
pub async fn proof(Seen { console, visitor }: Seen, Query(of): Query<ProofOf>) -> Response {
    let size = match of.size.as_str() {
        "" => Ok(0),
        size => size.parse::<u64>(),
    };
    let (Ok(seq), Ok(tree_size)) = (of.seq.parse::<u64>(), size) else {
        let why = "seq and size: whole numbers";
        return console.not_taken(Some(&visitor), StatusCode::BAD_REQUEST, why);
    };
    let ask = proto::TlogProofRequest { seq, tree_size };
    match console.audit.clone().tlog_proof(visitor.request(ask)).await {
        Ok(answer) => {
            let name = format!("attachment; filename=\"toolgate-seq-{seq}.tlog-proof\"");
            let headers = [
                (header::CONTENT_TYPE, "text/plain; charset=utf-8".to_owned()),
                (header::CONTENT_DISPOSITION, name),
            ];
            (headers, answer.into_inner().proof).into_response()
        }
        Err(status) => console.refused(&visitor, &status),
    }
}

/// `GET /ui/event?seq=…`.
pub async fn event(Seen { console, visitor }: Seen, Query(one): Query<One>) -> Response {
    let Ok(seq) = one.seq.parse::<u64>() else {
        return console.not_taken(Some(&visitor), StatusCode::BAD_REQUEST, "seq: a number");
    };
    let before = seq.saturating_sub(1).to_string();
    let token = if one.node.is_empty() { before } else { format!("{}:{before}", one.node) };
    let filter = proto::Filter { node_id: one.node.clone(), ..Default::default() };
    let ask = proto::QueryRequest {
        filter: Some(filter),
        page_size: 1,
        page_token: token,
        newest_first: false,
    };
    let found = match console.audit.clone().query(visitor.request(ask)).await {
        Ok(page) => page.into_inner().events.into_iter().find(|e| e.seq == seq),
        Err(status) => return console.refused(&visitor, &status),
    };
    let Some(event) = found else {
        let why = format!("seq {seq} is not on the trail");
        return console.not_taken(Some(&visitor), StatusCode::NOT_FOUND, &why);
    };
    let events = [event];
    let proofs = match Proofs::fetch(&console, &visitor, &events).await {
        Ok(proofs) => proofs,
        Err(status) => return console.refused(&visitor, &status),
    };
    let body = html! {
        h1 { "Event " (seq) }
        section.card { ol.timeline { (entry(&events[0], &proofs)) } }
        (proofs.about())
    };
    console.page("Event", Nav::Trail, &visitor, body)
}

/// The call in short: what was asked, what was decided, who judged it, what ran.
fn summary(decision: &proto::Event, events: &[proto::Event]) -> Markup {
    let approvals: Vec<&proto::Event> =
        events.iter().filter(|e| e.kind.starts_with("approval_")).collect();
    let executions: Vec<&proto::Event> = events.iter().filter(|e| e.kind == "execution").collect();
    let violations: Vec<&proto::Event> = events.iter().filter(|e| e.kind == "violation").collect();
    html! {
        div.grid {
            section.card {
                h2 { "The request" }
                dl.fields {
                    dt { "Tool" } dd { (Text(text(&decision.tool))) }
                    dt { "Action" } dd { (Text(text(&decision.action))) }
                    dt { "Actor" } dd { (Text(text(&decision.actor_id))) " " span.muted { (Text(text(&decision.actor_kind))) } }
                    dt { "Session" } dd {
                        a href=(href("/ui/trail", &[("session", text(&decision.session_id)), ("node", &decision.node_id)])) {
                            (Text(text(&decision.session_id)))
                        }
                    }
                    dt { "Resource" } dd { (Text(text(&decision.resource_type))) " " (Text(text(&decision.resource_id))) }
                    dt { "Arguments (hash)" } dd.mono { (Text(text(&decision.args_hash))) }
                    dt { "Asked at" } dd { (time(&decision.ts)) }
                }
            }
            section.card {
                h2 { "The decision" }
                dl.fields {
                    dt { "Outcome" } dd { (result(decision)) }
                    dt { "Reason" } dd { (Text(text(&decision.reason))) }
                    dt { "Policies" } dd { (policies(text(&decision.policy_ids))) }
                    dt { "Policy version" } dd.mono { (Text(text(&decision.policy_version))) }
                    dt { "Limits" } dd {
                        @if let Some(chars) = decision.max_output_chars { (chars) " characters of output" }
                        @if let Some(ms) = decision.timeout_ms { ", " (ms) " ms to run" }
                    }
                    @if let Some(rewritten) = &decision.rewritten_args_hash {
                        dt { "Rewritten to (hash)" } dd.mono { (Text(rewritten)) }
                    }
                    @if let Some(shadow) = &decision.shadow_outcome {
                        dt { "Shadow policy" } dd { (Text(shadow)) ": " (Text(text(&decision.shadow_reason))) }
                    }
                }
            }
            section.card {
                h2 { "Approval" }
                @if approvals.is_empty() { p.muted { "None was asked for." } }
                ol.timeline {
                    @for step in approvals {
                        li {
                            strong { (Text(step.kind.trim_start_matches("approval_"))) }
                            " at " (time(&step.ts))
                            @if let Some(who) = &step.actor_id { " by " (Text(who)) }
                            @if let Some(outcome) = &step.outcome { " — lets through: " (Text(outcome)) }
                            @if let Some(comment) = &step.reason { div.muted { (Text(comment)) } }
                        }
                    }
                }
            }
            section.card {
                h2 { "Execution" }
                @if executions.is_empty() { p.muted { "None reported." } }
                @for run in executions {
                    dl.fields {
                        dt { "Status" } dd { (Text(text(&run.status))) }
                        dt { "Duration" } dd { (run.duration_us.map_or("—".to_owned(), |us| format!("{:.3} ms", us as f64 / 1000.0))) }
                        dt { "Output" } dd {
                            (run.result_bytes.map_or("—".to_owned(), |b| format!("{b} bytes")))
                            @if run.truncated.unwrap_or(0) != 0 { ", cut to the decision's limit" }
                        }
                        @if let Some(error) = &run.error { dt { "Error" } dd { (Text(error)) } }
                        dt { "Reported at" } dd { (time(&run.ts)) }
                    }
                }
                @if !violations.is_empty() {
                    h3.bad-mark { (violations.len()) " violation(s)" }
                    ul { @for v in violations { li { (Text(text(&v.reason))) } } }
                }
            }
        }
    }
}

/// A JSON array of policy ids, one per line (or the text as it is, if it is not one).
fn policies(json: &str) -> Markup {
    match serde_json::from_str::<Vec<String>>(json) {
        Ok(ids) => html! { @for id in ids { div.mono { (Text(&id)) } } },
        Err(_) => html! { (Text(json)) },
    }
}

/// One event: its kind and time, every column it holds, its hash and its proof.
fn entry(event: &proto::Event, proofs: &Proofs) -> Markup {
    let class = if event.kind == "violation" { "violation" } else { "" };
    let cells = event_from_proto(event.clone());
    html! {
        li class=(class) {
            div {
                strong { "seq " (event.seq) } " · " (kind(event))
                " · " (time(&event.ts))
                @if !event.node_id.is_empty() { " · node " (Text(&event.node_id)) }
            }
            details {
                summary { "Every column, the hash and the proof" }
                @match &cells {
                    Ok(cells) => dl.fields {
                        @for (name, value) in cells.named_cells() {
                            dt { (name) }
                            @match value {
                                Value::Integer(n) => dd { (n) },
                                Value::Text(bytes) => dd { (cell(name, &String::from_utf8_lossy(bytes))) },
                            }
                        }
                    },
                    Err(e) => (page::notice("error", &e.to_string())),
                }
                (proofs.of(event))
            }
        }
    }
}

/// A text cell: JSON laid out on lines, everything else as one line.
fn cell(name: &str, value: &str) -> Markup {
    let json = matches!(name, "request" | "policy_ids")
        .then(|| serde_json::from_str::<serde_json::Value>(value).ok())
        .flatten()
        .and_then(|v| serde_json::to_string_pretty(&v).ok());
    match json {
        Some(json) => html! { pre { (Lines(&json)) } },
        None if matches!(name, "note") => html! { pre { (Lines(value)) } },
        None => html! { span.mono { (Text(value)) } },
    }
}

/// What the check of an event's proof found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Found {
    /// Its hash is its content's, and its proof leads to the root.
    Included,
    /// Its hash is not the hash of its content and the hash before it.
    Altered,
    /// Its proof does not lead to the root.
    NotIncluded,
}

/// The inclusion proofs of a story's events in the latest signed checkpoint's tree (or, for
/// the events after it, in the tree of the whole trail), each checked here.
struct Proofs {
    signed: Option<checkpoint::Signed>,
    /// By seq: the tree size, and what the check found.
    proven: Vec<(u64, u64, Found)>,
    /// Why there are none.
    none: Option<&'static str>,
}

impl Proofs {
    async fn fetch(
        console: &Console,
        visitor: &Visitor,
        events: &[proto::Event],
    ) -> Result<Self, Status> {
        if console.fleet() {
            let none = "Inclusion proofs come from each node's own sidecar: the fleet store keeps \
                        only the right edge of each node's tree.";
            return Ok(Self { signed: None, proven: Vec::new(), none: Some(none) });
        }
        let ask = visitor.request(proto::CheckpointRequest::default());
        let signed = match console.audit.clone().checkpoint(ask).await {
            Ok(answer) => {
                checkpoint::read(&answer.into_inner(), console.log_key.as_ref(), &console.witnesses)
            }
            Err(status) if status.code() == Code::NotFound => None,
            Err(status) => return Err(status),
        };
        let mut proven = Vec::new();
        for event in events.iter().take(PROVEN) {
            // The proof of an event is only as good as its hash: recomputed here from its
            // content and the hash before it, so that a changed event whose stored hash was
            // kept is not shown as included.
            let hash = decode(&event.hash);
            let content_matches = match (event_from_proto(event.clone()), decode(&event.prev_hash))
            {
                (Ok(stored), Some(prev)) => hash == Some(event_hash(&prev, &stored)),
                _ => false,
            };
            let covered = signed.as_ref().filter(|s| event.seq <= s.size);
            let tree_size = covered.map_or(0, |s| s.size);
            let ask = proto::InclusionProofRequest { seq: event.seq, tree_size };
            let proof = console.audit.clone().inclusion_proof(visitor.request(ask)).await?;
            let proof = proof.into_inner();
            let hashes: Vec<[u8; 32]> =
                proof.hashes.iter().filter_map(|h| h.as_slice().try_into().ok()).collect();
            let leaf = leaf_hash(&hash.unwrap_or_default());
            let root: Option<[u8; 32]> = match covered {
                Some(signed) => Some(signed.root),
                None => proof.root.as_slice().try_into().ok(),
            };
            let included = hashes.len() == proof.hashes.len()
                && proof.leaf_hash == leaf
                && root.is_some_and(|root| {
                    verify_inclusion(&leaf, proof.leaf_index, proof.tree_size, &hashes, &root)
                });
            let found = match (content_matches, included) {
                (false, _) => Found::Altered,
                (true, false) => Found::NotIncluded,
                (true, true) => Found::Included,
            };
            proven.push((event.seq, proof.tree_size, found));
        }
        Ok(Self { signed, proven, none: None })
    }

    fn of(&self, event: &proto::Event) -> Markup {
        let Some(&(_, size, found)) = self.proven.iter().find(|(seq, ..)| *seq == event.seq) else {
            return match self.none {
                Some(_) => html! {},
                None => {
                    html! { p.muted { "Proofs are shown for the first " (PROVEN) " events of a call." } }
                }
            };
        };
        let checkpoint = self.signed.as_ref().filter(|s| s.size == size);
        html! {
            p {
                @match (found, checkpoint) {
                    (Found::Altered, _) => {
                        span.bad-mark { "✗ " }
                        "Its hash is not the hash of its content and the hash before it: the event was altered."
                    }
                    (Found::NotIncluded, _) => {
                        span.bad-mark { "✗ " }
                        "Its inclusion proof does not lead to the root of the tree of " (size) " events: the trail or this event was altered."
                    }
                    (Found::Included, Some(signed)) if signed.verified => {
                        span.ok-mark { "✓ " }
                        "Included in the signed checkpoint of " (size) " events: its inclusion proof leads to that checkpoint's root, and the checkpoint's signature verified. "
                        a href=(format!("/ui/proof?seq={}&size={size}", event.seq)) download {
                            "Download its proof"
                        }
                        " (C2SP tlog-proof; check it with "
                        code { "toolgate verify --proof" }
                        ")."
                    }
                    (Found::Included, Some(_)) => {
                        span.bad-mark { "? " }
                        "Its inclusion proof leads to the root of the checkpoint of " (size) " events, but that checkpoint's signature did not verify with this server's key."
                    }
                    (Found::Included, None) => {
                        span.ok-mark { "✓ " }
                        "Included in the tree of the trail's " (size) " events (no signed checkpoint covers it yet)."
                    }
                }
            }
        }
    }

    fn about(&self) -> Markup {
        html! {
            section.card {
                h2 { "Proof" }
                @if let Some(none) = self.none { p.muted { (none) } }
                @else if let Some(signed) = &self.signed {
                    p.muted { "Proofs are checked against the latest signed checkpoint:" }
                    (checkpoint::render(signed))
                } @else {
                    p.muted { "This sidecar signs no checkpoints: proofs lead to the root of the trail's tree as it stands, which only a checkpoint kept elsewhere can vouch for." }
                }
            }
        }
    }
}
