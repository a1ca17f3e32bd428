"""examples/agent/agent.py, run as a newcomer would, against a server with its configuration."""

from __future__ import annotations

import json
import subprocess
import sys

from conftest import ROOT, start

EXAMPLE = ROOT / "examples" / "agent"


def test_the_example_agent_runs_and_leaves_its_trail(tmp_path):
    server = start(tmp_path, policy=EXAMPLE / "policy.cedar", config=EXAMPLE / "toolgate.toml")
    try:
        done = subprocess.run([sys.executable, str(EXAMPLE / "agent.py"), "--target", server.target],
                              capture_output=True, text=True, timeout=120)
        events = [json.loads(line) for line in server.query("--json").splitlines()]
    finally:
        server.process.terminate()
        server.process.wait(timeout=30)

    assert done.returncode == 0, done.stderr
    assert "2 call(s) refused" in done.stdout, done.stdout
    loop = [e for e in events if e["kind"] == "decision" and e["outcome"] == "deny"]
    assert [e["policy_ids"] for e in loop] == ['["default.loop"]']
    approved = next(e for e in events if e["kind"] == "approval_approved")
    assert approved["actor_id"] == "reviewer"
    # The secret it read holds the post, naming the read; the reviewer rejects it.
    vault = next(e for e in events if e["kind"] == "execution" and e["tool"] == "vault_read")
    assert vault["request"] == '{"reads":["secret"]}'
    held = next(e for e in events if e["kind"] == "decision" and e["tool"] == "post_chat")
    assert held["outcome"] == "require_approval"
    assert held["reason"].endswith(f"(read by seq {vault['seq']} (secret))"), held["reason"]
    rejected = next(e for e in events if e["kind"] == "approval_rejected")
    assert rejected["decision_id"] == held["decision_id"]
    assert [e["kind"] for e in events].count("execution") == 10
    assert not any(e["kind"] == "violation" for e in events)
