//! The trail's disk, measured: the bytes of the trail's files, the space left on their
//! filesystem, how fast the trail grows, and when, at that pace, the filesystem is full.
//!
//! A sidecar fails closed on a full disk (no `allow` without its record), so a full disk is an
//! outage of every agent behind it. This warns well before, at `[disk]`'s thresholds: on
//! `/metrics` (`toolgate_trail_bytes`, `toolgate_disk_free_bytes`, …), in the log, on
//! `/readyz` (which stays 200: a warning, not yet an outage) and on the console's overview.

use std::collections::VecDeque;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicU64;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use prometheus_client::metrics::gauge::Gauge;

use crate::config::DiskConfig;
use crate::metrics::Metrics;

/// The growth is measured over at most this long.
const WINDOW: Duration = Duration::from_secs(24 * 3600);
/// Samples of the growth are kept at least this far apart.
const STEP: Duration = Duration::from_secs(60);
/// A warning that stays is logged again this often.
const REMIND: Duration = Duration::from_secs(3600);

/// One reading of the disk.
#[derive(Debug, Clone, PartialEq)]
pub struct Reading {
    /// Bytes of the trail's files: the trail and every file beside it named after it (its WAL,
    /// its index, the followers' cursors).
    pub trail_bytes: u64,
    /// Bytes free on the trail's filesystem, for toolgate's user.
    pub free_bytes: u64,
    /// The filesystem's size.
    pub size_bytes: u64,
    /// How many bytes a day the trail grows, over up to the last day; `None` until it has been
    /// watched for a minute.
    pub bytes_per_day: Option<f64>,
    /// When, at that pace, the free space is gone; `None` while the trail does not grow.
    pub full_in: Option<Duration>,
    /// Why the disk needs attention, when it does.
    pub warning: Option<String>,
}

/// The watch over the trail's disk: its latest reading, shared with `/readyz` and the console.
#[derive(Debug, Clone)]
pub struct Disk {
    trail: PathBuf,
    config: DiskConfig,
    latest: Arc<Mutex<Option<Reading>>>,
    gauges: Gauges,
}

#[derive(Debug, Clone)]
struct Gauges {
    trail: Gauge,
    free: Gauge,
    size: Gauge,
    per_day: Gauge<f64, AtomicU64>,
    full_in: Gauge<f64, AtomicU64>,
    warning: Gauge,
}

impl Disk {
    /// A watch over the disk of the trail at `trail`, its figures registered in `metrics`.
    pub fn new(trail: &Path, config: &DiskConfig, metrics: &Metrics) -> Self {
        let gauges = Gauges {
            trail: metrics.gauge(
                "trail_bytes",
                "Bytes of the trail's files (the trail, its WAL, its index, its cursors)",
            ),
            free: metrics.gauge("disk_free_bytes", "Bytes free on the trail's filesystem"),
            size: metrics.gauge("disk_size_bytes", "Size of the trail's filesystem"),
            per_day: metrics.gauge_f64(
                "trail_growth_bytes_per_day",
                "How fast the trail grows, over up to the last day (0 until a minute was seen)",
            ),
            full_in: metrics.gauge_f64(
                "disk_full_in_seconds",
                "When, at that growth, the trail's filesystem is full (+Inf while it does not grow)",
            ),
            warning: metrics.gauge(
                "disk_warning",
                "1 while the disk is past a [disk] threshold, else 0",
            ),
        };
        Self {
            trail: trail.to_owned(),
            config: config.clone(),
            latest: Arc::new(Mutex::new(None)),
            gauges,
        }
    }

    /// The latest reading; `None` before the first.
    pub fn latest(&self) -> Option<Reading> {
        self.latest.lock().unwrap_or_else(PoisonError::into_inner).clone()
    }

    /// Measures the disk every `check_every_ms` until the task is aborted.
    pub async fn run(self) {
        let every = Duration::from_millis(self.config.check_every_ms.max(100));
        let mut growth = Growth::default();
        let mut warned: Option<Instant> = None;
        loop {
            let trail = self.trail.clone();
            let measured = tokio::task::spawn_blocking(move || measure(&trail)).await;
            match measured {
                Ok(Ok((trail_bytes, free_bytes, size_bytes))) => {
                    let now = Instant::now();
                    growth.add(now, trail_bytes);
                    let reading = reading(
                        trail_bytes,
                        free_bytes,
                        size_bytes,
                        growth.per_day(now, trail_bytes),
                        &self.config,
                    );
                    warned = self.tell(&reading, warned, now);
                    self.show(&reading);
                    *self.latest.lock().unwrap_or_else(PoisonError::into_inner) = Some(reading);
                }
                Ok(Err(e)) => tracing::warn!(error = %e, "cannot measure the trail's disk"),
                Err(e) => tracing::warn!(error = %e, "cannot measure the trail's disk"),
            }
            tokio::time::sleep(every).await;
        }
    }

    /// Logs a warning when the disk first needs attention and every hour while it does, and
    /// the end of it; returns when it last warned.
    fn tell(&self, reading: &Reading, warned: Option<Instant>, now: Instant) -> Option<Instant> {
        match (&reading.warning, warned) {
            (Some(_), Some(at)) if now.duration_since(at) < REMIND => Some(at),
            (Some(warning), _) => {
                tracing::warn!(
                    trail_bytes = reading.trail_bytes,
                    free_bytes = reading.free_bytes,
                    "the trail's disk: {warning}"
                );
                Some(now)
            }
            (None, Some(_)) => {
                tracing::info!(free_bytes = reading.free_bytes, "the trail's disk is fine again");
                None
            }
            (None, None) => None,
        }
    }

    fn show(&self, reading: &Reading) {
        let int = |bytes: u64| i64::try_from(bytes).unwrap_or(i64::MAX);
        self.gauges.trail.set(int(reading.trail_bytes));
        self.gauges.free.set(int(reading.free_bytes));
        self.gauges.size.set(int(reading.size_bytes));
        self.gauges.per_day.set(reading.bytes_per_day.unwrap_or(0.0));
        self.gauges.full_in.set(reading.full_in.map_or(f64::INFINITY, |d| d.as_secs_f64()));
        self.gauges.warning.set(i64::from(reading.warning.is_some()));
    }
}

/// The bytes of the trail's files, and the free bytes and size of their filesystem.
fn measure(trail: &Path) -> std::io::Result<(u64, u64, u64)> {
    let dir = match trail.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir,
        _ => Path::new("."),
    };
    let name = trail.file_name().unwrap_or_default();
    let mut bytes = 0;
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        if entry.file_name().as_encoded_bytes().starts_with(name.as_encoded_bytes())
            && let Ok(meta) = entry.metadata()
            && meta.is_file()
        {
            bytes += meta.len();
        }
    }
    let fs = rustix::fs::statvfs(dir)?;
    Ok((bytes, fs.f_bavail.saturating_mul(fs.f_frsize), fs.f_blocks.saturating_mul(fs.f_frsize)))
}

/// A reading, with the projection and the warning `config` asks for.
fn reading(
    trail_bytes: u64,
    free_bytes: u64,
    size_bytes: u64,
    bytes_per_day: Option<f64>,
    config: &DiskConfig,
) -> Reading {
    let full_in = bytes_per_day
        .filter(|&per_day| per_day > 0.0)
        // Too far off for a Duration (a huge filesystem, a trail that barely grows): not in sight.
        .and_then(|per_day| {
            Duration::try_from_secs_f64(free_bytes as f64 / per_day * 86_400.0).ok()
        });
    let free_percent =
        if size_bytes == 0 { 100.0 } else { free_bytes as f64 * 100.0 / size_bytes as f64 };
    let within = Duration::from_secs(config.warn_full_within_hours.saturating_mul(3600));
    let warning = if free_percent < config.warn_free_percent {
        Some(format!(
            "{} free of {} ({free_percent:.1}%), under the {}% warned at",
            size(free_bytes),
            size(size_bytes),
            config.warn_free_percent
        ))
    } else {
        full_in.filter(|&full_in| full_in < within).map(|full_in| {
            format!(
                "full in about {} at the last day's growth of {} a day ({} free)",
                days(full_in),
                size(bytes_per_day.unwrap_or(0.0) as u64),
                size(free_bytes)
            )
        })
    };
    Reading { trail_bytes, free_bytes, size_bytes, bytes_per_day, full_in, warning }
}

/// The trail's size over time: samples a minute or more apart, over up to a day.
#[derive(Debug, Default)]
struct Growth {
    samples: VecDeque<(Instant, u64)>,
}

impl Growth {
    fn add(&mut self, at: Instant, bytes: u64) {
        if self.samples.back().is_none_or(|&(last, _)| at.duration_since(last) >= STEP) {
            self.samples.push_back((at, bytes));
        }
        while self.samples.len() > 2
            && self.samples.front().is_some_and(|&(first, _)| at.duration_since(first) > WINDOW)
        {
            self.samples.pop_front();
        }
    }

    /// Bytes a day from the oldest sample to `bytes` now; `None` until a minute has passed.
    /// A trail that shrank (pruned) grows at 0.
    fn per_day(&self, now: Instant, bytes: u64) -> Option<f64> {
        let &(first, then) = self.samples.front()?;
        let span = now.duration_since(first);
        (span >= STEP).then(|| bytes.saturating_sub(then) as f64 / span.as_secs_f64() * 86_400.0)
    }
}

/// Bytes for a person: `812 B`, `3.4 MiB`, `1.2 GiB`.
pub fn size(bytes: u64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut value = bytes as f64;
    let mut unit = 0;
    while value >= 1024.0 && unit + 1 < UNITS.len() {
        value /= 1024.0;
        unit += 1;
    }
    if unit == 0 { format!("{bytes} B") } else { format!("{value:.1} {}", UNITS[unit]) }
}

/// A duration in days (or hours, under two days) for a person.
pub fn days(duration: Duration) -> String {
    let hours = duration.as_secs() / 3600;
    if hours < 48 { format!("{hours} hours") } else { format!("{} days", hours / 24) }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config() -> DiskConfig {
        DiskConfig { check_every_ms: 1000, warn_free_percent: 10.0, warn_full_within_hours: 168 }
    }

    #[test]
    fn growth_is_measured_from_the_oldest_sample_of_the_last_day() {
        let t0 = Instant::now();
        let mut growth = Growth::default();
        growth.add(t0, 1_000);
        assert_eq!(growth.per_day(t0 + Duration::from_secs(30), 2_000), None, "under a minute");
        // Samples less than a minute apart are not kept.
        growth.add(t0 + Duration::from_secs(30), 2_000);
        assert_eq!(growth.samples.len(), 1);
        let hour = t0 + Duration::from_secs(3600);
        growth.add(hour, 1_000 + 3_600);
        assert_eq!(growth.per_day(hour, 1_000 + 3_600), Some(86_400.0));
        // Two days on, the first day's samples are gone: the pace is the last day's.
        let later = t0 + Duration::from_secs(2 * 86_400);
        growth.add(later - Duration::from_secs(3600), 500_000);
        growth.add(later, 500_000);
        assert_eq!(growth.per_day(later, 500_000), Some(0.0));
    }

    #[test]
    fn a_trail_that_shrank_grows_at_zero() {
        let t0 = Instant::now();
        let mut growth = Growth::default();
        growth.add(t0, 10_000);
        assert_eq!(growth.per_day(t0 + Duration::from_secs(120), 5_000), Some(0.0));
    }

    #[test]
    fn it_warns_under_the_free_share_or_when_full_within_the_hours() {
        let gib = 1 << 30;
        let calm = reading(gib, 50 * gib, 100 * gib, Some(gib as f64), &config());
        assert_eq!(calm.full_in, Some(Duration::from_secs(50 * 86_400)));
        assert_eq!(calm.warning, None);

        let low = reading(gib, 5 * gib, 100 * gib, None, &config());
        let warning = low.warning.unwrap();
        assert!(warning.contains("5.0 GiB free of 100.0 GiB (5.0%)"), "{warning}");

        let fast = reading(gib, 50 * gib, 100 * gib, Some(10.0 * gib as f64), &config());
        assert_eq!(fast.full_in, Some(Duration::from_secs(5 * 86_400)));
        let warning = fast.warning.unwrap();
        assert!(warning.contains("full in about 5 days"), "{warning}");
        assert!(warning.contains("10.0 GiB a day"), "{warning}");

        let still = reading(gib, 50 * gib, 100 * gib, Some(0.0), &config());
        assert_eq!((still.full_in, still.warning), (None, None));

        // 8 EiB free (a network filesystem says so) and a byte a day: beyond any Duration.
        let vast = reading(gib, u64::MAX / 2, u64::MAX, Some(1.0), &config());
        assert_eq!((vast.full_in, vast.warning), (None, None));
    }

    #[test]
    fn the_trail_s_files_are_those_named_after_it() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("t.db"), [0; 100]).unwrap();
        std::fs::write(dir.path().join("t.db-wal"), [0; 20]).unwrap();
        std::fs::write(dir.path().join("t.db-index"), [0; 3]).unwrap();
        std::fs::write(dir.path().join("other.db"), [0; 1000]).unwrap();
        let (bytes, free, size) = measure(&dir.path().join("t.db")).unwrap();
        assert_eq!(bytes, 123);
        assert!(free > 0 && free <= size, "{free} of {size}");
    }
}
