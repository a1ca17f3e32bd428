//! The witness's HTTP interface: `POST /add-checkpoint` (C2SP `tlog-witness`, the submission
//! prefix being the root), and `GET /healthz`.

use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

use axum::Router;
use axum::body::Bytes;
use axum::extract::{DefaultBodyLimit, State};
use axum::http::{StatusCode, header};
use axum::response::IntoResponse;
use axum::routing::{get, post};

use super::Witness;

/// The largest request body: 63 proof lines and a checkpoint with a few signatures fit in
/// a fraction of it.
const MAX_BODY: usize = 64 * 1024;

/// The witness's routes.
pub fn router(witness: Arc<Witness>) -> Router {
    Router::new()
        .route("/add-checkpoint", post(add_checkpoint))
        .route("/healthz", get(|| async { "ok\n" }))
        .layer(DefaultBodyLimit::max(MAX_BODY))
        .with_state(witness)
}

async fn add_checkpoint(State(witness): State<Arc<Witness>>, body: Bytes) -> impl IntoResponse {
    let time = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs());
    // The state file is written (and synced) before the answer: off the async workers.
    let answer = tokio::task::spawn_blocking(move || witness.add_checkpoint(&body, time)).await;
    match answer {
        Ok(answer) => (
            StatusCode::from_u16(answer.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR),
            [(header::CONTENT_TYPE, answer.content_type)],
            answer.body,
        ),
        Err(_) => (
            StatusCode::INTERNAL_SERVER_ERROR,
            [(header::CONTENT_TYPE, "text/plain; charset=utf-8")],
            "the witness failed\n".to_owned(),
        ),
    }
}
