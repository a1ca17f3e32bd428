//! The approvals waiting for a verdict, with what is known of each call, and the forms that
//! approve or reject one with a comment. A verdict goes through `Approvals/Approve` or
//! `Approvals/Reject` with the visitor's token, so the service's rules hold as they are: never
//! one's own call, the policy's role requirements, expiry, exactly once.

use axum::extract::Form;
use axum::http::StatusCode;
use axum::response::Response;
use maud::{Markup, html};
use serde::Deserialize;

use super::page::{self, Clip, Nav, Text, href, time};
use super::{CSRF_REFUSED, Console, Seen, Visitor};
use crate::proto;

/// The page reloads this often while nobody writes a comment.
const REFRESH_SECONDS: u32 = 10;

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct VerdictForm {
    csrf: String,
    decision: String,
    /// `approve` or `reject`.
    verdict: String,
    comment: String,
    /// Who gives it, when the session's token does not say.
    approver: String,
}

/// `GET /ui/approvals`.
pub async fn page(Seen { console, visitor }: Seen) -> Response {
    listed(&console, &visitor, None).await
}

/// `POST /ui/approvals`: a verdict.
pub async fn judge(Seen { console, visitor }: Seen, Form(verdict): Form<VerdictForm>) -> Response {
    if !visitor.csrf_matches(&verdict.csrf) {
        return console.not_taken(Some(&visitor), StatusCode::FORBIDDEN, CSRF_REFUSED);
    }
    let Some(approvals) = &console.approvals else {
        return console.not_taken(Some(&visitor), StatusCode::NOT_FOUND, NO_APPROVALS);
    };
    let approver = visitor.approver_as.clone().unwrap_or(verdict.approver.trim().to_owned());
    let request = proto::VerdictRequest {
        decision_id: verdict.decision.clone(),
        approver,
        comment: verdict.comment.clone(),
    };
    let mut approvals = approvals.clone();
    let judged = match verdict.verdict.as_str() {
        "approve" => approvals.approve(visitor.request(request)).await,
        "reject" => approvals.reject(visitor.request(request)).await,
        _ => {
            let why = "verdict: `approve` or `reject`";
            return console.not_taken(Some(&visitor), StatusCode::BAD_REQUEST, why);
        }
    };
    let notice = match judged {
        Ok(approval) => {
            let approval = approval.into_inner();
            let done = if verdict.verdict == "approve" { "Approved" } else { "Rejected" };
            let message =
                format!("{done}: the call of {} to {}.", approval.actor_id, approval.tool);
            page::notice("ok", &message)
        }
        Err(status) if status.code() == tonic::Code::Unauthenticated => {
            return console.refused(&visitor, &status);
        }
        Err(status) => page::notice("error", &format!("Not done: {}", super::said(&status))),
    };
    listed(&console, &visitor, Some(notice)).await
}

const NO_APPROVALS: &str =
    "a fleet server judges no approvals: each node's sidecar holds its own pending calls";

async fn listed(console: &Console, visitor: &Visitor, notice: Option<Markup>) -> Response {
    let Some(approvals) = &console.approvals else {
        return console.not_taken(Some(visitor), StatusCode::NOT_FOUND, NO_APPROVALS);
    };
    let ask = visitor.request(proto::ListPendingRequest::default());
    let (pending, total) = match approvals.clone().list_pending(ask).await {
        Ok(listed) => {
            let listed = listed.into_inner();
            (listed.approvals, listed.total)
        }
        Err(status) => return console.refused(visitor, &status),
    };
    let body = html! {
        h1 { "Approvals" }
        @if let Some(notice) = notice { (notice) }
        @if pending.is_empty() {
            p.muted { "No call is waiting for a verdict." }
        }
        @for approval in &pending { (card(visitor, approval)) }
        @if total > pending.len() as u64 {
            p.muted { "The " (pending.len()) " oldest of " (total) " pending calls are shown: judge them to see the rest." }
        }
    };
    console.live_page("Approvals", Nav::Approvals, visitor, REFRESH_SECONDS, body)
}

fn card(visitor: &Visitor, approval: &proto::Approval) -> Markup {
    let story = href("/ui/story", &[("decision", &approval.decision_id)]);
    html! {
        section.card.approval {
            h2 { (Clip(&approval.tool)) " " span.muted { "by " (Clip(&approval.actor_id)) } }
            dl.fields {
                dt { "Why it waits" } dd { (Text(&approval.reason)) }
                dt { "Policies" } dd { @for id in &approval.policy_ids { div.mono { (Text(id)) } } }
                dt { "Action" } dd { (Text(&approval.action)) }
                dt { "Resource" } dd { (Text(&approval.resource_type)) " " (Text(&approval.resource_id)) }
                dt { "Session" } dd { (Text(&approval.session_id)) }
                dt { "Arguments (hash)" } dd.mono { (Text(&approval.args_hash)) }
                @if !approval.args_json.is_empty() {
                    dt { "Arguments" } dd { pre { (page::Lines(&approval.args_json)) } }
                }
                dt { "Asked" } dd { (time(&approval.requested_at)) }
                dt { "Expires" } dd { (time(&approval.expires_at)) }
                dt { "Decision" } dd { a href=(story) { code { (Text(&approval.decision_id)) } } }
            }
            // An auditor sees what waits; only an approver judges it.
            @if visitor.approver {
                form method="post" action="/ui/approvals" {
                    input type="hidden" name="csrf" value=(visitor.csrf);
                    input type="hidden" name="decision" value=(approval.decision_id);
                    label { "Comment (the agent is told it)"
                        textarea name="comment" maxlength="1000" {}
                    }
                    div.actions {
                        @match &visitor.approver_as {
                            Some(me) => span.muted { "as " strong { (Text(me)) } },
                            None => label { "Approver "
                                input type="text" name="approver" required placeholder="your actor id";
                            },
                        }
                        button type="submit" name="verdict" value="approve" { "Approve" }
                        button.danger type="submit" name="verdict" value="reject" { "Reject" }
                    }
                }
            }
        }
    }
}
