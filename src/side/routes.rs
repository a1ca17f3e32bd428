//! The HTTP side port (`--http-listen`, off unless set): Prometheus metrics, Kubernetes probes,
//! and Claude Code's http hooks.
//!
//! - `GET /metrics`: the [`Metrics`] in the OpenMetrics text format.
//! - `GET /healthz`: 200 while the process serves.
//! - `GET /readyz`: 200 when calls can be answered; 503 while shutting down or while the trail
//!   cannot commit (the last commit failed), so a load balancer stops sending calls that would
//!   only get UNAVAILABLE. While the trail's disk needs attention (`store::disk`) it is still
//!   200, with a `warning:` line: a warning, not an outage.
//! - `POST /hooks/claude`, `POST /hooks/qwen`: a Claude Code (or Qwen Code) http hook's JSON in,
//!   its answer out (see [`crate::hook`]).
//!   The calls go to this server's Gate and Approvals services in process, through the same
//!   auth, policy and trail as any client's.
//! - `/ui`: the console, when enabled (see `crate::console`).
//!
//! Every route is behind [`guarded`]: without auth, only a loopback name or an IP address as
//! the `Host` (DNS rebinding), and never a request from a page of another origin.
//!
//! A server picks the routes it has ([`probes`], [`hooks`], the console's) and the side port
//! serves them together (`side::start`).

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use axum::extract::{Request, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::middleware::Next;
use axum::response::IntoResponse;
use axum::routing::{get, post};
use axum::{Json, Router};
use serde_json::{Value, json};

use crate::config::HooksConfig;
use crate::hook::call::Permission;
use crate::hook::{self, Agent, Phase, claude};
use crate::listener::host::{foreign_origin, literal_or_loopback_host};
use crate::metrics::Metrics;
use crate::sidecar::Sidecar;
use crate::store::disk::Disk;

/// What the probes and metrics read.
#[derive(Debug, Clone)]
struct Probes {
    metrics: Arc<Metrics>,
    /// Cleared when the server starts shutting down.
    serving: Arc<AtomicBool>,
    /// The watch over the trail's disk, on a server with a trail of its own.
    disk: Option<Disk>,
}

/// What the hook endpoint calls.
#[derive(Debug, Clone)]
struct Hooks {
    sidecar: Sidecar,
    config: HooksConfig,
}

/// `/metrics`, `/healthz` and `/readyz`.
pub fn probes(metrics: Arc<Metrics>, serving: Arc<AtomicBool>, disk: Option<Disk>) -> Router {
    Router::new()
        .route("/metrics", get(metrics_text))
        .route("/healthz", get(|| async { "ok\n" }))
        .route("/readyz", get(ready))
        .with_state(Probes { metrics, serving, disk })
}

/// The http hooks of the agents that have them (Claude Code, Qwen Code), calling `sidecar`.
pub fn hooks(sidecar: Sidecar, config: HooksConfig) -> Router {
    Router::new()
        .route("/hooks/claude", post(|s, h, p| http_hook(Agent::Claude, s, h, p)))
        .route("/hooks/qwen", post(|s, h, p| http_hook(Agent::Qwen, s, h, p)))
        .with_state(Hooks { sidecar, config })
}

/// `app` behind the guard against DNS rebinding and other sites' pages: without auth, a
/// request must name this host by a loopback name or an IP address (a rebinding attack names
/// the attacker's domain, which resolves to this host); with or without auth, a request a
/// browser made from a page of another origin is refused (the hook's callers are not browsers,
/// and the console's pages are its own origin).
pub fn guarded(app: Router, auth: bool) -> Router {
    app.layer(axum::middleware::from_fn(move |request: Request, next: Next| async move {
        let headers = request.headers();
        if !auth && !literal_or_loopback_host(headers) {
            let why =
                "without auth the side port answers only to a loopback name or an IP address\n";
            return (StatusCode::FORBIDDEN, why).into_response();
        }
        if foreign_origin(headers) {
            return (
                StatusCode::FORBIDDEN,
                "a page of another origin may not call the side port\n",
            )
                .into_response();
        }
        next.run(request).await
    }))
}

async fn metrics_text(State(probes): State<Probes>) -> impl IntoResponse {
    let content_type = "application/openmetrics-text; version=1.0.0; charset=utf-8";
    ([(header::CONTENT_TYPE, content_type)], probes.metrics.encode())
}

async fn ready(State(probes): State<Probes>) -> (StatusCode, String) {
    if !probes.serving.load(Ordering::Relaxed) {
        (StatusCode::SERVICE_UNAVAILABLE, "shutting down\n".to_owned())
    } else if probes.metrics.trail_failing() {
        (StatusCode::SERVICE_UNAVAILABLE, "the trail cannot commit\n".to_owned())
    } else {
        let warning = probes.disk.as_ref().and_then(|disk| disk.latest()?.warning);
        match warning {
            Some(warning) => {
                (StatusCode::OK, format!("ready\nwarning: the trail's disk: {warning}\n"))
            }
            None => (StatusCode::OK, "ready\n".to_owned()),
        }
    }
}

/// One http hook event of `agent` (both speak Claude Code's protocol). A failure to reach the
/// decision blocks the call: a PreToolUse is denied, a PostToolUse tells the model its report
/// was not recorded.
async fn http_hook(
    agent: Agent,
    State(hooks): State<Hooks>,
    headers: HeaderMap,
    Json(payload): Json<claude::Payload>,
) -> Json<Value> {
    let call = payload.call();
    // With auth on, the hook's own `Authorization` header is passed on to the gRPC call.
    let sidecar = match headers.get(header::AUTHORIZATION).and_then(|v| v.to_str().ok()) {
        Some(value) => hooks.sidecar.clone().authorized(value),
        None => Ok(hooks.sidecar.clone()),
    };
    let answer = match sidecar {
        Ok(mut sidecar) => {
            hook::handle(agent, call.clone(), hooks.config.of(agent), &mut sidecar, None).await
        }
        Err(status) => Err(status),
    };
    let reason = |status: tonic::Status| format!("toolgate: {}", status.message());
    Json(match answer {
        Ok(answer) => serde_json::from_str(&answer.stdout).unwrap_or_else(|_| json!({})),
        Err(status) => match call.phase {
            Phase::Before => claude::before(&Permission::Deny(reason(status))),
            Phase::After { .. } | Phase::Other => {
                json!({ "decision": "block", "reason": reason(status) })
            }
        },
    })
}
