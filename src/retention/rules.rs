//! The rules of `[retention]`, as arithmetic: how far the rules want the file pruned, and the
//! segment a prune takes once what is safe is known. No I/O here.

use chrono::{DateTime, Utc};

use crate::config::RetentionConfig;

/// A place the file may be cut: the events through `through`, whose tree the signed
/// checkpoint event at `checkpoint` (`through + 1`, appended at `ts`) signs. The events
/// between two cuts are a sealed segment: a prune takes whole segments.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Segment {
    pub through: i64,
    pub checkpoint: i64,
    pub ts: String,
}

/// The cuts made at least `minutes` before `now`: a prune never takes younger events.
pub fn settled(segments: Vec<Segment>, minutes: u64, now: DateTime<Utc>) -> Vec<Segment> {
    let minutes = i64::try_from(minutes).ok().and_then(chrono::Duration::try_minutes);
    let Some(latest) = minutes.and_then(|m| now.checked_sub_signed(m)) else { return vec![] };
    let old = |s: &Segment| DateTime::parse_from_rfc3339(&s.ts).is_ok_and(|t| t <= latest);
    segments.into_iter().filter(old).collect()
}

/// How far the rules want the file pruned.
#[derive(Debug, Clone, PartialEq)]
pub struct Want {
    /// The last seq older than `max_age_days` at a cut.
    age: Option<(i64, f64)>,
    /// The least seq the file must be pruned through to fit in `max_bytes`.
    bytes: Option<(i64, u64)>,
}

/// What the rules want of a file whose last prune ended at `pruned`, whose last event is
/// `head`, whose pages in use hold `used` bytes, at `now`; `None` when they want nothing.
pub fn want(
    config: &RetentionConfig,
    segments: &[Segment],
    pruned: i64,
    head: i64,
    used: u64,
    now: DateTime<Utc>,
) -> Option<Want> {
    let age = config.max_age_days.and_then(|days| {
        let cutoff = now - chrono::Duration::milliseconds((days * 86_400_000.0) as i64);
        let old = |s: &&Segment| DateTime::parse_from_rfc3339(&s.ts).is_ok_and(|t| t <= cutoff);
        segments.iter().filter(old).map(|s| s.through).max().map(|through| (through, days))
    });
    let bytes = config.max_bytes.filter(|max| used > *max).map(|max| {
        let kept = (head - pruned).max(1).unsigned_abs();
        let per_event = (used / kept).max(1);
        let need = (used - max).div_ceil(per_event);
        (pruned + i64::try_from(need).unwrap_or(i64::MAX), max)
    });
    (age.is_some() || bytes.is_some()).then_some(Want { age, bytes })
}

impl Want {
    /// The cut the rules ask for: the last old enough, or the first that frees enough bytes
    /// (the last cut when none frees enough), whichever is further.
    pub fn target(&self, segments: &[Segment]) -> Option<i64> {
        let bytes = self.bytes.and_then(|(least, _)| {
            let enough = segments.iter().map(|s| s.through).find(|through| *through >= least);
            enough.or_else(|| segments.iter().map(|s| s.through).max())
        });
        self.age.map(|(through, _)| through).max(bytes)
    }

    /// The segment to prune now: the last cut within the target and within `safe`, when it
    /// takes at least `segment_events` events (any number while the size rule presses).
    pub fn within(
        &self,
        segments: &[Segment],
        safe: i64,
        pruned: i64,
        segment_events: u64,
    ) -> Option<Segment> {
        let target = self.target(segments)?.min(safe);
        let cut = segments.iter().rfind(|s| s.through <= target && s.through > pruned)?;
        let enough = (cut.through - pruned).unsigned_abs() >= segment_events;
        (enough || self.bytes.is_some()).then(|| cut.clone())
    }

    /// Why, for the `prune` event.
    pub fn why(&self) -> String {
        let mut why = Vec::new();
        if let Some((_, days)) = self.age {
            why.push(format!("older than {days} days"));
        }
        if let Some((_, max)) = self.bytes {
            why.push(format!("the file held more than {max} bytes"));
        }
        why.join("; ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cut(through: i64, ts: &str) -> Segment {
        Segment { through, checkpoint: through + 1, ts: ts.into() }
    }

    fn at(ts: &str) -> DateTime<Utc> {
        DateTime::parse_from_rfc3339(ts).unwrap().with_timezone(&Utc)
    }

    fn config(days: Option<f64>, bytes: Option<u64>, segment_events: u64) -> RetentionConfig {
        RetentionConfig {
            max_age_days: days,
            max_bytes: bytes,
            segment_events,
            ..Default::default()
        }
    }

    #[test]
    fn age_wants_the_last_cut_older_than_the_limit_and_no_further_than_is_safe() {
        let cuts = [
            cut(100, "2026-01-01T00:00:00Z"),
            cut(200, "2026-01-05T00:00:00Z"),
            cut(300, "2026-01-09T00:00:00Z"),
        ];
        let config = config(Some(3.0), None, 1);
        let want = want(&config, &cuts, 0, 400, 1, at("2026-01-09T00:00:00Z")).unwrap();
        assert_eq!(want.target(&cuts), Some(200));
        assert_eq!(want.within(&cuts, 1_000, 0, 1).unwrap().through, 200);
        // The archive (or a destination, or a witness) holds only up to 150: the cut before.
        assert_eq!(want.within(&cuts, 150, 0, 1).unwrap().through, 100);
        assert_eq!(want.within(&cuts, 99, 0, 1), None);
        // A segment too small to be worth a prune waits to grow.
        assert_eq!(want.within(&cuts, 1_000, 0, 250), None);
        assert!(want.why().contains("older than 3 days"));
    }

    #[test]
    fn no_cut_younger_than_the_minimum_age_is_offered() {
        let cuts = vec![cut(100, "2026-01-09T00:00:00Z"), cut(200, "2026-01-09T00:50:00Z")];
        let now = at("2026-01-09T01:00:00Z");
        assert_eq!(settled(cuts.clone(), 60, now), vec![cuts[0].clone()]);
        assert_eq!(settled(cuts.clone(), 0, now), cuts);
        assert_eq!(settled(cuts.clone(), 120, now), vec![]);
        assert_eq!(settled(cuts, u64::MAX, now), vec![], "no overflow");
    }

    #[test]
    fn nothing_is_wanted_without_a_rule_or_while_everything_is_young_and_small() {
        let cuts = [cut(100, "2026-01-08T00:00:00Z")];
        let now = at("2026-01-09T00:00:00Z");
        assert_eq!(want(&config(None, None, 1), &cuts, 0, 200, 10, now), None);
        assert_eq!(want(&config(Some(3.0), Some(1_000), 1), &cuts, 0, 200, 999, now), None);
    }

    #[test]
    fn size_wants_the_first_cut_that_frees_enough_whatever_the_segment_size() {
        let now = at("2026-01-09T00:00:00Z");
        let cuts = [cut(100, "2026-01-09T00:00:00Z"), cut(300, "2026-01-09T00:00:00Z")];
        // 400 events in 40,000 bytes, 10,000 over: 100 events must go.
        let want = want(&config(None, Some(30_000), 1_000_000), &cuts, 0, 400, 40_000, now);
        let want = want.unwrap();
        assert_eq!(want.target(&cuts), Some(100));
        assert_eq!(want.within(&cuts, 1_000, 0, 1_000_000).unwrap().through, 100);
        // 200 must go: the first cut past it.
        let more = super::want(&config(None, Some(20_000), 1), &cuts, 0, 400, 40_000, now);
        assert_eq!(more.unwrap().target(&cuts), Some(300));
    }
}
