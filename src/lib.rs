//! toolgate: a policy decision point and an append-only, hash-chained audit trail for the tool
//! calls of AI agents, served over gRPC as a sidecar.
//!
//! An agent harness asks [`Gate`](proto::gate_server::Gate) `Decide` before it runs a
//! tool and reports with `Execute` after it ran. Every decision and every execution is committed
//! to the SQLite trail before the caller hears the answer.
//!
//! # Layout
//!
//! Modules in layers: each imports only modules of the layers below it (no module imports one
//! that imports it back), and `docs/architecture.md` follows a Decide through them.
//!
//! - The domain, pure and imported by everyone: [`trail`] (the events and the one table of
//!   their columns, the canonical encoding, the chain step `Chain`, the RFC 6962 tree and its
//!   proofs, CSV, verification),
//!   `error` (the service error and the one place that decides its gRPC status), [`config`]
//!   (plain data: the file and its defaults), [`registry`] (each tool's safety level and
//!   action), [`proto`] (the code generated from `proto/toolgate/v1/*.proto`), `metrics`.
//! - Storage: `store`: the SQLite file through rusqlite (migrations, the single
//!   group-committing writer, WAL checkpoints, read-only reads, the auditor's `Filter`); rows
//!   are derived from the trail's column table, and the chain step is the trail's. `fleet`:
//!   the fleet's PostgreSQL store through sqlx (its schema, whose `fleet_ingest` checks every
//!   batch on arrival; reads for the auditors) and the sidecar's shipper. `backoff`: the pauses
//!   and once-per-trouble logging that the shipper and the OTLP exporter share.
//! - Requests and decisions: [`request`] (wire requests validated and normalized; every
//!   rejection names its field), `facts` (per-session counts for loops, caps and rates),
//!   `policy` (Cedar evaluation into an outcome and a reason), `approvals` (calls waiting for a
//!   verdict), `pins` (the tool definitions in force, against definitions changed behind the
//!   user's back), [`auth`] (tokens, certificates, roles, and `Rpc`: every RPC's path and roles),
//!   [`tls`] (TLS and mutual TLS, reloaded without a restart).
//! - The logic: `gate` (Decide, Execute, approvals and reloads, and the one place refusals
//!   become events), `audit` (export with a manifest, verification of the trail and of
//!   exports, against checkpoints too), `trust` (signed notes, checkpoints of the trail's
//!   Merkle tree, cosignatures, and the tasks that sign checkpoints as the trail grows and
//!   submit them to witnesses), `siem` (the trail as OTLP log records shipped to a collector
//!   from a durable cursor, and as OCSF events), `witness` (an independent witness of other logs: C2SP
//!   tlog-witness over HTTP, its own SQLite state). `audit` also keeps, for the console, the
//!   trail's activity by minute over the last day and its chain verified as it grows.
//! - The faces: `grpc` (the tonic services over `gate` and `audit`, the shared
//!   authorize-and-record prologue, health and reflection), `sidecar` (those services as the
//!   adapters call them), `hook` (Claude Code's hooks), `http` (the side port: metrics,
//!   probes, the hook endpoint), `console` (the auditors' and approvers' web pages under `/ui`
//!   on the side port, over the gRPC services in process), `mcp` (the MCP gateway: a JSON-RPC relay whose
//!   `tools/call` go through Decide and Execute), [`listener`], [`server`] (binds everything
//!   and serves until shut down), `shutdown`, [`telemetry`], `text` (strings from the trail
//!   as a terminal or a page shows them: nothing hidden or reordered).
//! - The command line: [`cli`] (one file per subcommand) and `bench` (the load generator and
//!   the audit and policy measurements behind `toolgate bench`).
//!
//! Public are the modules the binary and the integration tests use; the rest is private, so
//! the compiler reports what nothing uses.

mod approvals;
mod audit;
pub mod auth;
mod bench;
pub mod cli;
pub mod config;
mod console;
mod error;
mod facts;
mod fleet;
mod follow;
#[doc(hidden)]
pub mod fuzzing;
mod gate;
mod grpc;
mod hook;
mod http;
pub mod listener;
mod mcp;
mod metrics;
mod pins;
mod policy;
pub mod proto;
pub mod registry;
pub mod request;
pub mod server;
mod shutdown;
mod sidecar;
mod siem;
mod store;
pub mod telemetry;
mod text;
pub mod tls;
pub mod trail;
mod trust;
mod witness;
