//! toolgate: a policy decision point and an append-only, hash-chained audit trail for the tool
//! calls of AI agents, served over gRPC as a sidecar.
//!
//! An agent harness asks [`Gate`](proto::gate_server::Gate) `Decide` before it runs a
//! tool and reports with `Execute` after it ran. Every decision and every execution is committed
//! to the SQLite trail before the caller hears the answer.
//!
//! # Layout
//!
//! Modules in layers: each imports only modules of its own layer or of the layers below it,
//! and no modules import each other in a circle; `docs/architecture.md` draws the layers and
//! follows a Decide through them, and `tests/it/layers.rs` fails on an import that breaks them.
//!
//! - The domain, imported by everyone: [`trail`] (the crate `toolgate-trail`: the events and
//!   the one table of their columns, the canonical encoding, the chain step, the RFC 6962 tree
//!   and its proofs, CSV, verification, signed notes, checkpoints, cosignatures), [`proto`]
//!   (the crate `toolgate-proto`: the code generated from `proto/toolgate/v1/*.proto`),
//!   [`error`] (the service error and the one place that decides its gRPC status), [`config`]
//!   (plain data: the file, every section of it and their defaults), [`registry`] (each tool's safety level and
//!   action), `query` (an auditor's counts and the filter's SQL, whichever store holds
//!   the trail), `metrics`, `text` (strings from the trail as a terminal or a page shows
//!   them: nothing hidden or reordered), `backoff` (a task's pauses after trouble), `tick` (the
//!   rounds of a periodic task: waits, stops, its last round), `wire`
//!   (events to and from protobuf), `shutdown`, [`telemetry`].
//! - Storage, I/O only: `store` (the SQLite file through rusqlite: migrations, the single
//!   group-committing writer, WAL checkpoints, read-only reads, the disk's space), `archive`
//!   (the trail as C2SP tlog-tiles in an object store: its verification, S3 Object Lock, and
//!   reading pruned events back) and `fleet` (the fleet's
//!   PostgreSQL store through sqlx: its schema, the nodes' registry and tokens, the checks
//!   of every batch before the ingest service writes it, and the store's reads).
//! - Requests and state: [`request`] (wire requests validated and normalized; every rejection
//!   names its field), `state` (what is rebuilt from the trail at start: session facts,
//!   pending approvals, the tool definitions in force), `policy` (Cedar evaluation into an
//!   outcome and a reason), [`auth`] (tokens, certificates, roles, and `Rpc`: every RPC's path
//!   and roles), [`tls`] (TLS and mutual TLS, reloaded without a restart), [`listener`]
//!   (connections within their caps; HTTP/1 serving).
//! - The logic: `gate` (the `Gatekeeper`: Decide, Execute, approvals and reloads, and the one
//!   place refusals become events), `audit` (`Trails`, the one read interface over both
//!   stores; export with a manifest, verification of the trail and of exports; for the
//!   console, the activity by minute and the chain verified as it grows), `siem` (the trail as
//!   OTLP log records and OCSF events).
//! - What follows the trail: `follow` (one loop from a durable cursor, woken by the writer's
//!   commits, into a sink: the auditors' index, the archive, the OTLP exporter, the fleet
//!   shipper, `Audit/Subscribe`), `trust`
//!   (the tasks that sign checkpoints and submit them to witnesses), `retention` (the task
//!   that prunes what is archived, verified, taken and cosigned, under `[retention]`), `witness` (an independent
//!   witness of other logs: C2SP tlog-witness over HTTP, its own SQLite state).
//! - The faces and adapters: `grpc` (the tonic services over `gate` and `audit`, and the
//!   fleet's ingest service over `fleet`; the shared
//!   authorize-and-record prologue), `sidecar` (those services as the adapters call them),
//!   `side` (the HTTP side port: metrics, probes, the hook endpoint, the console), `hook`
//!   (Claude Code's hooks), `console` (the auditors' and approvers' web pages under `/ui`, over
//!   the gRPC services in process), `mcp` (the MCP gateway: a JSON-RPC relay whose
//!   `tools/call` go through Decide and Execute), [`server`] (what a process runs, its tasks
//!   started and stopped in order).
//! - The command line: [`cli`] (one file per subcommand), `bench` (the load generator and
//!   the audit and policy measurements behind `toolgate bench`), and `fuzzing` (the fuzz
//!   targets' entry points).
//!
//! Public are the modules the binary, the integration tests and the fuzz targets use; the rest
//! is private, so the compiler reports what nothing uses.

#[deny(clippy::wildcard_enum_match_arm)]
mod archive;
#[deny(clippy::wildcard_enum_match_arm)]
mod audit;
pub mod auth;
mod backoff;
mod bench;
pub mod cli;
pub mod config;
mod console;
#[deny(clippy::wildcard_enum_match_arm)]
pub mod error;
mod fleet;
#[deny(clippy::wildcard_enum_match_arm)]
mod follow;
#[doc(hidden)]
pub mod fuzzing;
#[deny(clippy::wildcard_enum_match_arm)]
mod gate;
#[deny(clippy::wildcard_enum_match_arm)]
mod grpc;
mod hook;
pub mod listener;
mod mcp;
#[deny(clippy::wildcard_enum_match_arm)]
mod metrics;
mod policy;
pub use toolgate_proto as proto;
mod query;
pub mod registry;
#[deny(clippy::wildcard_enum_match_arm)]
pub mod request;
#[deny(clippy::wildcard_enum_match_arm)]
mod retention;
pub mod server;
mod shutdown;
mod side;
mod sidecar;
#[deny(clippy::wildcard_enum_match_arm)]
mod siem;
#[deny(clippy::wildcard_enum_match_arm)]
mod state;
#[deny(clippy::wildcard_enum_match_arm)]
mod store;
pub mod telemetry;
mod text;
mod tick;
pub mod tls;
pub use toolgate_trail as trail;
#[deny(clippy::wildcard_enum_match_arm)]
mod trust;
#[deny(clippy::wildcard_enum_match_arm)]
mod wire;
#[deny(clippy::wildcard_enum_match_arm)]
mod witness;
