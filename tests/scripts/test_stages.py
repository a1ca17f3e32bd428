"""scripts/test's stage runner (scripts/stages.sh), run by bash as scripts/test runs it."""

import pathlib
import subprocess

ROOT = pathlib.Path(__file__).resolve().parents[2]


def run(script, tmp_path):
    return subprocess.run(
        ["bash", "-c", "set -uo pipefail\nsource scripts/stages.sh\n" + script],
        cwd=ROOT, env={"PATH": "/usr/bin:/bin", "OUT": str(tmp_path)},
        capture_output=True, text=True, timeout=60)


def test_a_failing_stage_stops_at_its_failure_and_the_next_stages_still_run(tmp_path):
    done = run("""
broken() { touch "$OUT/broken-started"; false; touch "$OUT/broken-went-on"; }
fine() { touch "$OUT/fine-ran"; }
stage broken broken
stage fine fine
summary
exit $failed
""", tmp_path)
    assert done.returncode == 1, done.stderr
    assert (tmp_path / "broken-started").exists()
    assert not (tmp_path / "broken-went-on").exists()
    assert (tmp_path / "fine-ran").exists()
    table = done.stdout.splitlines()
    assert table[-4].split() == ["stage", "result", "time"]
    assert table[-3].split()[:2] == ["broken", "FAILED"]
    assert table[-2].split()[:2] == ["fine", "ok"]
    assert table[-1] == "some stages FAILED"
    assert "==== broken" in done.stderr and "==== fine" in done.stderr


def test_all_stages_passing_exit_zero_and_say_so(tmp_path):
    done = run("stage one true\nstage two true\nsummary\nexit $failed\n", tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[-1] == "all stages passed"


def test_only_the_stages_asked_for_are_wanted(tmp_path):
    done = run('wanted=(mcp)\nwants mcp && echo mcp\nwants rust || echo "no rust"\n', tmp_path)
    assert done.stdout.split("\n")[:2] == ["mcp", "no rust"]


def test_a_background_stage_runs_beside_the_next_and_is_recorded_when_joined(tmp_path):
    done = run(f"""
export STAGE_LOGS="$OUT/logs"
slow() {{ sleep 1; echo "slow's output"; touch "$OUT/slow-done"; false; }}
meanwhile() {{ [ ! -e "$OUT/slow-done" ] && touch "$OUT/ran-meanwhile"; }}
background slow slow
stage meanwhile meanwhile
joined slow
summary
exit $failed
""", tmp_path)
    assert done.returncode == 1, done.stderr
    assert (tmp_path / "ran-meanwhile").exists(), "the next stage did not wait for it"
    assert "slow's output" in done.stderr
    table = done.stdout.splitlines()
    assert table[-3].split()[:2] == ["meanwhile", "ok"]
    assert table[-2].split()[:2] == ["slow", "FAILED"]
