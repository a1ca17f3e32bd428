//! Closed-loop clients that remember every acknowledged decision: `(seq, decision_id)`.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use tokio::task::JoinHandle;
use toolgate::proto::Outcome;

use super::Proc;
use crate::helpers::request;

/// What the clients saw.
#[derive(Debug, Default)]
pub struct Tally {
    /// Every answered Decide: `(seq, decision_id)`.
    pub acked: Vec<(i64, String)>,
    /// Refused calls by gRPC code.
    pub refused: BTreeMap<String, u64>,
    /// An allow answered without a `seq` (must never happen).
    pub allowed_unrecorded: u64,
    /// Latency of each answered call.
    pub latencies: Vec<Duration>,
}

impl Tally {
    pub fn refused(&self, code: tonic::Code) -> u64 {
        self.refused.get(&format!("{code:?}")).copied().unwrap_or(0)
    }

    /// The `q` quantile of the answered calls' latency.
    pub fn latency(&self, q: f64) -> Duration {
        let mut sorted = self.latencies.clone();
        sorted.sort();
        sorted.get(((sorted.len() as f64 - 1.0) * q) as usize).copied().unwrap_or_default()
    }
}

/// Running clients.
pub struct Load {
    stop: Arc<AtomicBool>,
    tasks: Vec<JoinHandle<Tally>>,
}

static CALL: AtomicU64 = AtomicU64::new(0);

impl Load {
    /// `clients` closed-loop callers of Decide, each on its own connection, each call with
    /// arguments never seen before (no loop detection).
    pub async fn start(proc: &Proc, clients: usize) -> Self {
        Self::run(proc, clients, None).await
    }

    /// `clients` callers that each call at most once every `interval`.
    pub async fn paced(proc: &Proc, clients: usize, interval: Duration) -> Self {
        Self::run(proc, clients, Some(interval)).await
    }

    async fn run(proc: &Proc, clients: usize, interval: Option<Duration>) -> Self {
        let stop = Arc::new(AtomicBool::new(false));
        let mut tasks = Vec::new();
        for client in 0..clients {
            let mut gate = proc.gate().await;
            let stop = stop.clone();
            tasks.push(tokio::spawn(async move {
                let mut tally = Tally::default();
                let mut ticks = interval.map(tokio::time::interval);
                while !stop.load(Ordering::Relaxed) {
                    if let Some(ticks) = &mut ticks {
                        ticks.tick().await;
                    }
                    let n = CALL.fetch_add(1, Ordering::Relaxed);
                    let mut req = request("read");
                    req.session_id = format!("load-{client}-{}", n / 1000);
                    req.args_json = format!(r#"{{"path":"/src/file{n}.rs"}}"#);
                    let started = Instant::now();
                    match gate.decide(req).await {
                        Ok(answer) => {
                            let answer = answer.into_inner();
                            if answer.outcome() == Outcome::Allow && answer.seq == 0 {
                                tally.allowed_unrecorded += 1;
                            }
                            tally.latencies.push(started.elapsed());
                            tally.acked.push((answer.seq as i64, answer.decision_id));
                        }
                        Err(status) => {
                            *tally.refused.entry(format!("{:?}", status.code())).or_default() += 1;
                            tokio::time::sleep(Duration::from_millis(5)).await;
                        }
                    }
                }
                tally
            }));
        }
        Self { stop, tasks }
    }

    /// Stops the clients and adds up what they saw.
    pub async fn stop(self) -> Tally {
        self.stop.store(true, Ordering::Relaxed);
        let mut total = Tally::default();
        for task in self.tasks {
            let tally = task.await.unwrap();
            total.acked.extend(tally.acked);
            total.allowed_unrecorded += tally.allowed_unrecorded;
            total.latencies.extend(tally.latencies);
            for (code, n) in tally.refused {
                *total.refused.entry(code).or_default() += n;
            }
        }
        total
    }
}
