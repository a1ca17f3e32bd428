//! `toolgate bench`: measures the server against its own health-check baseline and prints the
//! figures (BENCHMARKS.md records them, with the command).

use std::path::Path;
use std::time::Duration;

use anyhow::Context;
use clap::Args;

use super::Exit;
use super::remote::endpoint;
use super::serve::parse_durability;
use crate::bench::{self, Call, Figure, ServerProcess};
use crate::config::Durability;

/// Arguments of `toolgate bench`.
#[derive(Debug, Args)]
pub struct BenchArgs {
    /// Benchmark this running server (`host:port`, `http://host:port`, or `https://…` with
    /// `TOOLGATE_CA_CERT`) instead of starting one per durability on a fresh database; with its
    /// auth on, the calls carry `TOOLGATE_TOKEN`'s token.
    #[arg(long)]
    pub server: Option<String>,
    /// Seconds each figure is measured for.
    #[arg(long, default_value_t = 5.0)]
    pub duration: f64,
    /// Concurrent callers, as a list.
    #[arg(long, value_delimiter = ',', default_value = "1,16,64")]
    pub concurrency: Vec<usize>,
    /// HTTP/2 connections the callers share.
    #[arg(long, default_value_t = 4)]
    pub connections: usize,
    /// Durability settings to start servers with, as a list.
    #[arg(long, value_delimiter = ',', default_value = "full,normal", value_parser = parse_durability)]
    pub durability: Vec<Durability>,
    /// Also compare Decide on an empty trail with Decide on a trail of this many events.
    #[arg(long, default_value_t = 0)]
    pub growth: usize,
    /// What to measure beside the baseline: `decide`, `tool-call` (Decide then Execute).
    #[arg(long, value_delimiter = ',', default_value = "decide,tool-call", value_parser = parse_call)]
    pub calls: Vec<Call>,
    /// Measure the auditors' side instead: query, export and verify on a trail of this many
    /// events (made once in `--audit-db`, or in a temporary file).
    #[arg(long)]
    pub audit: Option<usize>,
    /// The trail file for `--audit`; filled up to `--audit` events when it holds fewer.
    #[arg(long, requires = "audit")]
    pub audit_db: Option<std::path::PathBuf>,
    /// Measure policy evaluation in process instead (facts included): the default policy and a
    /// generated set of this many policies.
    #[arg(long)]
    pub policy_eval: Option<usize>,
    /// Decisions timed per policy set with `--policy-eval`.
    #[arg(long, default_value_t = 200_000, requires = "policy_eval")]
    pub iterations: usize,
    /// Bytes of tool output each Execute reports.
    #[arg(long, default_value_t = 1024)]
    pub output_bytes: usize,
    /// Measure the console instead: each page's render time on a trail of this many events
    /// (made once in `--console-db`, or in a temporary file), beside `/healthz`.
    #[arg(long)]
    pub console: Option<usize>,
    /// The trail file for `--console`; filled with `--console` events when it does not exist.
    #[arg(long, requires = "console")]
    pub console_db: Option<std::path::PathBuf>,
    /// Measure the OTLP exporter instead: this many pairs of Decide rounds against fresh
    /// servers, the exporter off then on (to an in-process collector), with the collector's lag.
    #[arg(long)]
    pub otlp: Option<usize>,
}

fn parse_call(value: &str) -> Result<Call, String> {
    match value {
        "decide" => Ok(Call::Decide),
        "tool-call" => Ok(Call::DecideExecute),
        other => Err(format!("`{other}` is not `decide` or `tool-call`")),
    }
}

/// What `toolgate bench` measures: one of the modes its flags choose.
enum Mode {
    /// `--policy-eval N`: policy evaluation in process.
    PolicyEval(usize),
    /// `--otlp N`: the OTLP exporter, off then on, N times.
    Otlp(usize),
    /// `--console N`: the console's pages on a trail of N events.
    Console(usize),
    /// `--audit N`: query, export and verify on a trail of N events.
    Audit(usize),
    /// `--server URL`: a running server.
    Server(String),
    /// Fresh servers, one per durability.
    Fresh,
}

impl Mode {
    fn of(args: &BenchArgs) -> Self {
        match (args.policy_eval, args.otlp, args.console, args.audit, &args.server) {
            (Some(policies), ..) => Self::PolicyEval(policies),
            (_, Some(rounds), ..) => Self::Otlp(rounds),
            (_, _, Some(events), ..) => Self::Console(events),
            (_, _, _, Some(events), _) => Self::Audit(events),
            (_, _, _, _, Some(url)) => Self::Server(url.clone()),
            _ => Self::Fresh,
        }
    }
}

/// Runs the benchmark and prints its figures.
pub async fn bench(args: BenchArgs) -> anyhow::Result<Exit> {
    let duration = Duration::from_secs_f64(args.duration);
    match Mode::of(&args) {
        Mode::PolicyEval(policies) => policy_eval(policies, args.iterations)?,
        Mode::Otlp(rounds) => otlp(&args, rounds, duration).await?,
        Mode::Console(events) => console(events, args.console_db.as_deref()).await?,
        Mode::Audit(events) => audit(events, args.audit_db.as_deref()).await?,
        Mode::Server(url) => {
            print_setup(&args);
            server(&args, &url, duration).await?;
        }
        Mode::Fresh => {
            print_setup(&args);
            fresh(&args, duration).await?;
            if args.growth > 0 {
                growth(&args, duration).await?;
            }
        }
    }
    Ok(Exit::Ok)
}

/// Policy evaluation in process, facts included: the default policy, `policies` generated
/// ones, and the same for sessions that read data classes; then the input schema check.
fn policy_eval(policies: usize, iterations: usize) -> anyhow::Result<()> {
    let generated = bench::policy::generated(policies)?;
    let runs = [
        (crate::policy::PolicyEngine::embedded(), false, ""),
        (generated, false, ""),
        (bench::policy::generated(policies)?, true, ", sessions that read 2 data classes"),
    ];
    for (engine, tainted, sessions) in runs {
        let figures = bench::policy::measure(&engine, iterations, tainted);
        println!(
            "policy evaluation, facts included, {} policies{sessions}: median {:.1} µs, p99 {:.1} µs",
            figures.policies,
            figures.median_ns as f64 / 1e3,
            figures.p99_ns as f64 / 1e3
        );
    }
    let [alone, normalized] = bench::policy::measure_schema(iterations);
    for (what, (median, p99)) in [
        ("input schema check", alone),
        ("normalization (path, lowercase; the arguments copied) and schema check", normalized),
    ] {
        println!(
            "{what}, typical write tool, matching arguments: median {:.1} µs, p99 {:.1} µs",
            median as f64 / 1e3,
            p99 as f64 / 1e3
        );
    }
    Ok(())
}

/// The OTLP exporter: `rounds` pairs of Decide rounds against fresh servers, off then on.
async fn otlp(args: &BenchArgs, rounds: usize, duration: Duration) -> anyhow::Result<()> {
    let concurrency = args.concurrency.iter().copied().max().unwrap_or(64);
    println!(
        "OTLP export: decide at concurrency {concurrency}, {:.0} s a round, exporter off then on, {rounds} times",
        args.duration
    );
    let figures =
        bench::otlp::measure_export(concurrency, args.connections, duration, rounds).await?;
    for round in &figures {
        let lag = match round.exporting {
            true => format!(
                ", collector at most {} events behind, caught up {:.2} s after the load stopped; \
                 a lone Decide's event at the collector after p50 {:.2} ms, max {:.2} ms",
                round.max_lag,
                round.drained.as_secs_f64(),
                round
                    .after_commit
                    .get(round.after_commit.len() / 2)
                    .map_or(0.0, |d| d.as_secs_f64() * 1e3),
                round.after_commit.last().map_or(0.0, |d| d.as_secs_f64() * 1e3),
            ),
            false => String::new(),
        };
        println!(
            "exporter {}: {:.0} decides/s ({:.3} of baseline), server CPU {:.1} µs per event{lag}",
            if round.exporting { "on " } else { "off" },
            round.rate,
            round.vs_baseline,
            round.cpu_us_per_event
        );
    }
    let mean = |on: bool| {
        let rates: Vec<f64> =
            figures.iter().filter(|r| r.exporting == on).map(|r| r.vs_baseline).collect();
        rates.iter().sum::<f64>() / rates.len().max(1) as f64
    };
    println!("exporter on / off, baseline-relative: {:.3}", mean(true) / mean(false));
    let raw = |on: bool| {
        let rates: Vec<f64> =
            figures.iter().filter(|r| r.exporting == on).map(|r| r.rate).collect();
        rates.iter().sum::<f64>() / rates.len().max(1) as f64
    };
    println!("exporter on / off, decides per second: {:.3}", raw(true) / raw(false));
    Ok(())
}

/// The console's pages on a trail of `events` (made once in `db`, or in a temporary file).
async fn console(events: usize, db: Option<&Path>) -> anyhow::Result<()> {
    let dir = tempfile::tempdir()?;
    let db = db.map_or_else(|| dir.path().join("console.db"), Path::to_path_buf);
    let figures = bench::console::measure(&db, events).await?;
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    println!("\nconsole: a trail of {} events ({})", figures.events, db.display());
    println!(
        "the server served after {:.1} s; then the last day was counted in {:.1} s, the chain \
         verified whole in {:.1} s",
        figures.start.as_secs_f64(),
        figures.counted.as_secs_f64(),
        figures.verified.as_secs_f64()
    );
    println!("baseline: GET /healthz round trip, median {:.2} ms", ms(figures.baseline));
    println!(
        "{:<36} {:>12} {:>12} {:>14} {:>12}",
        "page", "server p50", "server max", "round trip p50", "vs baseline"
    );
    for page in &figures.pages {
        println!(
            "{:<36} {:>9.2} ms {:>9.2} ms {:>11.2} ms {:>12.1}",
            page.page,
            ms(page.server.0),
            ms(page.server.1),
            ms(page.round_trip),
            page.round_trip.as_secs_f64() / figures.baseline.as_secs_f64().max(1e-9)
        );
    }
    Ok(())
}

/// The machine and the load the figures are measured with.
fn print_setup(args: &BenchArgs) {
    let cores = std::thread::available_parallelism().map_or(0, |n| n.get());
    println!(
        "toolgate bench: {cores} cores, {} connections, {:.1} s per figure, load generator on the same machine",
        args.connections, args.duration
    );
}

/// A running server at `url`, with `TOOLGATE_TOKEN`'s token when its auth is on.
async fn server(args: &BenchArgs, url: &str, duration: Duration) -> anyhow::Result<()> {
    let calls = (args.concurrency.as_slice(), args.calls.as_slice());
    let channels = bench::connect(&endpoint(url)?, args.connections).await?;
    // A server with auth on takes the calls with TOOLGATE_TOKEN's token.
    let token = std::env::var("TOOLGATE_TOKEN").ok().filter(|t| !t.trim().is_empty());
    let authorization = token.map(|t| format!("Bearer {}", t.trim()).parse()).transpose();
    let authorization = authorization.context("TOOLGATE_TOKEN is no header value")?;
    let figures =
        bench::measure(&channels, calls, duration, args.output_bytes, authorization.as_ref()).await;
    println!("\nserver {url}");
    print_figures(&figures);
    Ok(())
}

/// A fresh server for each durability, its memory and its trail's size after the run.
async fn fresh(args: &BenchArgs, duration: Duration) -> anyhow::Result<()> {
    let calls = (args.concurrency.as_slice(), args.calls.as_slice());
    for &durability in &args.durability {
        let dir = tempfile::tempdir()?;
        let db = dir.path().join("bench.db");
        let server = ServerProcess::start(&db, durability).await?;
        let channels = bench::connect(&endpoint(&server.url)?, args.connections).await?;
        let figures = bench::measure(&channels, calls, duration, args.output_bytes, None).await;
        let memory = server.memory_kib();
        drop(channels);
        server.stop().await;
        println!("\ndurability = \"{}\"", durability_name(durability));
        print_figures(&figures);
        if let Some((rss, peak)) = memory {
            println!(
                "server memory: {} MiB resident at the end, {} MiB at the peak",
                rss / 1024,
                peak / 1024
            );
        }
        if let Some((events, bytes, index)) = trail_size(&db)? {
            println!(
                "trail: {events} events, {bytes} bytes on disk, {} bytes per event; its index \
                 {index} bytes, {} per event",
                bytes / events.max(1),
                index / events.max(1)
            );
        }
    }
    Ok(())
}

/// Decide throughput on an empty trail and on one of `args.growth` events, back to back.
async fn growth(args: &BenchArgs, duration: Duration) -> anyhow::Result<()> {
    let concurrency = args.concurrency.iter().copied().max().unwrap_or(1);
    let mut rates = Vec::new();
    for events in [0, args.growth] {
        let dir = tempfile::tempdir()?;
        let db = dir.path().join("bench.db");
        if events > 0 {
            let started = std::time::Instant::now();
            bench::prefill(&db, events).await.context("cannot prefill the trail")?;
            println!("\nprefilled {events} events in {:.1} s", started.elapsed().as_secs_f64());
        }
        let server = ServerProcess::start(&db, Durability::Full).await?;
        let channels = bench::connect(&endpoint(&server.url)?, args.connections).await?;
        let figures =
            bench::measure(&channels, (&[concurrency], &[Call::Decide]), duration, 0, None).await;
        drop(channels);
        server.stop().await;
        let decide = &figures[1];
        println!(
            "growth: trail of {events} events: decide at concurrency {concurrency}: {:.0}/s ({:.2} of baseline), p99 {} µs",
            decide.sample.rate(),
            decide.vs_baseline,
            decide.sample.quantile_us(0.99)
        );
        rates.push(decide.vs_baseline);
    }
    if let [empty, full] = rates[..] {
        println!("growth: the full trail's ratio is {:.2} of the empty trail's", full / empty);
    }
    Ok(())
}

/// The auditors' figures on a trail of `events` events.
async fn audit(events: usize, db: Option<&Path>) -> anyhow::Result<()> {
    let dir = tempfile::tempdir()?;
    let db = db.map_or_else(|| dir.path().join("audit.db"), Path::to_path_buf);
    let existing = match crate::store::Reader::open(&db).await {
        Ok(reader) => {
            let n = reader.count(&crate::trail::Filter::default()).await.unwrap_or(0);
            reader.close().await;
            n as usize
        }
        Err(_) => 0,
    };
    if existing < events {
        let started = std::time::Instant::now();
        bench::prefill(&db, events - existing).await.context("cannot fill the trail")?;
        println!("filled {} events in {:.1} s", events - existing, started.elapsed().as_secs_f64());
    }
    let figures = bench::audit::measure(&db).await?;
    println!(
        "
audit: a trail of {} events ({})",
        figures.events,
        db.display()
    );
    for (name, median, slowest) in &figures.first_page {
        println!(
            "first page (100 events) of a query by {name:<21} median {:>7.2} ms, slowest of 21 {:>7.2} ms",
            median.as_secs_f64() * 1e3,
            slowest.as_secs_f64() * 1e3
        );
    }
    println!("export to CSV: {:.0} rows/s", figures.export_rows_per_s);
    println!(
        "export to CSV with each row's tlog-proof: {:.0} rows/s ({:.2}x the plain export), {:.0} bytes of proof a row",
        figures.export_with_proofs_rows_per_s,
        figures.export_with_proofs_rows_per_s / figures.export_rows_per_s.max(f64::MIN_POSITIVE),
        figures.proof_bytes_per_row
    );
    println!("verify the chain and its tree: {:.0} events/s", figures.verify_events_per_s);
    let (median, slowest) = figures.inclusion_proof;
    println!(
        "inclusion proof and root in the whole tree: median {:.0} µs, slowest of 1000 {:.0} µs",
        median.as_secs_f64() * 1e6,
        slowest.as_secs_f64() * 1e6
    );
    let (median, slowest) = figures.tlog_proof;
    println!(
        "one event's tlog-proof (event, inclusion proof, bundle): median {:.0} µs, slowest of 1000 {:.0} µs",
        median.as_secs_f64() * 1e6,
        slowest.as_secs_f64() * 1e6
    );
    Ok(())
}

fn print_figures(figures: &[Figure]) {
    println!(
        "{:<20} {:>5} {:>10} {:>8} {:>8} {:>9} {:>7} {:>12}",
        "call", "conc", "per s", "p50 µs", "p99 µs", "p99.9 µs", "errors", "vs baseline"
    );
    for f in figures {
        println!(
            "{:<20} {:>5} {:>10.0} {:>8} {:>8} {:>9} {:>7} {:>12.2}",
            f.call.to_string(),
            f.concurrency,
            f.sample.rate(),
            f.sample.quantile_us(0.5),
            f.sample.quantile_us(0.99),
            f.sample.quantile_us(0.999),
            f.sample.errors,
            f.vs_baseline
        );
    }
}

/// Events on the trail, bytes of its files (database and WAL) and of its index's.
fn trail_size(db: &Path) -> anyhow::Result<Option<(u64, u64, u64)>> {
    let conn = rusqlite::Connection::open(db)?;
    let events: i64 = conn.query_row("SELECT count(*) FROM events", [], |r| r.get(0))?;
    drop(conn);
    let size = |suffix: &str| {
        std::fs::metadata(format!("{}{suffix}", db.display())).map_or(0, |m| m.len())
    };
    let (trail, index) = (size("") + size("-wal"), size("-index") + size("-index-wal"));
    Ok(Some((events.unsigned_abs(), trail, index)))
}

fn durability_name(durability: Durability) -> &'static str {
    match durability {
        Durability::Full => "full",
        Durability::Normal => "normal",
    }
}
