//! The HTTP side port (`--http-listen`, off unless set): Prometheus metrics, Kubernetes probes,
//! and Claude Code's http hooks.
//!
//! - `GET /metrics`: the [`Metrics`] in the OpenMetrics text format.
//! - `GET /healthz`: 200 while the process serves.
//! - `GET /readyz`: 200 when calls can be answered; 503 while shutting down or while the trail
//!   cannot commit (the last commit failed), so a load balancer stops sending calls that would
//!   only get UNAVAILABLE.
//! - `POST /hooks/claude`: a Claude Code hook's JSON in, its answer out (see [`crate::hook`]).
//!   The calls go to this server's Gate and Approvals services in process, through the same
//!   auth, policy and trail as any client's.
//! - `/ui`: the console, when enabled (see `crate::console`).
//!
//! A server picks the routes it has ([`probes`], [`hooks`], the console's) and serves them
//! together with [`serve`].
//!
//! Plain HTTP, or TLS with `[tls] side_port = true` (the listener then comes from
//! [`crate::tls::Acceptor::side_listener`]).

use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use axum::extract::State;
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::IntoResponse;
use axum::routing::{get, post};
use axum::{Json, Router};
use serde_json::{Value, json};

use crate::config::ClaudeHookConfig;
use crate::hook::claude::{self, Payload};
use crate::metrics::Metrics;
use crate::sidecar::Sidecar;

/// What the probes and metrics read.
#[derive(Debug, Clone)]
struct Probes {
    metrics: Arc<Metrics>,
    /// Cleared when the server starts shutting down.
    serving: Arc<AtomicBool>,
}

/// What the hook endpoint calls.
#[derive(Debug, Clone)]
struct Hooks {
    sidecar: Sidecar,
    claude: ClaudeHookConfig,
}

/// `/metrics`, `/healthz` and `/readyz`.
pub fn probes(metrics: Arc<Metrics>, serving: Arc<AtomicBool>) -> Router {
    Router::new()
        .route("/metrics", get(metrics_text))
        .route("/healthz", get(|| async { "ok\n" }))
        .route("/readyz", get(ready))
        .with_state(Probes { metrics, serving })
}

/// `/hooks/claude`, calling `sidecar`.
pub fn hooks(sidecar: Sidecar, claude: ClaudeHookConfig) -> Router {
    Router::new().route("/hooks/claude", post(claude_hook)).with_state(Hooks { sidecar, claude })
}

/// Serves `app` on the side port until `shutdown` resolves.
pub async fn serve<L>(
    listener: L,
    app: Router,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()>
where
    L: axum::serve::Listener,
    L::Addr: std::fmt::Debug,
{
    axum::serve(listener, app).with_graceful_shutdown(shutdown).await
}

async fn metrics_text(State(probes): State<Probes>) -> impl IntoResponse {
    let content_type = "application/openmetrics-text; version=1.0.0; charset=utf-8";
    ([(header::CONTENT_TYPE, content_type)], probes.metrics.encode())
}

async fn ready(State(probes): State<Probes>) -> (StatusCode, &'static str) {
    if !probes.serving.load(Ordering::Relaxed) {
        (StatusCode::SERVICE_UNAVAILABLE, "shutting down\n")
    } else if probes.metrics.trail_failing() {
        (StatusCode::SERVICE_UNAVAILABLE, "the trail cannot commit\n")
    } else {
        (StatusCode::OK, "ready\n")
    }
}

/// A failure to reach the decision blocks the call: a PreToolUse is denied, a PostToolUse
/// tells the model its report was not recorded.
async fn claude_hook(
    State(hooks): State<Hooks>,
    headers: HeaderMap,
    Json(payload): Json<Payload>,
) -> Json<Value> {
    // With auth on, the hook's own `Authorization` header is passed on to the gRPC call.
    let sidecar = match headers.get(header::AUTHORIZATION).and_then(|v| v.to_str().ok()) {
        Some(value) => hooks.sidecar.clone().authorized(value),
        None => Ok(hooks.sidecar.clone()),
    };
    let answer = match sidecar {
        Ok(mut sidecar) => claude::handle(&payload, &hooks.claude, &mut sidecar).await,
        Err(status) => Err(status),
    };
    match answer {
        Ok(answer) => Json(answer),
        Err(status) => {
            let reason = format!("toolgate: {}", status.message());
            Json(match payload.hook_event_name.as_str() {
                "PreToolUse" => json!({ "hookSpecificOutput": {
                    "hookEventName": "PreToolUse",
                    "permissionDecision": "deny",
                    "permissionDecisionReason": reason,
                }}),
                _ => json!({ "decision": "block", "reason": reason }),
            })
        }
    }
}
