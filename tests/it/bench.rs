//! A smoke run of `toolgate bench`: it starts its own servers, measures, and reports figures.
//! It asserts only that it runs and that the figures are sane, never a timing.

use crate::helpers::toolgate;

#[test]
fn bench_smoke_run_reports_every_figure_without_errors() {
    let out = toolgate(&[
        "bench",
        "--duration",
        "0.3",
        "--concurrency",
        "1,4",
        "--connections",
        "2",
        "--durability",
        "full",
        "--growth",
        "2000",
    ]);
    let stdout = String::from_utf8(out.stdout).unwrap();

    assert!(out.status.success(), "{stdout}\n{}", String::from_utf8_lossy(&out.stderr));
    let rows: Vec<Vec<&str>> = stdout
        .lines()
        .filter(|l| l.starts_with("health") || l.starts_with("decide"))
        .map(|l| l.split_whitespace().collect())
        .collect();
    assert_eq!(rows.len(), 6, "{stdout}");
    for row in &rows {
        // call name(s), conc, per s, p50, p99, p99.9, errors, vs baseline
        let n = row.len();
        let per_second: f64 = row[n - 6].parse().unwrap();
        let errors: u64 = row[n - 2].parse().unwrap();
        assert!(per_second > 0.0, "{row:?}");
        assert_eq!(errors, 0, "{row:?}");
    }
    assert!(stdout.contains("bytes per event"), "{stdout}");
    assert!(stdout.contains("growth: the full trail's ratio is"), "{stdout}");
}

#[test]
fn the_otlp_smoke_run_reports_both_rounds_and_the_lag() {
    let out = toolgate(&["bench", "--otlp", "1", "--duration", "0.5", "--concurrency", "4"]);

    let out = String::from_utf8(out.stdout).unwrap();
    assert!(out.contains("exporter off: "), "{out}");
    assert!(out.contains("collector at most "), "{out}");
    assert!(out.contains("exporter on / off, baseline-relative: "), "{out}");
}

#[test]
fn policy_and_audit_smoke_runs_report_their_figures() {
    let policy = toolgate(&["bench", "--policy-eval", "20", "--iterations", "200"]);
    let audit = toolgate(&["bench", "--audit", "3000"]);

    let policy = String::from_utf8(policy.stdout).unwrap();
    let audit = String::from_utf8(audit.stdout).unwrap();
    assert!(policy.contains("6 policies: median"), "{policy}");
    assert!(policy.contains("20 policies: median"), "{policy}");
    assert!(policy.contains("20 policies, sessions that read 2 data classes: median"), "{policy}");
    assert!(
        policy.contains("input schema check, typical write tool, matching arguments: median"),
        "{policy}"
    );
    assert!(policy.contains("normalization (path, lowercase"), "{policy}");
    assert!(audit.contains("a trail of 3000 events"), "{audit}");
    assert!(audit.contains("verify the chain and its tree:"), "{audit}");
    assert!(audit.contains("inclusion proof and root"), "{audit}");
    assert!(audit.contains("with each row's tlog-proof:"), "{audit}");
    assert!(audit.contains("one event's tlog-proof"), "{audit}");
}

#[test]
fn the_console_smoke_run_times_every_page() {
    let out = toolgate(&["bench", "--console", "3000"]);

    let stdout = String::from_utf8(out.stdout).unwrap();
    assert!(out.status.success(), "{stdout}\n{}", String::from_utf8_lossy(&out.stderr));
    assert!(stdout.contains("the chain verified whole in"), "{stdout}");
    let pages: Vec<&str> = stdout.lines().filter(|l| l.starts_with("/ui")).collect();
    assert_eq!(pages.len(), 9, "{stdout}");
    assert!(pages.iter().any(|l| l.starts_with("/ui/story?decision=bench-")), "{stdout}");
}
