//! The console: the auditors' and approvers' pages, served under `/ui` on the HTTP side port
//! (`[console] enabled = true`) by a sidecar and by the fleet's audit-only server.
//!
//! Server-rendered HTML that reads without JavaScript (the script only adds local times and a
//! reload of pages that change on their own), from files compiled into the binary. Every page
//! asks the server's own gRPC services, in process, with the signed-in visitor's bearer token:
//! a page shows exactly what that token may read, an approval is judged by the same rules as
//! `Approvals/Approve`, and a refusal is recorded as an `access_denied` event as it would be
//! over gRPC. Two followers of the trail kept by the server (`audit::activity`, `audit::health`)
//! give the overview a day of activity and the chain's health without reading the trail again.
//!
//! Every answer carries a strict Content-Security-Policy (this server's own script and style
//! only, no inline script, no frames), `nosniff`, `no-referrer` and `no-store`; a form is taken
//! only from this console's own pages (its session's CSRF token, and the browser's `Origin`
//! when it sends one); without auth the console answers only to loopback host names, so that a
//! web page cannot reach it by re-binding its own name to 127.0.0.1.

mod approvals;
mod assets;
mod chart;
mod checkpoint;
mod export;
mod oidc;
mod overview;
mod page;
mod session;
mod sign_in;
mod story;
mod trail;

use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::Router;
use axum::extract::rejection::ExtensionRejection;
use axum::extract::{Extension, FromRequestParts, Request, State};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Redirect, Response};
use axum::routing::get;
use maud::{Markup, html};
use tonic::{Code, Status};

use crate::audit::Trails;
use crate::audit::activity::Activity;
use crate::audit::health::ChainHealth;
use crate::grpc::Guard;
use crate::proto::approvals_client::ApprovalsClient;
use crate::proto::audit_client::AuditClient;
use crate::sidecar::Conn;
use crate::store::disk::Disk;
use crate::trail::cosignature::CosignatureVerifier;
use crate::trail::note::NoteVerifier;

pub use oidc::Oidc;
use page::{Frame, Nav};
use session::Credential;
use session::Sessions;
pub use session::Visitor;

/// The policy every answer carries: this server's own files only, nothing inline, no frames.
const CSP: &str = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; \
                   connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'";

/// Why a form without its session's CSRF token is refused.
const CSRF_REFUSED: &str = "this form did not come from this session's pages: open the page again";

/// What the console serves from.
#[derive(Debug)]
pub struct Console {
    audit: AuditClient<Conn>,
    /// A sidecar's Approvals service; `None` on a fleet server, which judges nothing.
    approvals: Option<ApprovalsClient<Conn>>,
    guard: Guard,
    /// Whether auth is on: sign-in with a token, or (off) loopback only.
    auth: bool,
    sessions: Sessions,
    /// Sign-in through the identity provider, when configured.
    oidc: Option<Oidc>,
    activity: Activity,
    health: ChainHealth,
    /// The key this sidecar signs its checkpoints with, and the witnesses it submits them to.
    log_key: Option<NoteVerifier>,
    witnesses: Vec<CosignatureVerifier>,
    /// The watch over the trail's disk, on a sidecar.
    disk: Option<Disk>,
}

/// What a page is served with: the console, and the visitor whose session asks (the session
/// layer put it in the request's extensions).
pub struct Seen {
    pub console: Arc<Console>,
    pub visitor: Visitor,
}

impl FromRequestParts<Arc<Console>> for Seen {
    type Rejection = ExtensionRejection;

    async fn from_request_parts(
        parts: &mut axum::http::request::Parts,
        console: &Arc<Console>,
    ) -> Result<Self, Self::Rejection> {
        let Extension(visitor) = Extension::<Visitor>::from_request_parts(parts, console).await?;
        Ok(Seen { console: Arc::clone(console), visitor })
    }
}

/// What a server hands the console.
#[derive(Debug)]
pub struct Parts {
    pub audit: Conn,
    pub approvals: Option<Conn>,
    pub guard: Guard,
    pub auth: bool,
    pub session_minutes: u64,
    pub oidc: Option<Oidc>,
    pub log_key: Option<NoteVerifier>,
    pub witnesses: Vec<CosignatureVerifier>,
    pub disk: Option<Disk>,
}

/// What the console shows that follows the trails (its activity and its chain's health): the
/// server runs [`activity::follow`](crate::audit::activity::follow) and
/// [`health::watch`](crate::audit::health::watch) over them among its tasks.
pub struct Watchers {
    pub activity: Activity,
    pub health: ChainHealth,
    pub trails: Arc<dyn Trails>,
}

/// The console's routes over `parts` (served over TLS when `tls`: its cookie is then `Secure`),
/// and what the server is to run so that they show `trails` as they grow.
pub fn start(parts: Parts, trails: Arc<dyn Trails>, tls: bool) -> (Router, Watchers) {
    let (activity, health) = (Activity::default(), ChainHealth::default());
    let watchers = Watchers { activity: activity.clone(), health: health.clone(), trails };
    let lasts = Duration::from_secs(parts.session_minutes.saturating_mul(60));
    let console = Console {
        audit: AuditClient::new(parts.audit),
        approvals: parts.approvals.map(ApprovalsClient::new),
        guard: parts.guard,
        auth: parts.auth,
        sessions: Sessions::new(lasts, tls),
        oidc: parts.oidc.map(|oidc| oidc.served(tls)),
        activity,
        health,
        log_key: parts.log_key,
        witnesses: parts.witnesses,
        disk: parts.disk,
    };
    (routes(Arc::new(console)), watchers)
}

impl Console {
    fn fleet(&self) -> bool {
        self.approvals.is_none()
    }

    /// The frame of a page titled `title`.
    fn frame<'a>(&self, title: &'a str, nav: Nav, visitor: Option<&'a Visitor>) -> Frame<'a> {
        Frame {
            title,
            nav,
            visitor,
            serves: if self.fleet() { "fleet" } else { "sidecar" },
            auth: self.auth,
            approvals: !self.fleet(),
            refresh: None,
        }
    }

    /// A page of `body` in the frame.
    fn page(&self, title: &str, nav: Nav, visitor: &Visitor, body: Markup) -> Response {
        page::ok(page::frame(&self.frame(title, nav, Some(visitor)), body))
    }

    /// A page of `body` in the frame, reloaded every `seconds` while nobody writes in it.
    fn live_page(
        &self,
        title: &str,
        nav: Nav,
        visitor: &Visitor,
        seconds: u32,
        body: Markup,
    ) -> Response {
        let frame = Frame { refresh: Some(seconds), ..self.frame(title, nav, Some(visitor)) };
        page::ok(page::frame(&frame, body))
    }

    /// The answer to a call the services refused or could not answer: a sign-in again for a
    /// token no longer taken, else the refusal's own words (the services never put internal
    /// errors in them) with its HTTP status.
    fn refused(&self, visitor: &Visitor, status: &Status) -> Response {
        let http = match status.code() {
            Code::Unauthenticated if self.auth => {
                let cookie = self.sessions.end(&visitor.id);
                return ([(header::SET_COOKIE, cookie)], Redirect::to("/ui/sign-in"))
                    .into_response();
            }
            Code::Unauthenticated | Code::PermissionDenied => StatusCode::FORBIDDEN,
            Code::InvalidArgument | Code::OutOfRange => StatusCode::BAD_REQUEST,
            Code::NotFound => StatusCode::NOT_FOUND,
            Code::FailedPrecondition | Code::AlreadyExists | Code::Aborted => StatusCode::CONFLICT,
            Code::Unavailable | Code::ResourceExhausted => StatusCode::SERVICE_UNAVAILABLE,
            _ => StatusCode::INTERNAL_SERVER_ERROR,
        };
        let body = html! { h1 { "Refused" } (page::notice("error", said(status))) };
        page::with_status(http, page::frame(&self.frame("Refused", Nav::None, Some(visitor)), body))
    }

    /// A page saying why a request was not taken, before any service was asked.
    fn not_taken(&self, visitor: Option<&Visitor>, status: StatusCode, why: &str) -> Response {
        let body = html! { h1 { "Not taken" } (page::notice("error", why)) };
        page::with_status(status, page::frame(&self.frame("Not taken", Nav::None, visitor), body))
    }
}

/// What a refusal says to the visitor: the service's own words, which never carry internal
/// errors; a status that is not one of its refusals (an internal one) says no more than that.
fn said(status: &Status) -> &str {
    match status.code() {
        Code::Internal | Code::Unknown | Code::DataLoss | Code::Unimplemented => "internal error",
        _ => status.message(),
    }
}

/// The console's routes, under `/ui`.
fn routes(console: Arc<Console>) -> Router {
    Router::new()
        .route("/ui", get(overview::page))
        .route("/ui/trail", get(trail::page))
        .route("/ui/story", get(story::page))
        .route("/ui/event", get(story::event))
        .route("/ui/proof", get(story::proof))
        .route("/ui/approvals", get(approvals::page).post(approvals::judge))
        .route("/ui/export", get(export::page))
        .route("/ui/export/csv", get(export::csv))
        .route("/ui/export/manifest", get(export::manifest))
        .route("/ui/verify", get(export::verify))
        .route("/ui/sign-in", get(sign_in::page).post(sign_in::sign_in))
        .route("/ui/sign-out", axum::routing::post(sign_in::sign_out))
        .route("/ui/oidc/start", get(oidc::start))
        .route("/ui/oidc/callback", get(oidc::callback))
        .route("/ui/static/{file}", get(assets::serve))
        .layer(middleware::from_fn_with_state(console.clone(), around))
        .with_state(console)
}

/// Every request: the host and origin checks, the visitor, and the headers of every answer.
async fn around(State(console): State<Arc<Console>>, mut request: Request, next: Next) -> Response {
    let started = Instant::now();
    let mut response = match admit(&console, &mut request) {
        Ok(cookie) => {
            let mut response = next.run(request).await;
            if let Some(cookie) = cookie.and_then(|c| HeaderValue::from_str(&c).ok()) {
                response.headers_mut().append(header::SET_COOKIE, cookie);
            }
            response
        }
        Err(response) => *response,
    };
    let headers = response.headers_mut();
    for (name, value) in [
        (header::CONTENT_SECURITY_POLICY, CSP),
        (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
        (header::X_FRAME_OPTIONS, "DENY"),
        (header::REFERRER_POLICY, "no-referrer"),
        (header::HeaderName::from_static("cross-origin-opener-policy"), "same-origin"),
        (header::HeaderName::from_static("cross-origin-resource-policy"), "same-origin"),
    ] {
        headers.insert(name, HeaderValue::from_static(value));
    }
    headers.entry(header::CACHE_CONTROL).or_insert(HeaderValue::from_static("no-store"));
    // How long the server took, for the browser's tools and `toolgate bench --console`.
    let took = format!("render;dur={:.3}", started.elapsed().as_secs_f64() * 1000.0);
    if let Ok(took) = HeaderValue::from_str(&took) {
        headers.insert(header::HeaderName::from_static("server-timing"), took);
    }
    response
}

/// Lets a request through to its page with its visitor (and the cookie of a session just
/// started), or answers it here.
fn admit(console: &Console, request: &mut Request) -> Result<Option<String>, Box<Response>> {
    let headers = request.headers();
    if !console.auth && !crate::listener::host::loopback_host(headers) {
        let why = "without auth this console answers only to a loopback name (localhost, \
                   127.0.0.1, [::1])";
        return Err(Box::new(console.not_taken(None, StatusCode::FORBIDDEN, why)));
    }
    let writes = !matches!(*request.method(), Method::GET | Method::HEAD);
    if embedded_elsewhere(headers) {
        let why = "the console's pages and files are for its own pages, and a visit from a link";
        return Err(Box::new(console.not_taken(None, StatusCode::FORBIDDEN, why)));
    }
    if writes && !same_origin(headers) {
        let why = "a form is taken only from this console's own pages";
        return Err(Box::new(console.not_taken(None, StatusCode::FORBIDDEN, why)));
    }
    let path = request.uri().path();
    if path.starts_with("/ui/static/") || path == "/ui/sign-in" || path.starts_with("/ui/oidc/") {
        return Ok(None);
    }
    if let Some(visitor) = console.sessions.find(headers) {
        request.extensions_mut().insert(visitor);
        return Ok(None);
    }
    match (console.auth, writes) {
        (true, false) => {
            let here = request.uri().path_and_query().map_or("/ui", |p| p.as_str());
            Err(Box::new(
                Redirect::to(&page::href("/ui/sign-in", &[("next", here)])).into_response(),
            ))
        }
        (_, true) => {
            let why = "this form's session has ended: open the page again";
            Err(Box::new(console.not_taken(None, StatusCode::FORBIDDEN, why)))
        }
        (false, false) => {
            // Auth off: each browser gets an anonymous session, for its forms' CSRF token.
            let started =
                console.sessions.start("local".into(), Credential::Anonymous, (true, true), None);
            let (visitor, cookie) = match started {
                Ok(started) => started,
                Err(e) => {
                    let why = e.to_string();
                    let refused = console.not_taken(None, StatusCode::SERVICE_UNAVAILABLE, &why);
                    return Err(Box::new(refused));
                }
            };
            request.extensions_mut().insert(visitor);
            Ok(Some(cookie))
        }
    }
}

/// Whether another site's page is fetching from the console (an `<img>`, a script, `fetch`)
/// rather than a person following a link to it: such a request is refused before it starts a
/// session or a verification.
fn embedded_elsewhere(headers: &HeaderMap) -> bool {
    let text = |name: &str| headers.get(name).and_then(|v| v.to_str().ok());
    matches!(text("sec-fetch-site"), Some("cross-site" | "same-site"))
        && text("sec-fetch-mode") != Some("navigate")
}

/// Whether a form comes from this console: the browser says the request is its own
/// (`Sec-Fetch-Site`), or, when it does not say, that its origin is this host. A browser under
/// this console's `no-referrer` policy sends `Origin: null` with a form, which tells nothing. A
/// client that says neither (not a browser) still needs the session's CSRF token.
fn same_origin(headers: &HeaderMap) -> bool {
    let text = |name: &str| headers.get(name).and_then(|v| v.to_str().ok());
    if let Some(site) = text("sec-fetch-site") {
        return matches!(site, "same-origin" | "none");
    }
    match (text("origin"), text("host")) {
        (None | Some("null"), _) => true,
        (Some(origin), Some(host)) => {
            origin.split_once("://").is_some_and(|(_, authority)| authority == host)
        }
        (Some(_), None) => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::listener::host::tests::headers;

    #[test]
    fn forms_from_another_site_are_refused() {
        let own = [("host", "127.0.0.1:9090"), ("origin", "http://127.0.0.1:9090")];
        assert!(same_origin(&headers(&own)));
        let other = [("host", "127.0.0.1:9090"), ("origin", "http://evil.example")];
        assert!(!same_origin(&headers(&other)));
        let cross = [("host", "127.0.0.1:9090"), ("sec-fetch-site", "cross-site")];
        assert!(!same_origin(&headers(&cross)));
        let browser = [("origin", "null"), ("sec-fetch-site", "same-origin")];
        assert!(same_origin(&headers(&browser)));
        let lying = [
            ("host", "127.0.0.1:9090"),
            ("origin", "http://127.0.0.1:9090"),
            ("sec-fetch-site", "same-site"),
        ];
        assert!(!same_origin(&headers(&lying)), "a sibling site is another site");
        assert!(same_origin(&headers(&[("host", "127.0.0.1:9090")])), "not a browser");
    }

    #[test]
    fn another_sites_page_may_link_to_the_console_but_not_fetch_from_it() {
        let image = [("sec-fetch-site", "cross-site"), ("sec-fetch-mode", "no-cors")];
        assert!(embedded_elsewhere(&headers(&image)));
        let link = [("sec-fetch-site", "cross-site"), ("sec-fetch-mode", "navigate")];
        assert!(!embedded_elsewhere(&headers(&link)));
        let own = [("sec-fetch-site", "same-origin"), ("sec-fetch-mode", "cors")];
        assert!(!embedded_elsewhere(&headers(&own)));
    }
}
