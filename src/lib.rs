//! toolgate: a policy decision point and an append-only, hash-chained audit trail for the tool
//! calls of AI agents, served over gRPC as a sidecar.
//!
//! An agent harness asks [`Gate`](proto::gate_server::Gate) `Decide` before it runs a
//! tool and reports with `Execute` after it ran. Every decision and every execution is committed
//! to the SQLite trail before the caller hears the answer.
//!
//! # Layout
//!
//! - [`config`]: the configuration file and its defaults (tools, actors, caps, limits).
//! - [`registry`]: the tool registry: each tool's safety level and default action.
//! - [`request`]: turns wire requests into validated, normalized requests (canonical arguments,
//!   their hash, limits); every rejection names its field.
//! - [`facts`]: per-session and per-actor counts (loops, caps, rates) handed to the policy.
//! - [`policy`]: Cedar policy evaluation of a normalized request into an outcome and a reason.
//! - [`auth`]: bearer tokens and client certificates, their roles and the actor ids they may act
//!   as; refusals recorded.
//! - [`tls`]: TLS and mutual TLS on the gRPC port, reloaded without a restart, and the names a
//!   client certificate carries.
//! - [`approvals`]: the calls waiting for a person's verdict, their expiry and their rebuild
//!   from the trail.
//! - [`gate`]: the Decide/Execute logic: policy, pairing of executions with decisions, output
//!   processing, and what goes on the trail.
//! - [`trail`]: the event model, its canonical encoding and hash chain, its CSV form, and chain
//!   verification.
//! - [`store`]: the SQLite file: migrations, the single group-committing writer, its
//!   checkpointer, read-only reads.
//! - [`proto`]: the Rust code generated from `proto/toolgate/v1/*.proto`.
//! - [`grpc`]: the tonic services (Gate, Approvals, Audit, Admin) over [`gate`] and [`audit`], health and
//!   reflection.
//! - [`hook`]: adapters from agent harnesses' hooks (Claude Code) to Decide and Execute.
//! - [`http`]: the HTTP side port: metrics, health probes and the hook endpoints.
//! - [`listener`]: where gRPC is served: a TCP address or a unix socket.
//! - [`metrics`]: Prometheus metrics, counted by the trail writer as it commits.
//! - [`server`]: binds everything together and serves until shut down.
//! - [`audit`]: what auditors do with the trail: CSV export with a manifest, and verification of
//!   the trail and of exports.
//! - [`bench`](mod@bench): `toolgate bench`: the load generator, and the audit and policy measurements.
//! - [`cli`]: the `toolgate` command line, one file per subcommand.
//! - [`error`], [`shutdown`], [`telemetry`]: the service error and its gRPC status, signal
//!   handling, and logging.

pub mod approvals;
pub mod audit;
pub mod auth;
pub mod bench;
pub mod cli;
pub mod config;
pub mod error;
pub mod facts;
pub mod gate;
pub mod grpc;
pub mod hook;
pub mod http;
pub mod listener;
pub mod metrics;
pub mod policy;
pub mod proto;
pub mod registry;
pub mod request;
pub mod server;
pub mod shutdown;
pub mod store;
pub mod telemetry;
pub mod tls;
pub mod trail;
