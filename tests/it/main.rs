//! Integration tests: the real server on an ephemeral port over a fresh SQLite file, driven
//! through the generated gRPC client. One binary, so it links once.

// Tests and their helpers may unwrap: a panic is the failure report.
#![allow(clippy::unwrap_used, clippy::expect_used)]
// A scenario reads top to bottom; the 80-line bound is for the product's functions.
#![allow(clippy::too_many_lines)]

mod agents;
mod approvals;
mod archive;
mod audit;
mod auth;
mod bench;
mod checkpoints;
mod console;
mod decide;
mod disk;
mod docs;
mod execute;
mod exit_codes;
mod export_proofs;
mod facts;
mod faults;
mod fleet;
mod flows;
mod helpers;
mod hook;
mod identity;
mod invalid;
mod keyed;
mod layers;
mod listen;
mod never_allowed;
mod normalize;
mod otlp;
mod outcomes;
mod pins;
mod policy_cli;
mod properties;
mod reload;
mod retention;
mod schemas;
mod server;
mod shadow;
mod subscribe;
mod tlog_proof;
mod tls;
mod trail;
mod witnesses;
