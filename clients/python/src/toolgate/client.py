"""The ergonomic layer over toolgate's gRPC API: decide, run, report.

A harness wraps each tool call in `Toolgate.guard` (a call), `Toolgate.guarded` (a context
manager) or `Toolgate.tool` (a decorator). Each asks Decide first and runs the tool only when
toolgate allows it — with the rewritten arguments after a rewrite, after a person's approval
when one is required — measures the tool's own run time, reports it with Execute, and hands
back the output as toolgate processed it (cut to the decision's limit).
"""

from __future__ import annotations

import functools
import inspect
import json
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Optional

import grpc

from toolgate.v1 import approvals_pb2, approvals_pb2_grpc, gate_pb2, gate_pb2_grpc

__all__ = ["Toolgate", "Decision", "GuardResult", "Denied", "Unavailable", "Call"]

_OUTCOMES = {
    gate_pb2.ALLOW: "allow",
    gate_pb2.DENY: "deny",
    gate_pb2.REQUIRE_APPROVAL: "require_approval",
    gate_pb2.DRY_RUN: "dry_run",
    gate_pb2.REWRITE: "rewrite",
}


@dataclass(frozen=True)
class Decision:
    """toolgate's answer to Decide."""

    decision_id: str
    outcome: str
    reason: str
    policy_ids: list[str]
    args_hash: str
    max_output_chars: int
    timeout_ms: int
    #: The arguments to run with: the rewritten ones after a rewrite, else the requested ones.
    args: dict[str, Any]
    seq: int

    @property
    def allowed(self) -> bool:
        return self.outcome in ("allow", "rewrite")


@dataclass
class GuardResult:
    """What a guarded call came to: the output toolgate handed back, or why it did not run."""

    decision: Decision
    ran: bool
    #: The tool's output as processed by toolgate (cut to `max_output_chars`); empty if not run.
    output: str = ""
    truncated: bool = False
    #: Why the call did not run, in words fit for the model; empty when it ran.
    reason: str = ""
    #: Non-empty when the report broke the decision (recorded as a violation).
    violation: str = ""

    @property
    def outcome(self) -> str:
        return self.decision.outcome

    @property
    def policy_ids(self) -> list[str]:
        return self.decision.policy_ids

    def for_model(self) -> str:
        """The text to give the model: the output, or the denial and the policies behind it."""
        if self.ran:
            return self.output
        policies = ", ".join(self.decision.policy_ids) or "none"
        return f"[toolgate: {self.decision.outcome}] {self.reason} (policies: {policies})"


class Denied(Exception):
    """The call may not run; `result` says why."""

    def __init__(self, result: GuardResult):
        super().__init__(result.for_model())
        self.result = result


class Unavailable(Exception):
    """toolgate could not be asked or could not record the call: the tool must not run."""


@dataclass
class Call:
    """A call inside `Toolgate.guarded`: run the tool with `args`, then set `output`."""

    decision: Decision
    #: Run as a dry run only (the outcome was dry_run).
    dry_run: bool
    args: dict[str, Any]
    output: Any = None
    result: Optional[GuardResult] = field(default=None, init=False)


class Toolgate:
    """A client for one agent session.

    `target` is `host:port` (`127.0.0.1:50051`) or `unix:/path/to.sock`; `token` is the bearer
    token when the server's auth is on; `credentials` (`grpc.ssl_channel_credentials(...)`, with
    a client certificate for mutual TLS) when the server serves TLS.
    """

    def __init__(
        self,
        target: str = "127.0.0.1:50051",
        *,
        session_id: str,
        actor_id: str,
        actor_kind: str = "agent",
        delegation_chain: tuple[str, ...] = (),
        task_type: str = "",
        approval_timeout: float = 300.0,
        token: Optional[str] = None,
        credentials: Optional[grpc.ChannelCredentials] = None,
        channel: Optional[grpc.Channel] = None,
    ):
        # Over a unix socket grpc sends the socket's path as the :authority. The server accepts
        # it now; naming a host keeps this client working against servers from before that.
        options = [("grpc.default_authority", "localhost")] if target.startswith("unix:") else []
        if channel is None and credentials is not None:
            channel = grpc.secure_channel(target, credentials, options=options)
        self._channel = channel or grpc.insecure_channel(target, options=options)
        self._gate = gate_pb2_grpc.GateStub(self._channel)
        self._approvals = approvals_pb2_grpc.ApprovalsStub(self._channel)
        self.session_id = session_id
        self.actor = gate_pb2.Actor(
            id=actor_id, kind=actor_kind, delegation_chain=list(delegation_chain)
        )
        self.task_type = task_type
        self.approval_timeout = approval_timeout
        # The bearer token, when the server's auth is on (docs/security.md).
        self._metadata = (("authorization", f"Bearer {token}"),) if token else None

    def close(self) -> None:
        self._channel.close()

    def __enter__(self) -> "Toolgate":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # The raw calls.

    def decide(
        self,
        tool: str,
        args: Mapping[str, Any],
        *,
        action: str = "",
        resource: Optional[Mapping[str, str]] = None,
        context: Optional[Mapping[str, Any]] = None,
        allow_write: bool = False,
        allow_bash: bool = False,
        max_output_chars: int = 0,
        dry_run: bool = False,
        idempotency_key: str = "",
        timeout_ms: int = 0,
    ) -> Decision:
        """Asks whether `tool` may run with `args`; the answer is on the trail before it comes."""
        resource = dict(resource or {})
        request = gate_pb2.DecideRequest(
            session_id=self.session_id,
            task_type=self.task_type,
            actor=self.actor,
            tool=tool,
            action=action,
            resource=gate_pb2.Resource(
                type=resource.get("type", ""),
                id=resource.get("id", ""),
                classification=resource.get("classification", ""),
            ),
            args_json=json.dumps(dict(args)),
            context_json=json.dumps(dict(context or {})),
            options=gate_pb2.RunOptions(
                allow_write=allow_write, allow_bash=allow_bash, max_output_chars=max_output_chars
            ),
            plan=gate_pb2.ExecutionPlan(
                dry_run=dry_run, idempotency_key=idempotency_key, timeout_ms=timeout_ms
            ),
        )
        answer = self._call(self._gate.Decide, request)
        run_args = json.loads(answer.rewritten_args_json) if answer.rewritten_args_json else dict(args)
        return Decision(
            decision_id=answer.decision_id,
            outcome=_OUTCOMES.get(answer.outcome, "deny"),
            reason=answer.reason,
            policy_ids=list(answer.policy_ids),
            args_hash=answer.args_hash,
            max_output_chars=answer.max_output_chars,
            timeout_ms=answer.timeout_ms,
            args=run_args,
            seq=answer.seq,
        )

    def execute(
        self,
        decision: Decision,
        args: Mapping[str, Any],
        *,
        output: Optional[str] = None,
        duration_us: int = 0,
        status: str = "ok",
        error: str = "",
        wrap_output: bool = False,
    ) -> gate_pb2.ExecuteResponse:
        """Reports a run of the decided call; returns the processed output."""
        statuses = {"ok": gate_pb2.OK, "error": gate_pb2.ERROR, "timeout": gate_pb2.TIMEOUT}
        request = gate_pb2.ExecuteRequest(
            decision_id=decision.decision_id,
            args_json=json.dumps(dict(args)),
            duration_us=duration_us,
            status=statuses[status],
            error=error,
            output=output,
            wrap_output=wrap_output,
        )
        return self._call(self._gate.Execute, request)

    def await_approval(self, decision: Decision, timeout: Optional[float] = None) -> approvals_pb2.Approval:
        """Waits for the verdict on a decision that requires approval, up to `timeout` seconds
        (`approval_timeout` by default); returns the approval, still PENDING if none came."""
        deadline = time.monotonic() + (self.approval_timeout if timeout is None else timeout)
        while True:
            left_ms = max(0, int((deadline - time.monotonic()) * 1000))
            request = approvals_pb2.AwaitRequest(decision_id=decision.decision_id, timeout_ms=min(left_ms, 600_000))
            approval = self._call(self._approvals.Await, request)
            if approval.state != approvals_pb2.PENDING or left_ms == 0:
                return approval

    # Guarding a call.

    def guard(
        self,
        tool: str,
        args: Mapping[str, Any],
        run: Callable[[dict[str, Any]], Any],
        *,
        dry_run: Optional[Callable[[dict[str, Any]], Any]] = None,
        raise_on_deny: bool = False,
        **decide: Any,
    ) -> GuardResult:
        """Decides, runs `run(args)` when allowed (`dry_run(args)` when only a dry run is),
        reports, and returns the result. A denial is a `GuardResult` with `ran=False`, or
        `Denied` with `raise_on_deny=True`. The tool's exception is reported as an error and
        raised again."""
        try:
            with self.guarded(tool, args, **decide) as call:
                runner = dry_run if call.dry_run else run
                if runner is None:
                    raise Denied(_refused(call.decision, "only a dry run is allowed and none was given"))
                call.output = runner(call.args)
        except Denied as denied:
            if raise_on_deny:
                raise
            return denied.result
        assert call.result is not None
        return call.result

    def guarded(self, tool: str, args: Mapping[str, Any], **decide: Any) -> "_Guarded":
        """A context manager: `with tg.guarded("write", args, allow_write=True) as call:` runs
        the block only when allowed (raising `Denied` otherwise), with `call.args` to run with;
        set `call.output`. Leaving the block reports the run — an exception as an error — and
        sets `call.result`."""
        return _Guarded(self, tool, dict(args), decide)

    def tool(self, name: str, **decide: Any) -> Callable[[Callable[..., Any]], Callable[..., str]]:
        """A decorator: the function's keyword arguments are the tool's arguments; calling it
        decides, runs and reports, and returns the processed output. A denial raises `Denied`.
        A function with a `dry_run` parameter is run with `dry_run=True` when only a dry run is
        allowed."""

        def wrap(function: Callable[..., Any]) -> Callable[..., str]:
            takes_dry_run = "dry_run" in inspect.signature(function).parameters

            @functools.wraps(function)
            def guarded(**kwargs: Any) -> str:
                dry = (lambda a: function(**a, dry_run=True)) if takes_dry_run else None
                result = self.guard(
                    name, kwargs, lambda a: function(**a), dry_run=dry, raise_on_deny=True, **decide
                )
                return result.output

            return guarded

        return wrap

    def _call(self, method: Callable[..., Any], request: Any) -> Any:
        try:
            return method(request, metadata=self._metadata)
        except grpc.RpcError as error:
            if error.code() in (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED):
                raise Unavailable(f"toolgate: {error.details()}") from error
            raise


class _Guarded:
    def __init__(self, client: Toolgate, tool: str, args: dict[str, Any], decide: dict[str, Any]):
        self._client = client
        self._tool = tool
        self._args = args
        self._decide = decide
        self._call: Optional[Call] = None
        self._started = 0.0

    def __enter__(self) -> Call:
        decision = self._client.decide(self._tool, self._args, **self._decide)
        if decision.outcome == "require_approval":
            approval = self._client.await_approval(decision)
            verdict = _OUTCOMES.get(approval.verdict_outcome, "deny")
            if approval.state == approvals_pb2.PENDING:
                raise Denied(_refused(decision, f"no approval within {self._client.approval_timeout:g} s"))
            if verdict != "allow":
                state = approvals_pb2.ApprovalState.Name(approval.state).lower()
                by = f" by {approval.approver}" if approval.approver else ""
                raise Denied(_refused(decision, f"approval {state}{by}: {approval.comment}"))
        elif decision.outcome == "deny":
            raise Denied(_refused(decision, decision.reason))
        self._call = Call(decision=decision, dry_run=decision.outcome == "dry_run", args=decision.args)
        # The tool's own run time starts here, after any wait for approval.
        self._started = time.monotonic()
        return self._call

    def __exit__(self, kind: Any, error: Any, trace: Any) -> bool:
        call = self._call
        assert call is not None
        duration_us = int((time.monotonic() - self._started) * 1_000_000)
        if isinstance(error, Denied):
            return False
        if error is not None:
            self._client.execute(
                call.decision, call.args, duration_us=duration_us, status="error", error=str(error)
            )
            return False
        output = call.output if isinstance(call.output, str) else json.dumps(call.output)
        answer = self._client.execute(call.decision, call.args, output=output, duration_us=duration_us)
        call.result = GuardResult(
            decision=call.decision,
            ran=True,
            output=answer.output,
            truncated=answer.truncated,
            violation=answer.violation,
        )
        return False


def _refused(decision: Decision, reason: str) -> GuardResult:
    return GuardResult(decision=decision, ran=False, reason=reason)
