//! Signing in with a bearer token (the auditor role to read, the approver role to judge) and
//! out again. A token that may do neither is refused, and recorded, as the gRPC services
//! refuse theirs (`access_denied`, RPC `/ui/sign-in`).

use std::sync::Arc;

use axum::extract::{Form, Query, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Redirect, Response};
use maud::html;
use serde::Deserialize;

use super::Console;
use super::page::{self, Nav};
use super::session::Credential;
use crate::config::Role;

/// The longest page a sign-in leads to.
const MAX_NEXT: usize = 2048;

/// The longest token taken (longer ones are no token toolgate or an identity provider gave).
const MAX_TOKEN: usize = 16 * 1024;

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct Next {
    next: String,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct SignIn {
    token: String,
    next: String,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct SignOut {
    csrf: String,
}

/// Where to go after signing in: a page of this console, never elsewhere.
/// Not the sign-in's own pages, and not a length a cookie could not carry.
pub(super) fn destination(next: &str) -> &str {
    let page = next == "/ui" || next.starts_with("/ui/") || next.starts_with("/ui?");
    let own = page && next.bytes().all(|b| b.is_ascii_graphic() && b != b'\\');
    let signing_in = next.starts_with("/ui/sign-in") || next.starts_with("/ui/oidc");
    if own && !signing_in && next.len() <= MAX_NEXT { next } else { "/ui" }
}

/// `GET /ui/sign-in`.
pub async fn page(State(console): State<Arc<Console>>, Query(next): Query<Next>) -> Response {
    if !console.auth {
        return Redirect::to("/ui").into_response();
    }
    form(&console, &next.next, None)
}

pub(super) fn form(console: &Console, next: &str, refusal: Option<(StatusCode, &str)>) -> Response {
    let body = html! {
        div.card.signin {
            h1 { "Sign in" }
            p.muted {
                "With a token of " code { "[[auth.tokens]]" } " that has the "
                code { "auditor" } " role (to read the trail) or the " code { "approver" }
                " role (to judge approvals)."
            }
            @if let Some((_, why)) = refusal { (page::notice("error", why)) }
            @if console.oidc.is_some() {
                p {
                    a.button href=(page::href("/ui/oidc/start", &[("next", destination(next))])) {
                        "Sign in with your identity provider"
                    }
                }
                p.muted { "Or with a token:" }
            }
            form method="post" action="/ui/sign-in" {
                input type="hidden" name="next" value=(destination(next));
                p {
                    label for="token" { "Bearer token" }
                    input #token type="password" name="token" autocomplete="off" required
                        autofocus;
                }
                button type="submit" { "Sign in" }
            }
        }
    };
    let markup = page::frame(&console.frame("Sign in", Nav::None, None), body);
    page::with_status(refusal.map_or(StatusCode::OK, |(status, _)| status), markup)
}

/// `POST /ui/sign-in`.
pub async fn sign_in(
    State(console): State<Arc<Console>>,
    headers: HeaderMap,
    Form(form): Form<SignIn>,
) -> Response {
    if !console.auth {
        return Redirect::to("/ui").into_response();
    }
    // A new sign-in ends the session this browser had, whatever comes of it.
    if let Some(before) = console.sessions.find(&headers) {
        console.sessions.end(&before.id);
    }
    let token = form.token.trim();
    let token = if token.len() > MAX_TOKEN { "" } else { token };
    let caller = match console.guard.sign_in(token).await {
        Ok(Some(caller)) => caller,
        Ok(None) => return Redirect::to("/ui").into_response(),
        Err(status) => {
            let why = format!("not signed in: {}", super::said(&status));
            return self::form(&console, &form.next, Some((StatusCode::FORBIDDEN, &why)));
        }
    };
    let roles = (caller.has(Role::Auditor), caller.has(Role::Approver));
    let approver_as = caller.sole_actor().map(str::to_owned);
    let started =
        console.sessions.start(caller.id, Credential::Token(token.to_owned()), roles, approver_as);
    let cookie = match started {
        Ok((_, cookie)) => cookie,
        Err(e) => {
            let why = e.to_string();
            return self::form(&console, &form.next, Some((StatusCode::SERVICE_UNAVAILABLE, &why)));
        }
    };
    // An approver who may not read the trail starts on the approvals.
    let next = match (roles.0, destination(&form.next)) {
        (false, _) => "/ui/approvals",
        (true, next) => next,
    };
    ([(header::SET_COOKIE, cookie)], Redirect::to(next)).into_response()
}

/// `POST /ui/sign-out`.
pub async fn sign_out(
    State(console): State<Arc<Console>>,
    visitor: axum::Extension<super::Visitor>,
    Form(form): Form<SignOut>,
) -> Response {
    if !visitor.csrf_matches(&form.csrf) {
        return console.not_taken(Some(&visitor), StatusCode::FORBIDDEN, super::CSRF_REFUSED);
    }
    let cookie = console.sessions.end(&visitor.id);
    let to = if console.auth { "/ui/sign-in" } else { "/ui" };
    ([(header::SET_COOKIE, cookie)], Redirect::to(to)).into_response()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sign_in_leads_only_to_this_consoles_pages() {
        assert_eq!(destination("/ui/trail?tool=x"), "/ui/trail?tool=x");
        for elsewhere in [
            "https://evil.example",
            "//evil.example/ui",
            "/ui\\@x",
            "/uix",
            "/metrics",
            "/ui/\n",
            "/ui x",
            "",
            "/ui/sign-in?next=/ui",
            "/ui/oidc/callback?error=x",
        ] {
            assert_eq!(destination(elsewhere), "/ui", "{elsewhere}");
        }
        let long = format!("/ui/trail?tool={}", "x".repeat(MAX_NEXT));
        assert_eq!(destination(&long), "/ui", "no longer than a cookie carries");
    }
}
