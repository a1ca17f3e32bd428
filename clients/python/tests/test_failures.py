"""What each failure means for whether the tool ran, against the real server: deadlines, the
decision's timeout, a run whose report is lost (and its retry), outputs toolgate cannot take
as they are, positional and rewritten arguments, and an approval nobody answered."""

from __future__ import annotations

import json
import os
import signal
import threading
import time

import grpc
import pytest

from conftest import config_with, start
from toolgate_client import (
    Denied, InvalidRequest, NotRecorded, Toolgate, ToolgateError, ToolTimedOut, Unavailable,
    Violation,
)
from toolgate_client.v1 import approvals_pb2, approvals_pb2_grpc


def client(server, **options) -> Toolgate:
    return Toolgate(server.target, session_id="f1", actor_id="agent-1", **options)


def trail(server) -> list[dict]:
    return [json.loads(line) for line in server.query("--json").splitlines()]


def executions(server) -> list[dict]:
    return [e for e in trail(server) if e["kind"] == "execution"]


def test_a_stopped_server_is_unavailable_within_the_deadline_and_nothing_runs(server):
    tg = client(server, rpc_timeout=1.0)
    ran = []
    os.kill(server.process.pid, signal.SIGSTOP)
    try:
        started = time.monotonic()
        with pytest.raises(Unavailable) as unavailable:
            tg.guard("read", {"path": "a"}, run=ran.append)
        waited = time.monotonic() - started
    finally:
        os.kill(server.process.pid, signal.SIGCONT)

    assert ran == []
    assert unavailable.value.code == grpc.StatusCode.DEADLINE_EXCEEDED
    assert waited < 5, f"waited {waited:.1f} s"


def test_a_tool_past_the_decisions_timeout_is_reported_as_a_timeout(server):
    tg = client(server)

    with pytest.raises(ToolTimedOut) as timed_out:
        tg.guard("read", {"path": "slow"}, run=lambda a: time.sleep(2) or "late", timeout_ms=300)

    assert timed_out.value.decision.timeout_ms == 300
    (execution,) = executions(server)
    assert execution["status"] == "timeout"
    assert execution["error"] == "ran out its 300 ms"
    assert 300_000 <= execution["duration_us"] < 1_500_000


def test_a_run_whose_report_is_lost_says_so_and_its_retry_records_it_once(tmp_path):
    server = start(tmp_path, unix_socket=True)
    tg = client(server)
    marker = tmp_path / "ran.txt"

    def tool(args):
        time.sleep(1.0)
        marker.write_text("written")
        return "the output"

    # The server stops while the tool runs: it ran, and its report cannot be sent.
    threading.Timer(0.3, server.process.terminate).start()
    with pytest.raises(NotRecorded) as lost:
        tg.guard("read", {"path": "a"}, run=tool)
    server.process.wait(timeout=30)

    assert marker.read_text() == "written", "the tool ran"
    assert lost.value.output == "the output" and lost.value.tool_error is None
    assert lost.value.status == "ok"
    assert isinstance(lost.value, ToolgateError) and not isinstance(lost.value, Unavailable)
    decision = lost.value.decision
    assert [e["kind"] for e in trail(server)][-1] == "decision", "no execution yet"

    # Back on the same trail, the report is sent again; a second retry adds nothing.
    server = start(tmp_path, unix_socket=True)
    try:
        result = lost.value.retry()
        again = lost.value.retry()
    finally:
        server.process.terminate()
        server.process.wait(timeout=30)
    assert result.ran and result.output == "the output"
    assert again.report.seq == result.report.seq
    (execution,) = executions(server)
    assert execution["decision_id"] == decision.decision_id and execution["status"] == "ok"


def test_a_failed_run_whose_report_is_lost_keeps_the_tools_own_exception(tmp_path):
    server = start(tmp_path)
    tg = client(server)

    def tool(args):
        time.sleep(1.0)
        raise FileNotFoundError("no such file: a")

    threading.Timer(0.3, server.process.terminate).start()
    with pytest.raises(NotRecorded) as lost:
        tg.guard("read", {"path": "a"}, run=tool)
    server.process.wait(timeout=30)

    assert isinstance(lost.value.tool_error, FileNotFoundError)
    assert lost.value.status == "error" and lost.value.output is None


def test_outputs_are_coerced_and_a_long_one_is_cut_before_it_is_sent(tmp_path):
    config = config_with(tmp_path, "\n[limits]\nmax_output_bytes = 1000\n")
    server = start(tmp_path, config=config)
    tg = client(server)
    try:
        long = tg.guard("read", {"path": "big"}, run=lambda a: "x" * 100_000)
        raw = tg.guard("read", {"path": "bin"}, run=lambda a: b"caf\xc3\xa9 \xff")
        data = tg.guard("read", {"path": "obj"}, run=lambda a: {"when": time.gmtime(0)[:3], "n": 1})
        odd = tg.guard("read", {"path": "set"}, run=lambda a: {"s": {1}})
    finally:
        server.process.terminate()
        server.process.wait(timeout=30)

    assert long.ran and long.truncated and len(long.output) == 50
    assert long.report.result_bytes == 100_000, "the whole output's size, not what was sent"
    assert raw.output == "café \ufffd"
    assert json.loads(data.output) == {"when": [1970, 1, 1], "n": 1}
    assert odd.output == '{"s": "{1}"}'
    sizes = [e["result_bytes"] for e in executions(server)]
    assert sizes[0] == 100_000
    assert not any(e["kind"] == "invalid_request" for e in trail(server))


def test_the_decorator_takes_positional_arguments_and_refuses_a_rewrite_it_cannot_take(server):
    tg = client(server)

    @tg.tool("read")
    def read(path, encoding="utf-8"):
        return f"{path} as {encoding}"

    @tg.tool("rm", allow_write=True)
    def rm(path):
        return f"removed {path}"

    @tg.tool("rm", allow_write=True)
    def rm_asking(path, interactive=False):
        return f"removed {path}, asking: {interactive}"

    assert read("a.txt") == "a.txt as utf-8"
    assert read("b.txt", "latin-1") == "b.txt as latin-1"
    with pytest.raises(TypeError, match="not run: .* interactive"):
        rm("build/")
    assert rm_asking("build/") == "removed build/, asking: True"
    decided = [e["args_hash"] for e in trail(server) if e["kind"] == "decision"]
    assert len(decided) == 4
    statuses = [(e["status"], e["error"]) for e in executions(server)]
    assert statuses[2] == ("error", "not run: the decided arguments name parameters the tool does "
                                    "not take: interactive")


def test_an_approval_nobody_answers_is_withdrawn_and_cannot_be_approved_later(server):
    tg = client(server, approval_timeout=1.0)
    ran = []

    result = tg.guard("deploy", {"env": "prod"}, run=ran.append, allow_bash=True)

    assert not result.ran and ran == []
    assert result.reason == "no approval within 1 s: withdrawn"
    assert result.approval is not None and result.approval.state == "withdrawn"
    stub = approvals_pb2_grpc.ApprovalsStub(grpc.insecure_channel(server.target))
    with pytest.raises(grpc.RpcError) as late:
        stub.Approve(approvals_pb2.VerdictRequest(
            decision_id=result.decision.decision_id, approver="human", comment="too late"))
    assert late.value.code() == grpc.StatusCode.FAILED_PRECONDITION
    kinds = [e["kind"] for e in trail(server) if e["kind"] != "policy_loaded"]
    assert kinds == ["decision", "approval_requested", "approval_withdrawn"]


def test_results_are_typed_and_say_who_approved(server):
    tg = client(server, approval_timeout=20)
    stub = approvals_pb2_grpc.ApprovalsStub(grpc.insecure_channel(server.target))

    def approve_when_asked():
        while True:
            pending = stub.ListPending(approvals_pb2.ListPendingRequest(session_id="f1")).approvals
            if pending:
                stub.Approve(approvals_pb2.VerdictRequest(
                    decision_id=pending[0].decision_id, approver="bob", comment="go"))
                return
            time.sleep(0.05)

    threading.Thread(target=approve_when_asked, daemon=True).start()
    result = tg.guard("deploy", {"env": "prod"}, run=lambda a: "deployed", allow_bash=True)
    approval = tg.await_approval(result.decision, timeout=0)

    assert result.ran and result.approved_by == "bob"
    assert (approval.state, approval.approver, approval.outcome) == ("approved", "bob", "allow")
    with pytest.raises(Violation) as second:
        tg.execute(result.decision, result.decision.args, output="again", duration_us=7)
    assert second.value.report.violation == "the decision was already executed"


def test_every_refusal_is_a_toolgate_exception(server):
    tg = client(server)

    with pytest.raises(InvalidRequest, match="tool"):
        tg.decide("", {"path": "a"})
    with pytest.raises(Denied):
        tg.guard("write", {"path": "a"}, run=lambda a: "", raise_on_deny=True)
    with pytest.raises(TypeError, match="AsyncToolgate"):
        tg.guard("read", {"path": "a"}, run=_coroutine)
    assert [e["kind"] for e in trail(server)][-2:] == ["invalid_request", "decision"]


async def _coroutine(args):
    return "never run here"


def test_a_wait_for_approval_cut_short_by_a_restart_is_resumed_from_its_decision(tmp_path):
    server = start(tmp_path, unix_socket=True)
    tg = client(server, approval_timeout=30)
    threading.Timer(0.5, server.process.terminate).start()
    with pytest.raises(Unavailable) as cut:
        tg.guard("deploy", {"env": "prod"}, run=lambda a: "deployed", allow_bash=True)
    server.process.wait(timeout=30)
    decision = cut.value.decision
    assert decision is not None and decision.outcome == "require_approval"

    # The approval survives the restart; approved meanwhile, the call resumes and runs once.
    server = start(tmp_path, unix_socket=True)
    try:
        stub = approvals_pb2_grpc.ApprovalsStub(grpc.insecure_channel(server.target))
        stub.Approve(approvals_pb2.VerdictRequest(
            decision_id=decision.decision_id, approver="human", comment="go"))
        result = tg.resume(decision, run=lambda a: "deployed")
    finally:
        server.process.terminate()
        server.process.wait(timeout=30)
    assert result.ran and result.output == "deployed" and result.approved_by == "human"
    assert [e["kind"] for e in executions(server)] == ["execution"]
