//! The benchmark behind `toolgate bench`: a closed-loop load generator over the generated gRPC
//! client, run against a server it starts itself (a child `toolgate serve` on a fresh database)
//! or one it is pointed at. Every figure is measured beside a baseline on the same server and
//! connections — the health `Check` call, which does no work — because absolute numbers on a
//! shared two-core machine drift from run to run; the ratio is what compares.

pub mod audit;
pub mod console;
mod load;
pub mod otlp;
pub mod policy;
mod prefill;
mod process;

use std::time::Duration;

use tonic::transport::{Channel, Endpoint};

pub use load::{Authorization, Call, Sample};
pub use prefill::prefill;
pub use process::ServerProcess;

/// One measured figure.
#[derive(Debug)]
pub struct Figure {
    pub call: Call,
    pub concurrency: usize,
    pub sample: Sample,
    /// Calls per second of this figure over the baseline's, at the same concurrency.
    pub vs_baseline: f64,
}

/// Measures the baseline and each call at each concurrency, in that order; the calls with the
/// `authorization` header given (the baseline needs none).
pub async fn measure(
    channels: &[Channel],
    (concurrencies, calls): (&[usize], &[Call]),
    duration: Duration,
    output_bytes: usize,
    authorization: Option<&Authorization>,
) -> Vec<Figure> {
    let mut figures = Vec::new();
    for &concurrency in concurrencies {
        let baseline = load::drive(channels, (concurrency, duration), Call::Health, 0, None).await;
        let base_rate = baseline.rate();
        figures.push(Figure {
            call: Call::Health,
            concurrency,
            sample: baseline,
            vs_baseline: 1.0,
        });
        for &call in calls {
            let sample =
                load::drive(channels, (concurrency, duration), call, output_bytes, authorization)
                    .await;
            let vs_baseline = if base_rate > 0.0 { sample.rate() / base_rate } else { 0.0 };
            figures.push(Figure { call, concurrency, sample, vs_baseline });
        }
    }
    figures
}

/// Opens `connections` HTTP/2 connections (over TLS if the endpoint says so).
pub async fn connect(
    endpoint: &Endpoint,
    connections: usize,
) -> Result<Vec<Channel>, tonic::transport::Error> {
    let mut channels = Vec::with_capacity(connections);
    for _ in 0..connections.max(1) {
        channels.push(endpoint.connect().await?);
    }
    Ok(channels)
}
