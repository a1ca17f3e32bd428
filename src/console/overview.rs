//! The overview: decisions by outcome over the last hour or day (a chart), the most denied
//! tools and actors, violations and refusals, the approvals waiting, and the chain's health
//! (verified up to which event and when, the last signed checkpoint and its witnesses), and on
//! a sidecar its trail's disk (the trail's size, the space left, when it is full).
//! Activity and health come from the server's followers of the trail, so the page reads no
//! day of events; the page itself is reached through `Audit/Query` with the visitor's token
//! (its latest event), so that only an auditor sees it.

use axum::extract::Query;
use axum::response::Response;
use chrono::{DateTime, Utc};
use maud::{Markup, html};
use serde::Deserialize;
use tonic::Code;

use super::page::{self, Clip, Nav, Text, href, time};
use super::{Console, Seen, Visitor, chart, checkpoint};
use crate::audit::activity::{self, OTHERS, Summary};
use crate::audit::health::Check;
use crate::proto;
use crate::store::disk::{self, Reading};
use crate::trail::Outcome;

/// Names in each list of the most denied.
const TOP: usize = 5;
/// Pending approvals shown.
const PENDING: usize = 5;

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct Window {
    window: String,
}

/// `GET /ui`.
pub async fn page(Seen { console, visitor }: Seen, Query(window): Query<Window>) -> Response {
    let day = window.window == "day";
    let mut cards = Vec::new();
    if visitor.approver
        && let Some(approvals) = &console.approvals
    {
        let listed = approvals.clone().list_pending(visitor.request(Default::default())).await;
        match listed {
            Ok(listed) => {
                let listed = listed.into_inner();
                cards.push(pending(&listed.approvals, listed.total));
            }
            Err(status) => return console.refused(&visitor, &status),
        }
    }
    if visitor.auditor {
        let latest = proto::QueryRequest { page_size: 1, newest_first: true, ..Default::default() };
        let latest = match console.audit.clone().query(visitor.request(latest)).await {
            Ok(page) => page.into_inner().events.into_iter().next(),
            Err(status) => return console.refused(&visitor, &status),
        };
        let (minutes, bucket) = if day { (24 * 60, 15) } else { (60, 1) };
        let now = activity::minute(Utc::now());
        let summary = console.activity.summary(now, minutes, bucket, TOP);
        let since = if day { "24h" } else { "1h" };
        let signed = match &console.approvals {
            Some(_) => latest_checkpoint(&console, &visitor).await,
            None => Ok(None),
        };
        let signed = match signed {
            Ok(signed) => signed,
            Err(status) => return console.refused(&visitor, &status),
        };
        cards.insert(0, decisions(&summary, day, bucket, since));
        cards.push(denied(&summary, since));
        cards.push(troubles(&summary, since, day));
        cards.push(health(&console, latest.as_ref(), signed.as_ref()));
        if let Some(disk) = &console.disk {
            cards.push(disk_card(disk.latest().as_ref()));
        }
    }
    let body = html! {
        h1 { "Overview" }
        div.grid { @for card in cards { (card) } }
    };
    console.live_page("Overview", Nav::Overview, &visitor, 15, body)
}

/// The trail's latest signed checkpoint; `None` when it has none.
async fn latest_checkpoint(
    console: &Console,
    visitor: &Visitor,
) -> Result<Option<checkpoint::Signed>, tonic::Status> {
    let ask = visitor.request(proto::CheckpointRequest::default());
    match console.audit.clone().checkpoint(ask).await {
        Ok(answer) => {
            Ok(checkpoint::read(&answer.into_inner(), console.log_key.as_ref(), &console.witnesses))
        }
        Err(status) if status.code() == Code::NotFound => Ok(None),
        Err(status) => Err(status),
    }
}

fn decisions(summary: &Summary, day: bool, bucket: i64, since: &str) -> Markup {
    let current = |this: bool| this.then_some("page");
    html! {
        section.card.wide {
            h2 { "Decisions" }
            nav.tabs {
                a href="/ui" aria-current=[current(!day)] { "Last hour" }
                a href="/ui?window=day" aria-current=[current(day)] { "Last day" }
            }
            @if !summary.caught_up {
                (page::notice("info", "Counting the last day of the trail: the figures grow until it is done."))
            }
            div.figures {
                @for outcome in Outcome::ALL {
                    div {
                        div.figure {
                            a href=(href("/ui/trail", &[("kind", "decision"), ("outcome", outcome.as_str()), ("since", since)])) {
                                (summary.decisions[outcome as usize])
                            }
                        }
                        div.label { span class=(format!("swatch {}", outcome.as_str())) {} (outcome.as_str()) }
                    }
                }
            }
            div.chart { (chart::decisions(summary, bucket)) }
        }
    }
}

fn ranked(title: &str, names: &[(String, u64)], param: &str, since: &str) -> Markup {
    html! {
        h3 { (title) }
        @if names.is_empty() {
            p.muted { "No denials." }
        } @else {
            ol.ranked {
                @for (name, count) in names {
                    li {
                        @if name == OTHERS {
                            span.muted { (OTHERS) }
                        } @else {
                            a href=(href("/ui/trail", &[("outcome", "deny"), (param, name), ("since", since)])) { (Clip(name)) }
                        }
                        " " span.muted { "(" (count) ")" }
                    }
                }
            }
        }
    }
}

fn denied(summary: &Summary, since: &str) -> Markup {
    html! {
        section.card {
            h2 { "Most denied" }
            (ranked("Tools", &summary.denied_tools, "tool", since))
            (ranked("Actors", &summary.denied_actors, "actor", since))
        }
    }
}

fn troubles(summary: &Summary, since: &str, day: bool) -> Markup {
    let window = if day { "the last day" } else { "the last hour" };
    html! {
        section.card {
            h2 { "Violations and refusals" }
            div.figures {
                div {
                    div.figure { a href=(href("/ui/trail", &[("kind", "violation"), ("since", since)])) { (summary.violations) } }
                    div.label { "violations in " (window) }
                }
                div {
                    div.figure { (summary.refusals) }
                    div.label {
                        a href=(href("/ui/trail", &[("kind", "access_denied"), ("since", since)])) { "access denied" }
                        " or "
                        a href=(href("/ui/trail", &[("kind", "invalid_request"), ("since", since)])) { "malformed" }
                    }
                }
            }
            p.muted { "A violation is an execution its decision did not allow: another call, other arguments, a second run." }
        }
    }
}

fn pending(approvals: &[proto::Approval], total: u64) -> Markup {
    html! {
        section.card {
            h2 { "Approvals waiting" }
            div.figures { div { div.figure { a href="/ui/approvals" { (total) } } div.label { "pending" } } }
            @if !approvals.is_empty() {
                table {
                    tr { th { "Tool" } th { "Actor" } th { "Since" } }
                    @for approval in approvals.iter().take(PENDING) {
                        tr {
                            td { (Clip(&approval.tool)) }
                            td { (Clip(&approval.actor_id)) }
                            td { (time(&approval.requested_at)) }
                        }
                    }
                }
            }
        }
    }
}

fn check(check: Option<&Check>) -> Markup {
    let Some(check) = check else {
        return html! { p.muted { "The first verification is under way." } };
    };
    let at = |t: DateTime<Utc>| time(&t.to_rfc3339());
    html! {
        @if check.intact() {
            p {
                span.ok-mark { "✓ Intact" } " — verified through seq " strong { (check.through) }
                " at " (at(check.at))
            }
        } @else {
            p.bad-mark { "✗ Broken: " (check.problem_count) " problem(s) found" }
            ul { @for problem in &check.problems { li { (Text(problem)) } } }
            p.muted { "Checked through seq " (check.through) " at " (at(check.at)) "." }
        }
        p.muted {
            "The whole trail was last verified at " (at(check.whole_at))
            ", each checkpoint's root against the tree."
        }
    }
}

fn health(
    console: &Console,
    latest: Option<&proto::Event>,
    signed: Option<&checkpoint::Signed>,
) -> Markup {
    let checks = console.health.checks();
    html! {
        section.card.wide {
            h2 { "The chain's health" }
            @if console.fleet() {
                @if checks.is_empty() { p.muted { "No node's trail verified yet." } }
                table {
                    tr { th { "Node" } th { "Verified" } }
                    @for (node, found) in &checks {
                        tr { td { (Text(node)) } td { (check(Some(found))) } }
                    }
                }
            } @else {
                (check(checks.get("")))
                @if let Some(latest) = latest {
                    p.muted { "The latest event is seq " (latest.seq) ", at " (time(&latest.ts)) "." }
                }
                h3 { "Latest signed checkpoint" }
                @match signed {
                    Some(signed) => (checkpoint::render(signed)),
                    None => p.muted { "None: this sidecar signs no checkpoints ([checkpoints] key_file is not set)." },
                }
            }
        }
    }
}

/// The trail's disk: its size, the space left, the growth, when it is full; the warning first.
fn disk_card(reading: Option<&Reading>) -> Markup {
    html! {
        section.card {
            h2 { "Disk" }
            @match reading {
                None => p.muted { "Not measured yet." },
                Some(reading) => {
                    @if let Some(warning) = &reading.warning {
                        (page::notice("error", &format!("The trail's disk: {warning}. A full disk stops every decision.")))
                    }
                    div.figures {
                        div { div.figure { (disk::size(reading.trail_bytes)) } div.label { "the trail" } }
                        div { div.figure { (disk::size(reading.free_bytes)) } div.label { "free of " (disk::size(reading.size_bytes)) } }
                    }
                    p.muted {
                        @match (reading.bytes_per_day, reading.full_in) {
                            (None, _) => "The growth is known after a minute.",
                            (Some(per_day), Some(full_in)) => {
                                "Growing " (disk::size(per_day as u64)) " a day: full in about " (disk::days(full_in)) "."
                            }
                            (Some(_), None) => "Not growing.",
                        }
                    }
                }
            }
        }
    }
}
