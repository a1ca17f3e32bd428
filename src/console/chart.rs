//! Decisions over time as an SVG chart drawn on the server: a stacked bar per bucket, one
//! colour per outcome (from the stylesheet), each bar's counts in its tooltip. No script draws
//! it, so it shows as the page loads, with the script off too.

use chrono::DateTime;
use maud::{Markup, html};

use crate::audit::activity::{OUTCOMES, Summary};
use crate::trail::Outcome;

const WIDTH: f64 = 720.0;
const HEIGHT: f64 = 180.0;
/// Room for the count labels on the left and the times below.
const LEFT: f64 = 40.0;
const BOTTOM: f64 = 18.0;
const TOP: f64 = 8.0;

/// `HH:MM` (UTC) of a minute since the epoch.
fn clock(minute: i64) -> String {
    DateTime::from_timestamp(minute * 60, 0)
        .map_or_else(String::new, |t| t.format("%H:%M").to_string())
}

/// The chart of `summary`'s buckets of `bucket` minutes each.
pub fn decisions(summary: &Summary, bucket: i64) -> Markup {
    let buckets = &summary.buckets;
    let most = buckets.iter().map(|(_, counts)| counts.iter().sum::<u64>()).max().unwrap_or(0);
    let scale = (HEIGHT - BOTTOM - TOP) / most.max(1) as f64;
    let slot = (WIDTH - LEFT) / buckets.len().max(1) as f64;
    let bar = (slot * 0.8).max(1.0);
    let base = HEIGHT - BOTTOM;
    // A time under about every eighth bar.
    let label_every = buckets.len().div_ceil(8).max(1);
    let label = format!(
        "Decisions per {bucket} minute{} by outcome: {} in all",
        if bucket == 1 { "" } else { "s" },
        summary.decisions.iter().sum::<u64>()
    );
    html! {
        svg viewBox=(format!("0 0 {WIDTH} {HEIGHT}")) role="img" aria-label=(label) {
            line.axis x1=(LEFT) y1=(base) x2=(WIDTH) y2=(base) {}
            line.axis x1=(LEFT) y1=(TOP) x2=(WIDTH) y2=(TOP) stroke-dasharray="2 3" {}
            text x=(LEFT - 4.0) y=(TOP + 4.0) text-anchor="end" { (most) }
            text x=(LEFT - 4.0) y=(base) text-anchor="end" { "0" }
            @for (i, (start, counts)) in buckets.iter().enumerate() {
                @let x = LEFT + i as f64 * slot + (slot - bar) / 2.0;
                g {
                    title { (tooltip(*start, bucket, counts)) }
                    @for (outcome, height, top) in stack(counts, scale, base) {
                        rect class=(outcome.as_str()) x=(format!("{x:.2}")) y=(format!("{top:.2}"))
                            width=(format!("{bar:.2}")) height=(format!("{height:.2}")) {}
                    }
                    // An empty bucket still answers to the pointer.
                    rect fill="transparent" x=(format!("{x:.2}")) y=(TOP)
                        width=(format!("{bar:.2}")) height=(base - TOP) {}
                }
                @if i % label_every == 0 {
                    text x=(format!("{:.2}", x + bar / 2.0)) y=(HEIGHT - 4.0) text-anchor="middle" {
                        (clock(*start))
                    }
                }
            }
        }
    }
}

/// The rectangles of one bar, allow at the bottom: (outcome, height, top).
fn stack(counts: &[u64; OUTCOMES], scale: f64, base: f64) -> Vec<(Outcome, f64, f64)> {
    let mut top = base;
    let mut rects = Vec::new();
    for outcome in Outcome::ALL {
        let n = counts[outcome as usize];
        if n > 0 {
            let height = n as f64 * scale;
            top -= height;
            rects.push((outcome, height, top));
        }
    }
    rects
}

/// `10:15–10:30 UTC: 12 allow, 3 deny` (or `no decisions`).
fn tooltip(start: i64, bucket: i64, counts: &[u64; OUTCOMES]) -> String {
    let when = format!("{}–{} UTC", clock(start), clock(start + bucket));
    let counted: Vec<String> = Outcome::ALL
        .iter()
        .filter(|o| counts[**o as usize] > 0)
        .map(|o| format!("{} {}", counts[*o as usize], o.as_str()))
        .collect();
    match counted.is_empty() {
        true => format!("{when}: no decisions"),
        false => format!("{when}: {}", counted.join(", ")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bars_stack_their_outcomes_and_say_their_counts() {
        let mut counts = [0; OUTCOMES];
        counts[Outcome::Allow as usize] = 3;
        counts[Outcome::Deny as usize] = 1;
        let summary =
            Summary { buckets: vec![(600, counts), (601, [0; OUTCOMES])], ..Summary::default() };
        let svg = decisions(&summary, 1).into_string();
        assert!(svg.contains("<title>10:00–10:01 UTC: 3 allow, 1 deny</title>"), "{svg}");
        assert!(svg.contains("<title>10:01–10:02 UTC: no decisions</title>"));
        assert_eq!(svg.matches("class=\"allow\"").count(), 1);
        let rects = stack(&counts, 10.0, 100.0);
        assert_eq!(rects[0].0, Outcome::Allow);
        assert_eq!((rects[0].1, rects[0].2), (30.0, 70.0));
        assert_eq!((rects[1].1, rects[1].2), (10.0, 60.0));
    }
}
