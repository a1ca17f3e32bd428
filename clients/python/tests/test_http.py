"""The HTTP side port: metrics scraped and parsed with Prometheus's own parser, the probes,
the Claude Code hook endpoint, and the port over TLS."""

from __future__ import annotations

import http.client
import json
import pathlib
import ssl
import urllib.error
import urllib.request

import pytest
from prometheus_client.parser import text_string_to_metric_families

from toolgate_client import Toolgate

FIXTURES = pathlib.Path(__file__).resolve().parents[3] / "tests" / "fixtures" / "claude"


def get(url: str, context: ssl.SSLContext | None = None) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(url, timeout=5, context=context) as answer:
            return answer.status, answer.read().decode()
    except urllib.error.HTTPError as error:
        return error.code, error.read().decode()


def post(url: str, body: bytes, headers: dict[str, str] | None = None) -> dict:
    headers = {"content-type": "application/json", **(headers or {})}
    request = urllib.request.Request(url, data=body, headers=headers)
    with urllib.request.urlopen(request, timeout=10) as answer:
        return json.loads(answer.read())


def samples(server) -> dict[tuple[str, tuple], float]:
    _, text = get(f"{server.http}/metrics")
    found = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            found[(sample.name, tuple(sorted(sample.labels.items())))] = sample.value
    return found


def test_metrics_count_what_the_trail_committed(server):
    tg = Toolgate(server.target, session_id="m", actor_id="agent-1")
    for _ in range(3):
        tg.guard("read", {"path": "a"}, run=lambda a: "ok")
    tg.guard("write", {"path": "a"}, run=lambda a: "no")

    metrics = samples(server)

    assert metrics[("toolgate_decisions_total", (("outcome", "allow"),))] == 3
    assert metrics[("toolgate_decisions_total", (("outcome", "deny"),))] == 1
    assert metrics[("toolgate_executions_total", (("status", "ok"),))] == 3
    # policy_loaded, 4 decisions, 3 executions.
    assert metrics[("toolgate_trail_events", ())] == 8
    assert metrics[("toolgate_commit_seconds_count", ())] >= 1
    assert metrics[("toolgate_batch_events_count", ())] >= 1
    assert ("toolgate_writer_queue_depth", ()) in metrics


def test_the_probes_answer(server):
    assert get(f"{server.http}/healthz") == (200, "ok\n")
    assert get(f"{server.http}/readyz") == (200, "ready\n")


def test_the_claude_hook_endpoint_decides_and_pairs(server):
    pre = post(f"{server.http}/hooks/claude", (FIXTURES / "pre_read.json").read_bytes())
    post_answer = post(f"{server.http}/hooks/claude", (FIXTURES / "post_read.json").read_bytes())

    assert pre == {}, "toolgate's allow leaves the decision to Claude Code's own permission flow"
    assert post_answer == {}
    kinds = [json.loads(line)["kind"] for line in server.query("--json").splitlines()]
    assert kinds[-2:] == ["decision", "execution"]
    assert "violation" not in kinds


def test_the_claude_hook_endpoint_refuses_a_body_not_typed_as_json(server):
    before = server.query("--json").splitlines()
    body = (FIXTURES / "pre_read.json").read_bytes()
    for content_type in ["text/plain", "application/x-www-form-urlencoded"]:
        request = urllib.request.Request(
            f"{server.http}/hooks/claude", data=body, headers={"content-type": content_type}
        )
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(request, timeout=10)
        assert refused.value.code == 415, content_type
    assert server.query("--json").splitlines() == before, "nothing decided, nothing recorded"


def test_the_hook_endpoint_needs_no_certificate_under_mutual_tls_only_the_token(tmp_path):
    from conftest import config_with, mutual_tls, start, token_toml

    token = token_toml("claude-hook", "hook-token", ["claude-code"])
    config = config_with(tmp_path, token + mutual_tls(tmp_path).toml)
    server = start(tmp_path, config=config)
    hook = f"{server.http}/hooks/claude"
    body = (FIXTURES / "pre_read.json").read_bytes()
    try:
        anonymous = post(hook, body)
        tokened = post(hook, body, {"authorization": "Bearer hook-token"})
    finally:
        server.process.terminate()
        server.process.wait(timeout=30)

    assert anonymous["hookSpecificOutput"]["permissionDecision"] == "deny"
    assert "no bearer token" in anonymous["hookSpecificOutput"]["permissionDecisionReason"]
    assert tokened == {}, "with the token: decided, allowed, and left to Claude Code's flow"
    decided = [json.loads(line) for line in server.query("--json", "--kind", "decision").splitlines()]
    assert [d["outcome"] for d in decided] == ["allow"]


def test_the_side_port_over_tls_asks_no_client_certificate(tmp_path):
    """Python's TLS is OpenSSL: this is the side port's TLS against another implementation."""
    from conftest import config_with, mutual_tls, start

    tls = mutual_tls(tmp_path)
    config = config_with(tmp_path, tls.toml + "side_port = true\n")
    trust = ssl.create_default_context(cadata=tls.server_ca.cert_pem.bytes().decode())
    server = start(tmp_path, config=config, side_tls=trust)
    try:
        healthz = get(f"{server.http}/healthz", trust)
        status, metrics = get(f"{server.http}/metrics", trust)
        # No HTTP answer: a TLS alert (not a status line), or a closed connection.
        with pytest.raises((http.client.HTTPException, OSError)):
            get(server.http.replace("https://", "http://") + "/healthz")
        with pytest.raises(urllib.error.URLError, match="CERTIFICATE_VERIFY_FAILED"):
            get(f"{server.http}/healthz", ssl.create_default_context())
    finally:
        server.process.terminate()
        server.process.wait(timeout=30)

    assert healthz == (200, "ok\n")
    assert status == 200
    assert "toolgate_tls_certificate_expiry_timestamp_seconds" in metrics
