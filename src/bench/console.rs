//! The console's figures: how long each page takes the server to render (its own
//! `Server-Timing`) on a trail of N events, beside a round trip to `/healthz` on the same side
//! port in the same run, and how long after a start the overview's followers have counted the
//! trail's last day and verified its chain.

use std::path::Path;
use std::time::{Duration, Instant};

use anyhow::Context;

use super::ServerProcess;
use super::prefill::{self, prefill_with};
use crate::config::Durability;
use crate::trail::{Kind, Outcome, Record};

/// Requests timed per page.
const SAMPLES: usize = 21;

/// One page's figures.
#[derive(Debug)]
pub struct PageFigures {
    pub page: String,
    /// The server's own time (`Server-Timing`): median and slowest.
    pub server: (Duration, Duration),
    /// The whole round trip, median.
    pub round_trip: Duration,
}

/// The figures.
#[derive(Debug)]
pub struct ConsoleFigures {
    pub events: u64,
    /// How long the server took to start serving on the trail (its own rebuilds from the
    /// trail included).
    pub start: Duration,
    /// After the server started serving: until the overview's day of activity was counted,
    /// and until its chain was verified whole.
    pub counted: Duration,
    pub verified: Duration,
    /// `/healthz`'s round trip, median: the baseline.
    pub baseline: Duration,
    pub pages: Vec<PageFigures>,
}

/// An event of a busy trail: decisions (one in five denied), each tenth event the execution of
/// the decision before it, and a violation in every thousand.
fn mixed(n: usize) -> Record {
    let decision = prefill::record(n);
    match n % 1000 {
        999 => Record {
            decision_id: Some(format!("bench-{}", n - 1)),
            reason: Some("executed with other arguments than decided".into()),
            ..Record::new(Kind::Violation)
        },
        _ if n % 10 == 9 => Record {
            decision_id: Some(format!("bench-{}", n - 1)),
            status: Some("ok".into()),
            duration_us: Some(1500),
            result_bytes: Some(1024),
            truncated: Some(0),
            ..Record::new(Kind::Execution)
        },
        _ if n % 5 == 1 => Record {
            decision_id: Some(format!("bench-{n}")),
            tool: Some(format!("tool-{}", n % 7)),
            outcome: Some(Outcome::Deny),
            reason: Some("unknown tool".into()),
            ..decision
        },
        _ => Record { decision_id: Some(format!("bench-{n}")), ..decision },
    }
}

/// Fills `db` with `events` events (when it holds none), starts a server on it with the
/// console, and measures.
pub async fn measure(db: &Path, events: usize) -> anyhow::Result<ConsoleFigures> {
    if !db.exists() {
        let started = Instant::now();
        prefill_with(db, events, mixed).await.context("cannot fill the trail")?;
        println!("filled {events} events in {:.1} s", started.elapsed().as_secs_f64());
    }
    let dir = tempfile::tempdir()?;
    let http = std::net::TcpListener::bind("127.0.0.1:0")?.local_addr()?;
    let config = console_config(dir.path(), http)?;
    let starting = Instant::now();
    let server = ServerProcess::start_with(db, Durability::Full, Some(&config)).await?;
    let start = starting.elapsed();
    let started = Instant::now();
    let browser = Browser::open(format!("http://{http}")).await?;
    let (counted, verified) = browser.caught_up(started).await?;
    let middle = (events / 20) * 10;
    let pages = [
        "/ui".to_owned(),
        "/ui?window=day".to_owned(),
        "/ui/trail".to_owned(),
        "/ui/trail?outcome=deny".to_owned(),
        "/ui/trail?kind=violation".to_owned(),
        "/ui/trail?session=prefill-4242".to_owned(),
        format!("/ui/story?decision=bench-{}", middle + 8),
        format!("/ui/event?seq={}", middle + 1),
        "/ui/approvals".to_owned(),
    ];
    let mut baseline = Vec::new();
    for _ in 0..SAMPLES {
        let began = Instant::now();
        browser.client.get(format!("{}/healthz", browser.base)).send().await?.bytes().await?;
        baseline.push(began.elapsed());
    }
    let mut figures = Vec::new();
    for page in pages {
        figures.push(browser.page(page).await?);
    }
    server.stop().await;
    baseline.sort();
    let reader = crate::store::Reader::open(db).await?;
    let events = reader.count(&crate::trail::Filter::default()).await?;
    reader.close().await;
    Ok(ConsoleFigures {
        events,
        start,
        counted,
        verified,
        baseline: baseline[SAMPLES / 2],
        pages: figures,
    })
}

/// The server's configuration in `dir`: the console on `http`, checkpoints signed with a key
/// made now.
fn console_config(dir: &Path, http: std::net::SocketAddr) -> anyhow::Result<std::path::PathBuf> {
    let key = dir.join("log.key");
    let signer = crate::trail::note::NoteSigner::generate("toolgate/bench")?;
    std::fs::write(&key, signer.encode())?;
    let config = dir.join("console.toml");
    std::fs::write(
        &config,
        format!(
            "http_listen = \"{http}\"\n[console]\nenabled = true\n\
             [checkpoints]\nkey_file = \"{}\"\n",
            key.display()
        ),
    )?;
    Ok(config)
}

/// One session for every request, as one browser would have.
struct Browser {
    client: reqwest::Client,
    base: String,
    cookie: String,
}

impl Browser {
    async fn open(base: String) -> anyhow::Result<Self> {
        let client = reqwest::Client::new();
        let first = client.get(format!("{base}/ui/trail")).send().await?;
        let cookie = first
            .headers()
            .get("set-cookie")
            .and_then(|c| c.to_str().ok())
            .and_then(|c| c.split(';').next())
            .context("the console gave no session")?
            .to_owned();
        Ok(Self { client, base, cookie })
    }

    async fn get(&self, path: &str) -> reqwest::Result<reqwest::Response> {
        let url = format!("{}{path}", self.base);
        self.client.get(url).header("cookie", &self.cookie).send().await
    }

    /// How long after `started` the overview counted the last day, and showed the chain
    /// verified.
    async fn caught_up(&self, started: Instant) -> anyhow::Result<(Duration, Duration)> {
        let (mut counted, mut verified) = (None, None);
        loop {
            let overview = self.get("/ui").await?.text().await?;
            if counted.is_none() && !overview.contains("Counting the last day") {
                counted = Some(started.elapsed());
            }
            if verified.is_none() && overview.contains("✓ Intact") {
                verified = Some(started.elapsed());
            }
            if let (Some(counted), Some(verified)) = (counted, verified) {
                return Ok((counted, verified));
            }
            anyhow::ensure!(
                started.elapsed() < Duration::from_secs(600),
                "the followers never caught up"
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// `page`'s times over [`SAMPLES`] requests.
    async fn page(&self, page: String) -> anyhow::Result<PageFigures> {
        let (mut server_times, mut round_trips) = (Vec::new(), Vec::new());
        for _ in 0..SAMPLES {
            let began = Instant::now();
            let answer = self.get(&page).await?;
            anyhow::ensure!(answer.status().is_success(), "{page}: {}", answer.status());
            let timing = answer
                .headers()
                .get("server-timing")
                .and_then(|t| t.to_str().ok())
                .and_then(|t| t.strip_prefix("render;dur="))
                .and_then(|ms| ms.parse::<f64>().ok())
                .context("no Server-Timing")?;
            answer.bytes().await?;
            round_trips.push(began.elapsed());
            server_times.push(Duration::from_secs_f64(timing / 1000.0));
        }
        server_times.sort();
        round_trips.sort();
        Ok(PageFigures {
            page,
            server: (server_times[SAMPLES / 2], server_times[SAMPLES - 1]),
            round_trip: round_trips[SAMPLES / 2],
        })
    }
}
