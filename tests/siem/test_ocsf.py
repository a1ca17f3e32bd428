"""`toolgate export --format ocsf` validated against the OCSF 1.8.0 schema of API Activity
with the security_control profile, as the `ocsf-json-schema` package compiles it from OCSF's
own schema; and `--format jsonl`, the trail's columns exactly. The trail comes from a real
server: allowed, denied, held and malformed calls, an execution and a violation, with hostile
strings in them."""

import json
import os
import socket
import subprocess
import time
from pathlib import Path

import grpc
import jsonschema
import pytest
from ocsf_json_schema import OcsfJsonSchemaEmbedded, get_ocsf_schema
from toolgate_client.v1 import gate_pb2, gate_pb2_grpc

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
TOOLGATE = os.environ.get("TOOLGATE_BIN") or str(ROOT / "target/debug/toolgate")
assert Path(TOOLGATE).exists(), f"{TOOLGATE} is missing: run scripts/test"

HOSTILE = '"><img src=x onerror=alert(1)>\u202e<script>'


def toolgate(*args):
    return subprocess.run([TOOLGATE, *args], capture_output=True, text=True, check=True, timeout=60).stdout


@pytest.fixture(scope="module")
def trail(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("ocsf")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    db = tmp / "trail.db"
    server = subprocess.Popen(
        [TOOLGATE, "serve", "--db", str(db), "--policy", str(HERE / "policy.cedar"), "--listen", f"127.0.0.1:{port}"],
        stdout=subprocess.DEVNULL, stderr=open(tmp / "server.log", "w"),
    )
    try:
        channel = grpc.insecure_channel(f"127.0.0.1:{port}")
        grpc.channel_ready_future(channel).result(timeout=30)
        gate = gate_pb2_grpc.GateStub(channel)

        def decide(tool, actor="agent-1", kind="agent", **extra):
            return gate.Decide(gate_pb2.DecideRequest(
                session_id="s-" + HOSTILE, actor=gate_pb2.Actor(id=actor, kind=kind), tool=tool,
                args_json='{"path": "a.txt"}', options=gate_pb2.RunOptions(allow_write=True), **extra))

        allowed = decide("read")
        gate.Execute(gate_pb2.ExecuteRequest(decision_id=allowed.decision_id, args_json='{"path": "a.txt"}',
                                             status=gate_pb2.OK, output="hello", duration_us=1500))
        denied = decide(HOSTILE)
        gate.Execute(gate_pb2.ExecuteRequest(decision_id=denied.decision_id, args_json='{"path": "a.txt"}',
                                             status=gate_pb2.ERROR, error=HOSTILE))
        decide("write")
        with pytest.raises(grpc.RpcError):
            decide("read", kind="robot")
        channel.close()
    finally:
        server.terminate()
        server.wait(timeout=30)
    return db


def test_every_event_is_a_valid_ocsf_api_activity(trail):
    schema = OcsfJsonSchemaEmbedded(get_ocsf_schema(version="1.8.0")).get_class_schema(
        class_name="api_activity", profiles=["security_control"])
    validator = jsonschema.Draft202012Validator(schema)
    events = [json.loads(line) for line in toolgate("export", "--db", str(trail), "--format", "ocsf").splitlines()]

    kinds = {e["activity_name"] for e in events}
    assert {"policy_loaded", "decision", "execution", "violation", "approval_requested", "invalid_request"} <= kinds
    for event in events:
        errors = [f"{list(e.path)}: {e.message}" for e in validator.iter_errors(event)]
        assert not errors, (event["activity_name"], errors)
        # The schema does not check this one: the class's rule that type_uid is class * 100 + activity.
        assert event["type_uid"] == event["class_uid"] * 100 + event["activity_id"]

    by_kind = {}
    for event in events:
        by_kind.setdefault(event["activity_name"], []).append(event)
    allowed, denied, held = by_kind["decision"]
    assert (allowed["action"], allowed["disposition"], allowed["status"]) == ("Allowed", "Allowed", "Success")
    assert (denied["action"], denied["disposition"], denied["status"]) == ("Denied", "Blocked", "Failure")
    assert held["disposition"] == "Delayed"
    assert denied["api"]["operation"] == HOSTILE, "hostile text is carried as data"
    assert allowed["policy"]["uid"] == "reads"
    assert by_kind["execution"][0]["duration"] == 1
    assert by_kind["violation"][0]["severity"] == "High"


def test_the_chain_checks_from_the_ocsf_events_alone(trail):
    events = [json.loads(line) for line in toolgate("export", "--db", str(trail), "--format", "ocsf").splitlines()]
    rows = [json.loads(line) for line in toolgate("export", "--db", str(trail), "--format", "jsonl").splitlines()]
    queried = [json.loads(line) for line in toolgate("query", "--db", str(trail), "--json").splitlines()]

    assert rows == queried, "jsonl is the trail's columns, as query --json prints them"
    carried = [e["unmapped"]["toolgate"] for e in events]
    assert carried == [{k: v for k, v in row.items() if v is not None} for row in rows]
    for before, after in zip(carried, carried[1:]):
        assert after["prev_hash"] == before["hash"]
        assert after["seq"] == before["seq"] + 1
