"""The client against the real server: each outcome through guard, guarded and tool."""

from __future__ import annotations

import json
import threading
import time

import grpc
import pytest

from toolgate_client import Denied, PermissionDenied, Toolgate, Unavailable
from toolgate_client.v1 import approvals_pb2, approvals_pb2_grpc, gate_pb2, gate_pb2_grpc


def client(server, session: str = "s1") -> Toolgate:
    return Toolgate(server.target, session_id=session, actor_id="agent-1", approval_timeout=20)


def approver(server):
    return approvals_pb2_grpc.ApprovalsStub(grpc.insecure_channel(server.target))


def trail(server) -> list[dict]:
    return [json.loads(line) for line in server.query("--json").splitlines()]


def test_an_allowed_call_runs_and_its_output_comes_back_cut_to_the_limit(server):
    tg = client(server)

    result = tg.guard("read", {"path": "notes.txt"}, run=lambda args: "x" * 80)

    assert result.ran and result.outcome == "allow"
    assert result.output == "x" * 50 and result.truncated
    events = trail(server)
    execution = next(e for e in events if e["kind"] == "execution")
    assert execution["result_bytes"] == 80
    assert execution["decision_id"] == result.decision.decision_id


def test_a_denial_is_a_result_for_the_model_or_an_exception(server):
    tg = client(server)
    ran = []

    result = tg.guard("write", {"path": "a.txt"}, run=ran.append)
    with pytest.raises(Denied) as denied:
        tg.guard("write", {"path": "a.txt"}, run=ran.append, raise_on_deny=True)

    assert not result.ran and ran == []
    assert result.reason == "tool requires allow_write=true: write"
    assert result.policy_ids == ["writes-need-allow-write"]
    assert result.for_model() == (
        "[toolgate: deny] tool requires allow_write=true: write (policies: writes-need-allow-write)"
    )
    assert denied.value.result.outcome == "deny"


def test_a_rewrite_runs_the_tool_with_the_rewritten_arguments(server):
    tg = client(server)
    seen = []

    result = tg.guard("rm", {"path": "build/"}, run=lambda args: seen.append(args) or "removed",
                      allow_write=True)

    assert result.outcome == "rewrite" and result.ran
    assert seen == [{"interactive": True, "path": "build/"}]
    assert result.report is not None and result.report.violation == ""


def test_a_dry_run_runs_only_the_dry_runner(server):
    tg = client(server)

    without = tg.guard("migrate", {"to": "v2"}, run=lambda a: "migrated", allow_write=True)
    with_dry = tg.guard("migrate", {"to": "v2"}, run=lambda a: "migrated",
                        dry_run=lambda a: "would migrate", allow_write=True)

    assert not without.ran and "only a dry run" in without.reason
    assert with_dry.ran and with_dry.output == "would migrate"


def test_an_approval_is_awaited_and_its_wait_is_not_the_tools_duration(server):
    tg = client(server)
    stub = approver(server)

    def approve_when_asked():
        while True:
            pending = stub.ListPending(approvals_pb2.ListPendingRequest(session_id="s1")).approvals
            if pending:
                time.sleep(0.5)
                stub.Approve(approvals_pb2.VerdictRequest(
                    decision_id=pending[0].decision_id, approver="human", comment="go"))
                return
            time.sleep(0.05)

    threading.Thread(target=approve_when_asked, daemon=True).start()
    result = tg.guard("deploy", {"env": "prod"}, run=lambda a: "deployed", allow_bash=True)

    assert result.ran and result.output == "deployed"
    kinds = [e["kind"] for e in trail(server) if e["kind"] != "policy_loaded"]
    assert kinds == ["decision", "approval_requested", "approval_approved", "execution"]
    execution = next(e for e in trail(server) if e["kind"] == "execution")
    assert execution["duration_us"] < 500_000, "the half-second wait is not the tool's time"


def test_a_rejection_tells_the_model_who_and_why(server):
    tg = client(server)
    stub = approver(server)

    def reject_when_asked():
        while True:
            pending = stub.ListPending(approvals_pb2.ListPendingRequest()).approvals
            if pending:
                stub.Reject(approvals_pb2.VerdictRequest(
                    decision_id=pending[0].decision_id, approver="human", comment="not today"))
                return
            time.sleep(0.05)

    threading.Thread(target=reject_when_asked, daemon=True).start()
    result = tg.guard("deploy", {"env": "prod"}, run=lambda a: "deployed", allow_bash=True)

    assert not result.ran
    assert result.reason == "approval rejected by human: not today"


def test_a_tool_that_raises_is_reported_as_an_error_and_the_error_raised(server):
    tg = client(server)

    with pytest.raises(FileNotFoundError):
        with tg.guarded("read", {"path": "missing"}) as call:
            raise FileNotFoundError("missing")

    execution = next(e for e in trail(server) if e["kind"] == "execution")
    assert execution["status"] == "error" and execution["error"] == "missing"
    assert call.result is None


def test_the_decorator_guards_a_function(server):
    tg = client(server)

    @tg.tool("bash", allow_bash=True)
    def bash(command: str) -> str:
        return f"ran {command}"

    @tg.tool("write")
    def write(path: str, content: str) -> str:
        return "written"

    assert bash(command="ls") == "ran ls"
    with pytest.raises(Denied):
        write(path="a", content="b")


def test_the_sixth_identical_call_is_a_loop(server):
    tg = client(server)

    results = [tg.guard("read", {"path": "same"}, run=lambda a: "") for _ in range(6)]
    other = tg.guard("read", {"path": "other"}, run=lambda a: "")

    assert [r.ran for r in results] == [True] * 5 + [False]
    assert results[5].policy_ids == ["loop"]
    assert other.ran


def test_the_client_talks_over_a_unix_socket(tmp_path):
    from conftest import start

    server = start(tmp_path, unix_socket=True)
    try:
        result = client(server).guard("read", {"path": "a"}, run=lambda a: "over the socket")
    finally:
        server.process.terminate()
        server.process.wait(timeout=30)

    assert server.target.startswith("unix:")
    assert result.ran and result.output == "over the socket"


def test_a_stock_grpcio_channel_is_served_on_the_unix_socket(tmp_path):
    # grpcio's default channel sends the socket's path as the :authority; no option set here.
    from conftest import start

    server = start(tmp_path, unix_socket=True)
    try:
        with grpc.insecure_channel(server.target) as channel:
            answer = gate_pb2_grpc.GateStub(channel).Decide(
                gate_pb2.DecideRequest(session_id="s1", actor=gate_pb2.Actor(id="agent-1", kind="agent"),
                                       tool="read", args_json='{"path": "a"}'),
                timeout=10,
            )
    finally:
        server.process.terminate()
        server.process.wait(timeout=30)

    assert answer.outcome == gate_pb2.ALLOW
    assert answer.seq > 0


def test_a_token_is_sent_when_auth_is_on(tmp_path):
    from conftest import config_with, start, token_toml

    config = config_with(tmp_path, token_toml("py", "py-agent-token", ["agent-1"]))
    server = start(tmp_path, config=config)
    try:
        anonymous = Toolgate(server.target, session_id="s", actor_id="agent-1")
        with pytest.raises(PermissionDenied) as refused:
            anonymous.guard("read", {"path": "a"}, run=lambda a: "")
        tg = Toolgate(server.target, session_id="s", actor_id="agent-1", token="py-agent-token")
        result = tg.guard("read", {"path": "a"}, run=lambda a: "ok")
    finally:
        server.process.terminate()
        server.process.wait(timeout=30)

    assert refused.value.code == grpc.StatusCode.UNAUTHENTICATED
    assert result.ran


def test_mutual_tls_with_a_client_certificate(tmp_path):
    from conftest import config_with, mutual_tls, start

    tls = mutual_tls(tmp_path)
    agent = tls.client_ca.issue_cert("agent.example", common_name="py-agent")
    config = config_with(tmp_path, """
[[auth.certificates]]
subject = "py-agent"
roles = ["agent"]
actors = ["agent-1"]
""" + tls.toml)
    trust = tls.server_ca.cert_pem.bytes()
    server = start(tmp_path, config=config)
    ran = []
    try:
        without = Toolgate(server.target, session_id="s", actor_id="agent-1",
                           credentials=grpc.ssl_channel_credentials(root_certificates=trust))
        with pytest.raises(Unavailable):
            without.guard("read", {"path": "a"}, run=ran.append)
        credentials = grpc.ssl_channel_credentials(
            root_certificates=trust,
            private_key=agent.private_key_pem.bytes(),
            certificate_chain=agent.cert_chain_pems[0].bytes(),
        )
        tg = Toolgate(server.target, session_id="s", actor_id="agent-1", credentials=credentials)
        result = tg.guard("read", {"path": "a"}, run=lambda a: "over mutual TLS")
        other = Toolgate(server.target, session_id="s", actor_id="agent-2", credentials=credentials)
        with pytest.raises(PermissionDenied) as impersonated:
            other.guard("read", {"path": "a"}, run=ran.append)
    finally:
        server.process.terminate()
        server.process.wait(timeout=30)

    assert ran == []
    assert result.ran and result.output == "over mutual TLS"
    assert impersonated.value.code == grpc.StatusCode.PERMISSION_DENIED
    assert "cert:py-agent" in server.query("--kind", "access_denied")


def test_an_unreachable_server_never_runs_the_tool(server):
    server.process.terminate()
    server.process.wait(timeout=30)
    tg = client(server)
    ran = []

    with pytest.raises(Unavailable):
        tg.guard("read", {"path": "a"}, run=ran.append)

    assert ran == []
    server.process = _Stopped()


class _Stopped:
    """Stands in for a server a test stopped itself."""

    def terminate(self) -> None:
        pass

    def wait(self, timeout: float) -> int:
        return 0
