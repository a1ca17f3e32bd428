//! Prometheus metrics, counted where the truth is: the trail writer counts what it committed
//! (decisions by outcome, executions by status, violations, invalid requests), how long each
//! commit took and how many events it held, the queue behind it, and the trail's length.
//! `GET /metrics` on the HTTP side port serves them in the text format.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Mutex, PoisonError};
use std::time::Duration;

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::registry::Registry;

use crate::trail::{Event, Group, Kind};

#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
struct OutcomeLabels {
    outcome: String,
}

#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
struct StatusLabels {
    status: String,
}

#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ResultLabels {
    result: &'static str,
}

/// What became of a batch a follower handed to its sink.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Delivered {
    /// Taken (with the events the sink counts).
    Taken(u64),
    /// Refused by the destination's checks.
    Refused,
    /// Not delivered: the destination could not be reached, or failed.
    Failed,
}

/// The names a follower's metrics are registered under, `toolgate_<sink>_…` (the sink's name
/// is the prefix).
#[derive(Debug, Clone, Copy)]
pub struct SinkNames {
    /// The counter of delivered events (`shipped_events`), and its help.
    pub delivered: &'static str,
    pub delivered_help: &'static str,
    /// The `result` of a batch taken (`stored`, `acknowledged`).
    pub taken: &'static str,
    /// The destination, as the help texts name it (`the fleet store`).
    pub destination: &'static str,
    /// The gauge of the last seq the destination holds (`shipped_seq`, `watermark`).
    pub position: &'static str,
}

/// One follower's metrics: batches by result, events delivered, and how far behind it is.
#[derive(Debug, Clone)]
pub struct FollowerMetrics {
    taken: &'static str,
    delivered: Counter,
    batches: Family<ResultLabels, Counter>,
    lag_events: Gauge,
    lag_seconds: Gauge<f64, AtomicU64>,
    position: Gauge,
    refusing: Gauge,
}

impl FollowerMetrics {
    /// Counts a batch.
    pub fn batch(&self, result: Delivered) {
        let result = match result {
            Delivered::Taken(events) => {
                self.delivered.inc_by(events);
                self.refusing.set(0);
                self.taken
            }
            Delivered::Refused => {
                self.refusing.set(1);
                "refused"
            }
            Delivered::Failed => "failed",
        };
        self.batches.get_or_create(&ResultLabels { result }).inc();
    }

    /// How far the destination is behind the trail: the last seq it holds, the events after
    /// it, and the oldest one's age.
    pub fn lag(&self, through: i64, events: u64, seconds: f64) {
        self.position.set(through);
        self.lag_events.set(i64::try_from(events).unwrap_or(i64::MAX));
        self.lag_seconds.set(seconds);
    }
}

/// The metrics of one server.
#[derive(Debug)]
pub struct Metrics {
    /// Behind a lock so that the followers register their own metrics as they start.
    registry: Mutex<Registry>,
    decisions: Family<OutcomeLabels, Counter>,
    executions: Family<StatusLabels, Counter>,
    violations: Counter,
    invalid_requests: Counter,
    commit_failures: Counter,
    commit_seconds: Histogram,
    batch_events: Histogram,
    queue_depth: Gauge,
    trail_events: Gauge,
    tls_handshake_failures: Counter,
    tls_certificate_expiry: Gauge,
    /// The last commit failed: the trail takes nothing until one succeeds.
    failing: AtomicBool,
}

impl Default for Metrics {
    fn default() -> Self {
        let mut registry = Registry::with_prefix("toolgate");
        let decisions = Family::<OutcomeLabels, Counter>::default();
        let executions = Family::<StatusLabels, Counter>::default();
        let (violations, invalid_requests, commit_failures) =
            (Counter::default(), Counter::default(), Counter::default());
        // 50 µs to about 1.6 s: an fsync is 0.2–3 ms here, a stalled disk seconds.
        let commit_seconds = Histogram::new(exponential_buckets(0.000_05, 2.0, 16));
        let batch_events = Histogram::new(exponential_buckets(1.0, 2.0, 12));
        let (queue_depth, trail_events) = (Gauge::default(), Gauge::default());
        let (tls_handshake_failures, tls_certificate_expiry) =
            (Counter::default(), Gauge::default());
        registry.register("decisions", "Decisions committed, by outcome", decisions.clone());
        registry.register("executions", "Executions committed, by status", executions.clone());
        registry.register("violations", "Executions that broke their decision", violations.clone());
        registry.register(
            "invalid_requests",
            "Requests refused as malformed",
            invalid_requests.clone(),
        );
        registry.register(
            "commit_failures",
            "Groups the trail could not commit (callers got UNAVAILABLE)",
            commit_failures.clone(),
        );
        registry.register(
            "commit_seconds",
            "Time to commit one group to the trail",
            commit_seconds.clone(),
        );
        registry.register("batch_events", "Events per committed group", batch_events.clone());
        registry.register(
            "writer_queue_depth",
            "Appends waiting for the trail writer",
            queue_depth.clone(),
        );
        registry.register(
            "trail_events",
            "Events on the trail (the last seq)",
            trail_events.clone(),
        );
        registry.register(
            "tls_handshake_failures",
            "Connections closed because their TLS handshake failed or timed out",
            tls_handshake_failures.clone(),
        );
        registry.register(
            "tls_certificate_expiry_timestamp_seconds",
            "When the server certificate in force expires (Unix time)",
            tls_certificate_expiry.clone(),
        );
        Self {
            registry: Mutex::new(registry),
            decisions,
            executions,
            violations,
            invalid_requests,
            commit_failures,
            commit_seconds,
            batch_events,
            queue_depth,
            trail_events,
            tls_handshake_failures,
            tls_certificate_expiry,
            failing: AtomicBool::new(false),
        }
    }
}

impl Metrics {
    /// Counts a committed group.
    pub fn committed<'a>(&self, events: impl IntoIterator<Item = &'a Event>, elapsed: Duration) {
        self.failing.store(false, Ordering::Relaxed);
        self.commit_seconds.observe(elapsed.as_secs_f64());
        let (mut count, mut last) = (0, None);
        for event in events {
            count += 1;
            last = Some(event.seq);
            let record = &event.record;
            let label = |value: &Option<String>| value.clone().unwrap_or_default();
            match record.kind.group() {
                Group::Decision => {
                    let outcome = record.outcome.map_or("", |o| o.as_str()).to_owned();
                    let labels = OutcomeLabels { outcome };
                    self.decisions.get_or_create(&labels).inc();
                }
                Group::Execution => {
                    let labels = StatusLabels { status: label(&record.status) };
                    self.executions.get_or_create(&labels).inc();
                }
                Group::Violation => {
                    self.violations.inc();
                }
                Group::Refusal if record.kind == Kind::InvalidRequest => {
                    self.invalid_requests.inc();
                }
                // Counted elsewhere (approvals, refusals by the guard) or not at all.
                Group::Refusal | Group::Approval | Group::Keeping => {}
            }
        }
        self.batch_events.observe(f64::from(count));
        if let Some(seq) = last {
            self.trail_events.set(seq);
        }
    }

    /// Counts a group that could not be committed.
    pub fn commit_failed(&self) {
        self.failing.store(true, Ordering::Relaxed);
        self.commit_failures.inc();
    }

    /// The trail's length when the writer starts.
    pub fn trail_length(&self, seq: i64) {
        self.trail_events.set(seq);
    }

    /// Appends waiting behind the group being committed.
    pub fn queue_depth(&self, depth: usize) {
        self.queue_depth.set(i64::try_from(depth).unwrap_or(i64::MAX));
    }

    /// Counts a connection whose TLS handshake failed.
    pub fn tls_handshake_failed(&self) {
        self.tls_handshake_failures.inc();
    }

    /// The expiry (Unix seconds) of the server certificate now in force.
    pub fn tls_certificate_expiry(&self, not_after: i64) {
        self.tls_certificate_expiry.set(not_after);
    }

    /// Registers the metrics of the follower of sink `prefix` under `names`.
    pub fn follower(&self, prefix: &str, names: SinkNames) -> FollowerMetrics {
        let metrics = FollowerMetrics {
            taken: names.taken,
            delivered: Counter::default(),
            batches: Family::default(),
            lag_events: Gauge::default(),
            lag_seconds: Gauge::default(),
            position: Gauge::default(),
            refusing: Gauge::default(),
        };
        let to = names.destination;
        let mut registry = self.registry.lock().unwrap_or_else(PoisonError::into_inner);
        let registry = registry.sub_registry_with_prefix(prefix);
        registry.register(names.delivered, names.delivered_help, metrics.delivered.clone());
        registry.register(
            "batches",
            format!("Batches sent to {to}, by result ({}, refused, failed)", names.taken),
            metrics.batches.clone(),
        );
        registry.register(
            "lag_events",
            format!("Events on the trail that {to} does not hold yet"),
            metrics.lag_events.clone(),
        );
        registry.register(
            "lag_seconds",
            format!("Age of the oldest event {to} does not hold yet (0 when caught up)"),
            metrics.lag_seconds.clone(),
        );
        registry.register(
            names.position,
            format!("The last seq of the trail that {to} holds"),
            metrics.position.clone(),
        );
        registry.register(
            "refusing",
            format!(
                "1 while {to} refuses what it is sent (nothing moves there until someone acts: \
                 the log says what), 0 once it takes a batch"
            ),
            metrics.refusing.clone(),
        );
        metrics
    }

    /// Registers a counter of a follower's own (`toolgate_<name>_total`).
    pub fn counter(&self, name: &str, help: &str) -> Counter {
        let counter = Counter::default();
        let mut registry = self.registry.lock().unwrap_or_else(PoisonError::into_inner);
        registry.register(name, help, counter.clone());
        counter
    }

    /// Registers a gauge (`toolgate_<name>`).
    pub fn gauge(&self, name: &str, help: &str) -> Gauge {
        let gauge = Gauge::default();
        let mut registry = self.registry.lock().unwrap_or_else(PoisonError::into_inner);
        registry.register(name, help, gauge.clone());
        gauge
    }

    /// Registers a gauge of fractions (`toolgate_<name>`).
    pub fn gauge_f64(&self, name: &str, help: &str) -> Gauge<f64, AtomicU64> {
        let gauge = Gauge::default();
        let mut registry = self.registry.lock().unwrap_or_else(PoisonError::into_inner);
        registry.register(name, help, gauge.clone());
        gauge
    }

    /// Whether the last commit failed (until the next one succeeds).
    pub fn trail_failing(&self) -> bool {
        self.failing.load(Ordering::Relaxed)
    }

    /// The metrics in the Prometheus text format.
    #[allow(clippy::expect_used)] // see the INVARIANT inside
    pub fn encode(&self) -> String {
        let mut text = String::new();
        // INVARIANT: writing to a String cannot fail.
        let registry = self.registry.lock().unwrap_or_else(PoisonError::into_inner);
        prometheus_client::encoding::text::encode(&mut text, &registry)
            .expect("encoding to a string");
        text
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trail::Record;

    fn event(seq: i64, record: Record) -> Event {
        Event {
            seq,
            event_id: String::new(),
            ts: String::new(),
            record,
            prev_hash: String::new(),
            hash: String::new(),
        }
    }

    #[test]
    fn a_committed_group_is_counted_by_kind_outcome_and_status() {
        let metrics = Metrics::default();
        let decision =
            Record { outcome: Some(crate::trail::Outcome::Deny), ..Record::new(Kind::Decision) };
        let execution = Record { status: Some("ok".into()), ..Record::new(Kind::Execution) };
        metrics.committed(
            &[event(7, decision), event(8, execution), event(9, Record::new(Kind::Violation))],
            Duration::from_millis(1),
        );

        let text = metrics.encode();
        assert!(text.contains("toolgate_decisions_total{outcome=\"deny\"} 1"), "{text}");
        assert!(text.contains("toolgate_executions_total{status=\"ok\"} 1"), "{text}");
        assert!(text.contains("toolgate_violations_total 1"), "{text}");
        assert!(text.contains("toolgate_trail_events 9"), "{text}");
        assert!(text.contains("toolgate_batch_events_count 1"), "{text}");
    }
}
