//! The trail, newest first, a page at a time: the filters of `toolgate query` (time, session,
//! actor, tool, action, outcome, kind, node), paged by `seq` (`Audit/Query` with
//! `newest_first`), so that paging while the trail grows loses and repeats nothing. Each row
//! leads to its call's story, or to the event alone.

use axum::extract::Query;
use axum::response::Response;
use maud::{Markup, html};
use serde::Deserialize;

use super::Seen;
use super::page::{Clip, Nav, class_of, href, text, time};
use crate::proto;
use crate::trail::{Kind, Outcome};

/// Events per page.
const PAGE: u32 = 50;

/// The filters, as the form and the links carry them.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct Filters {
    pub since: String,
    pub until: String,
    pub session: String,
    pub actor: String,
    pub tool: String,
    pub action: String,
    pub outcome: String,
    pub kind: String,
    pub node: String,
}

impl Filters {
    /// The filter on the wire.
    pub fn to_proto(&self) -> proto::Filter {
        proto::Filter {
            since: self.since.trim().to_owned(),
            until: self.until.trim().to_owned(),
            session_id: self.session.clone(),
            actor_id: self.actor.clone(),
            tool: self.tool.clone(),
            action: self.action.clone(),
            outcome: self.outcome.clone(),
            kind: self.kind.clone(),
            node_id: self.node.clone(),
            ..Default::default()
        }
    }

    /// The filters as link parameters, the empty ones left out by [`href`].
    pub fn params(&self) -> Vec<(&'static str, &str)> {
        vec![
            ("since", &self.since),
            ("until", &self.until),
            ("session", &self.session),
            ("actor", &self.actor),
            ("tool", &self.tool),
            ("action", &self.action),
            ("outcome", &self.outcome),
            ("kind", &self.kind),
            ("node", &self.node),
        ]
    }

    /// The form's fields, filled in with the filters (a fleet's with the node).
    pub fn fields(&self, fleet: bool) -> Markup {
        let text = |name: &str, label: &str, value: &str, hint: &str| {
            html! { label { (label) input type="text" name=(name) value=(value) placeholder=(hint); } }
        };
        let choice = |name: &str, label: &str, value: &str, options: &[&str]| {
            html! {
                label { (label)
                    select name=(name) {
                        option value="" { "any" }
                        @for option in options {
                            option value=(option) selected[*option == value] { (option) }
                        }
                    }
                }
            }
        };
        html! {
            (text("since", "Since", &self.since, "24h or RFC 3339"))
            (text("until", "Until", &self.until, "RFC 3339"))
            (text("session", "Session", &self.session, ""))
            (text("actor", "Actor", &self.actor, ""))
            (text("tool", "Tool", &self.tool, ""))
            (text("action", "Action", &self.action, ""))
            (choice("outcome", "Outcome", &self.outcome, &Outcome::ALL.map(Outcome::as_str)))
            (choice("kind", "Kind", &self.kind, &Kind::ALL.map(Kind::as_str)))
            @if fleet { (text("node", "Node", &self.node, "")) }
        }
    }
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct Paged {
    #[serde(flatten)]
    filters: Filters,
    /// The page token of the events before the last page.
    before: String,
}

/// `GET /ui/trail`.
pub async fn page(Seen { console, visitor }: Seen, Query(paged): Query<Paged>) -> Response {
    let ask = proto::QueryRequest {
        filter: Some(paged.filters.to_proto()),
        page_size: PAGE,
        page_token: paged.before.clone(),
        newest_first: true,
    };
    let page = match console.audit.clone().query(visitor.request(ask)).await {
        Ok(page) => page.into_inner(),
        Err(status) => return console.refused(&visitor, &status),
    };
    let params = paged.filters.params();
    let older = (!page.next_page_token.is_empty()).then(|| {
        let mut params = params.clone();
        params.push(("before", &page.next_page_token));
        href("/ui/trail", &params)
    });
    let body = html! {
        h1 { "Trail" }
        form.filters method="get" action="/ui/trail" {
            (paged.filters.fields(console.fleet()))
            button type="submit" { "Filter" }
            a.button.secondary href="/ui/trail" { "Clear" }
            a.button.secondary href=(href("/ui/export", &params)) { "Export this" }
        }
        @if page.events.is_empty() {
            p.muted { "No events match." }
        } @else {
            (rows(&page.events, console.fleet()))
        }
        div.pager {
            @if !paged.before.is_empty() { a.button.secondary href=(href("/ui/trail", &params)) { "← Newest" } }
            @if let Some(older) = older { a.button.secondary href=(older) { "Older →" } }
        }
    };
    console.page("Trail", Nav::Trail, &visitor, body)
}

/// The link to an event's story: its call's, when it belongs to one.
pub fn story_link(event: &proto::Event) -> String {
    match event.decision_id.as_deref() {
        Some(decision) if !decision.is_empty() => {
            href("/ui/story", &[("decision", decision), ("node", &event.node_id)])
        }
        _ => href("/ui/event", &[("seq", &event.seq.to_string()), ("node", &event.node_id)]),
    }
}

/// What an event came to, in a word: an outcome, an execution's status, a refusal's code.
pub fn result(event: &proto::Event) -> Markup {
    match (&event.outcome, &event.status, &event.error) {
        (Some(outcome), _, _) => {
            let class = format!("outcome {}", class_of(outcome, Outcome::as_str));
            html! { span class=(class) { (Clip(outcome)) } }
        }
        (None, Some(status), _) => html! { span.state { (Clip(status)) } },
        (None, None, error) => html! { span.muted { (Clip(text(error))) } },
    }
}

/// An event's kind, as a label.
pub fn kind(event: &proto::Event) -> Markup {
    let class = format!("kind {}", class_of(&event.kind, Kind::as_str));
    html! { span class=(class) { (Clip(&event.kind)) } }
}

fn rows(events: &[proto::Event], fleet: bool) -> Markup {
    html! {
        table.events {
            thead {
                tr {
                    @if fleet { th { "Node" } }
                    th { "Seq" } th { "Time (UTC)" } th { "Kind" } th { "Actor" } th { "Tool" }
                    th { "Result" } th { "Reason" } th { "Session" }
                }
            }
            tbody {
                @for event in events {
                    tr {
                        @if fleet { td { (Clip(&event.node_id)) } }
                        td { a href=(story_link(event)) { (event.seq) } }
                        td { (time(&event.ts)) }
                        td { (kind(event)) }
                        td { (Clip(text(&event.actor_id))) }
                        td { (Clip(text(&event.tool))) }
                        td { (result(event)) }
                        td { (Clip(event.reason.as_deref().or(event.error.as_deref()).unwrap_or_default())) }
                        td { (Clip(text(&event.session_id))) }
                    }
                }
            }
        }
    }
}
