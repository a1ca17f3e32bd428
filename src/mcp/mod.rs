//! The MCP gateway (`toolgate mcp`): toolgate in front of any MCP server, so that an MCP
//! client's tool calls go through the same decision path as Decide and onto the same trail,
//! with no code in the agent (docs/mcp.md).
//!
//! It relays JSON-RPC as it came (a small layer over serde_json rather than the `rmcp` SDK,
//! whose typed messages drop the fields they do not know: a relay must pass every message of
//! every protocol revision unchanged) and steps in only at `tools/call`.
//!
//! - `message`: JSON-RPC messages told apart, and the ones the gateway writes itself.
//! - `frame`: stdio's line framing, with a cap.
//! - `result`: tool results: toolgate's own answers, and an upstream result cut to its limit.
//! - `notice`: the server's notifications, bounded.
//! - `ids`: the gateway's own ids towards the server, each answered once.
//! - `refusals`: what the gateway refuses from its peers, recorded.
//! - `upstream`: the gate for one server: each call decided, relayed, held or answered, then
//!   reported; each listing and the server's instructions pinned.
//! - `held`: a held call surfaced to a 2026-07-28 client as `input_required`, and its state.
//! - `stdio`: the gateway over stdio, the server as its child.
//! - `http`: the gateway over Streamable HTTP, a reverse proxy in front of a remote server.

mod definition;
pub(crate) mod frame;
mod held;
mod http;
pub(crate) mod ids;
pub(crate) mod message;
mod notice;
mod refusals;
mod result;
mod stdio;
mod upstream;

pub(crate) use http::sse;
pub use http::{Proxy, Resource, serve};
pub use stdio::{Ended, relay};
pub use upstream::UpstreamGate;

/// Who calls, on which session.
#[derive(Debug, Clone)]
pub struct Caller {
    pub session: String,
    pub actor: String,
}
