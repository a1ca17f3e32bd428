//! The console's stylesheet, script and icon, compiled into the binary: nothing is fetched from
//! anywhere else at run time. Their paths carry the crate's version, so that a browser's cache
//! never mixes an old file with a new page.

use axum::extract::Path;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};

/// Where the stylesheet is served.
pub const CSS_PATH: &str = concat!("/ui/static/console-", env!("CARGO_PKG_VERSION"), ".css");
/// Where the script is served.
pub const JS_PATH: &str = concat!("/ui/static/console-", env!("CARGO_PKG_VERSION"), ".js");
/// Where the icon is served.
pub const ICON_PATH: &str = concat!("/ui/static/console-", env!("CARGO_PKG_VERSION"), ".svg");

const CSS: &str = include_str!("assets/console.css");
const JS: &str = include_str!("assets/console.js");
const ICON: &str = include_str!("assets/icon.svg");

/// `GET /ui/static/{file}`.
pub async fn serve(Path(file): Path<String>) -> Response {
    let path = format!("/ui/static/{file}");
    let (body, kind) = match path.as_str() {
        CSS_PATH => (CSS, "text/css; charset=utf-8"),
        JS_PATH => (JS, "text/javascript; charset=utf-8"),
        ICON_PATH => (ICON, "image/svg+xml"),
        _ => return StatusCode::NOT_FOUND.into_response(),
    };
    let cache = "public, max-age=86400, immutable";
    ([(header::CONTENT_TYPE, kind), (header::CACHE_CONTROL, cache)], body).into_response()
}
