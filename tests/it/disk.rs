//! The trail's disk as a signal: past a `[disk]` threshold the server says so on `/metrics`,
//! on `/readyz` (still 200: a warning, not an outage) and on the console's overview; within
//! them it says nothing. (The projection from the growth is unit-tested in `store::disk`: it
//! needs a minute of samples.)

use std::time::{Duration, Instant};

use reqwest::StatusCode;
use toolgate::config::DiskConfig;

use crate::console::Browser;
use crate::helpers::{request, spawn_app_with_side_port};

/// The value of an unlabelled metric on `/metrics`, once it is there (the disk is measured in
/// the background).
async fn metric(side: &str, name: &str) -> f64 {
    let started = Instant::now();
    loop {
        let text = reqwest::get(format!("{side}/metrics")).await.unwrap().text().await.unwrap();
        let value =
            text.lines().find_map(|l| l.strip_prefix(name)?.strip_prefix(' ')?.parse::<f64>().ok());
        if let Some(value) = value.filter(|_| !text.contains("toolgate_trail_bytes 0\n")) {
            return value;
        }
        assert!(started.elapsed() < Duration::from_secs(15), "no {name} in\n{text}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

async fn ready(side: &str) -> (StatusCode, String) {
    let answer = reqwest::get(format!("{side}/readyz")).await.unwrap();
    (answer.status(), answer.text().await.unwrap())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_disk_past_its_threshold_is_warned_about_and_the_calls_go_on() {
    // Less than 100% free: every filesystem is past it.
    let (mut app, side) = spawn_app_with_side_port(|c| {
        c.console.enabled = true;
        c.disk = DiskConfig { check_every_ms: 100, warn_free_percent: 100.0, ..c.disk.clone() };
    })
    .await;
    app.decide(request("read")).await;

    assert_eq!(metric(&side, "toolgate_disk_warning").await, 1.0);
    let trail = metric(&side, "toolgate_trail_bytes").await;
    assert!(trail > 4096.0, "the trail and its WAL: {trail} bytes");
    let free = metric(&side, "toolgate_disk_free_bytes").await;
    assert!(free > 0.0 && free < metric(&side, "toolgate_disk_size_bytes").await);

    let (status, body) = ready(&side).await;
    assert_eq!(status, StatusCode::OK, "a warning, not an outage");
    assert!(body.starts_with("ready\nwarning: the trail's disk: "), "{body}");
    assert!(body.contains("under the 100% warned at"), "{body}");

    let overview = Browser::new(&side).get("/ui").await;
    assert!(overview.body.contains("<h2>Disk</h2>"), "{}", overview.body);
    assert!(overview.body.contains("A full disk stops every decision."), "{}", overview.body);

    // Decisions go on.
    app.decide(request("read")).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_disk_within_its_thresholds_is_not_warned_about() {
    let (mut app, side) = spawn_app_with_side_port(|c| {
        c.disk =
            DiskConfig { check_every_ms: 100, warn_free_percent: 0.0, warn_full_within_hours: 0 };
    })
    .await;
    app.decide(request("read")).await;
    assert!(metric(&side, "toolgate_trail_bytes").await > 0.0);
    assert_eq!(metric(&side, "toolgate_disk_warning").await, 0.0);
    assert_eq!(ready(&side).await, (StatusCode::OK, "ready\n".to_owned()));
}
