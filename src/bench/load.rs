//! The closed-loop load: N callers, each sending its next call as soon as the last one was
//! answered, spread over the connections, for a fixed time.

use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// An `authorization` header value (`Bearer <token>`).
pub type Authorization = tonic::metadata::MetadataValue<tonic::metadata::Ascii>;

use hdrhistogram::Histogram;
use tonic::transport::Channel;
use tonic_health::pb::HealthCheckRequest;
use tonic_health::pb::health_client::HealthClient;

use crate::proto::gate_client::GateClient;
use crate::proto::{Actor, DecideRequest, ExecuteRequest, ExecutionStatus, Outcome};

/// What one caller does per iteration.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Call {
    /// The baseline: a health check, which does no work.
    Health,
    /// One Decide of a read tool.
    Decide,
    /// A full tool call: Decide, then Execute with the output.
    DecideExecute,
}

impl fmt::Display for Call {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Health => "health (baseline)",
            Self::Decide => "decide",
            Self::DecideExecute => "decide+execute",
        })
    }
}

/// What a run of one call measured.
#[derive(Debug)]
pub struct Sample {
    /// Iterations answered without error.
    pub calls: u64,
    /// Iterations that failed (a gRPC error, or a tool call that was not allowed).
    pub errors: u64,
    pub elapsed: Duration,
    /// Latency of each iteration in microseconds.
    pub latency_us: Histogram<u64>,
}

impl Sample {
    /// Iterations per second.
    pub fn rate(&self) -> f64 {
        self.calls as f64 / self.elapsed.as_secs_f64()
    }

    /// A latency quantile in microseconds.
    pub fn quantile_us(&self, q: f64) -> u64 {
        self.latency_us.value_at_quantile(q)
    }
}

#[allow(clippy::expect_used)] // see the INVARIANT inside
fn histogram() -> Histogram<u64> {
    // INVARIANT: valid bounds (1 µs to 10 min) and precision; larger values saturate.
    Histogram::new_with_bounds(1, 600_000_000, 3).expect("valid histogram bounds")
}

/// Runs `concurrency` callers of `call` for `duration`, with the `authorization` header
/// given.
pub async fn drive(
    channels: &[Channel],
    (concurrency, duration): (usize, Duration),
    call: Call,
    output_bytes: usize,
    authorization: Option<&Authorization>,
) -> Sample {
    let start = Instant::now();
    let deadline = start + duration;
    let output = "x".repeat(output_bytes);
    let tasks: Vec<_> = (0..concurrency)
        .map(|caller| {
            let channel = channels[caller % channels.len()].clone();
            let output = output.clone();
            let authorization = authorization.cloned();
            tokio::spawn(caller_loop(channel, (caller, call), deadline, output, authorization))
        })
        .collect();
    let mut sample =
        Sample { calls: 0, errors: 0, elapsed: Duration::ZERO, latency_us: histogram() };
    for task in tasks {
        if let Ok((calls, errors, latency)) = task.await {
            sample.calls += calls;
            sample.errors += errors;
            // Both histograms have the same bounds, so adding cannot fail.
            let _ = sample.latency_us.add(latency);
        }
    }
    sample.elapsed = start.elapsed();
    sample
}

async fn caller_loop(
    channel: Channel,
    (caller, call): (usize, Call),
    deadline: Instant,
    output: String,
    authorization: Option<Authorization>,
) -> (u64, u64, Histogram<u64>) {
    let mut health = HealthClient::new(channel.clone());
    let mut gate = GateClient::new(channel);
    let mut latency = histogram();
    let (mut calls, mut errors) = (0u64, 0u64);
    while Instant::now() < deadline {
        // Numbered across callers and runs of this process: no two calls are identical (the
        // default policy would stop a loop), and sessions turn over (it caps sessions too).
        let n = CALL_NUMBER.fetch_add(1, Ordering::Relaxed);
        let t0 = Instant::now();
        let ok = match call {
            Call::Health => health.check(HealthCheckRequest::default()).await.is_ok(),
            Call::Decide => gate
                .decide(authorized(decide_request(caller, n), authorization.as_ref()))
                .await
                .is_ok(),
            Call::DecideExecute => {
                tool_call(&mut gate, (caller, n), &output, authorization.as_ref()).await
            }
        };
        let us = u64::try_from(t0.elapsed().as_micros()).unwrap_or(u64::MAX);
        if ok {
            calls += 1;
            latency.saturating_record(us);
        } else {
            errors += 1;
        }
    }
    (calls, errors, latency)
}

/// Calls numbered across the process, in the order they are made.
static CALL_NUMBER: AtomicU64 = AtomicU64::new(0);

/// Calls numbered within one session: the bench's sessions stay far below the default policy's
/// cap of 10,000 calls.
const CALLS_PER_SESSION: u64 = 1000;

pub(super) fn decide_request(caller: usize, n: u64) -> DecideRequest {
    static RUN: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    let run = RUN.get_or_init(|| uuid::Uuid::now_v7().simple().to_string());
    DecideRequest {
        session_id: format!("bench-{run}-{caller}-{}", n / CALLS_PER_SESSION),
        actor: Some(Actor { id: format!("agent-{caller}"), ..Default::default() }),
        tool: "read".into(),
        args_json: format!(r#"{{"path":"src/lib.rs","offset":{n},"limit":200}}"#),
        ..Default::default()
    }
}

/// `message` as a request with the `authorization` header given.
fn authorized<T>(message: T, authorization: Option<&Authorization>) -> tonic::Request<T> {
    let mut request = tonic::Request::new(message);
    if let Some(value) = authorization {
        request.metadata_mut().insert("authorization", value.clone());
    }
    request
}

async fn tool_call(
    gate: &mut GateClient<Channel>,
    (caller, n): (usize, u64),
    output: &str,
    authorization: Option<&Authorization>,
) -> bool {
    let request = decide_request(caller, n);
    let args_json = request.args_json.clone();
    let Ok(decision) = gate.decide(authorized(request, authorization)).await else { return false };
    let decision = decision.into_inner();
    if decision.outcome() != Outcome::Allow {
        return false;
    }
    let report = ExecuteRequest {
        decision_id: decision.decision_id,
        args_json,
        duration_us: 250,
        status: ExecutionStatus::Ok as i32,
        output: Some(output.to_owned()),
        ..Default::default()
    };
    let executed = gate.execute(authorized(report, authorization)).await;
    matches!(executed, Ok(answer) if answer.get_ref().violation.is_empty())
}
