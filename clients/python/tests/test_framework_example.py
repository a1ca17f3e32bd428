"""examples/frameworks/pydantic_ai_agent.py, run as a newcomer would, against a server with the
example agent's configuration: its trail holds a denial, an approval and an allowed call."""

from __future__ import annotations

import json
import subprocess
import sys

from conftest import ROOT, start

EXAMPLE = ROOT / "examples"


def test_the_pydantic_ai_example_runs_offline_and_leaves_its_trail(tmp_path):
    server = start(tmp_path, policy=EXAMPLE / "agent/policy.cedar",
                   config=EXAMPLE / "agent/toolgate.toml")
    try:
        done = subprocess.run([sys.executable, str(EXAMPLE / "frameworks/pydantic_ai_agent.py"),
                               "--target", server.target], capture_output=True, text=True, timeout=120)
        events = [json.loads(line) for line in server.query("--json").splitlines()]
    finally:
        server.process.terminate()
        server.process.wait(timeout=30)

    assert done.returncode == 0, done.stderr
    assert "waiting for a person: deploy" in done.stdout, done.stdout
    assert "shred -> 'toolgate denied this call: unknown tool: shred'" in done.stdout, done.stdout
    decided = [(e["tool"], e["outcome"]) for e in events if e["kind"] == "decision"]
    assert decided == [("read", "allow"), ("shred", "deny"), ("deploy", "require_approval")]
    approved = [(e["tool"], e["actor_id"]) for e in events if e["kind"] == "approval_approved"]
    assert approved == [("deploy", "reviewer")]
    assert [e["tool"] for e in events if e["kind"] == "execution"] == ["read", "deploy"]
