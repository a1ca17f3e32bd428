"""What the sync and the async client share: the results, the exceptions, and the pure steps
of a guarded call (building requests, reading answers, preparing the output, binding a
function's arguments). No I/O here."""

from __future__ import annotations

import inspect
import json
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Optional

import grpc

from toolgate_client.v1 import approvals_pb2, gate_pb2

OUTCOMES = {
    gate_pb2.ALLOW: "allow",
    gate_pb2.DENY: "deny",
    gate_pb2.REQUIRE_APPROVAL: "require_approval",
    gate_pb2.DRY_RUN: "dry_run",
    gate_pb2.REWRITE: "rewrite",
}
STATUSES = {"ok": gate_pb2.OK, "error": gate_pb2.ERROR, "timeout": gate_pb2.TIMEOUT}

#: The largest output sent to Execute, in bytes: the server's default `limits.max_output_bytes`
#: is 16 MiB. A longer output is cut to what the decision can hand back, with its full size.
MAX_OUTPUT_BYTES = 16 * 1024 * 1024


@dataclass(frozen=True)
class Decision:
    """toolgate's answer to Decide."""

    decision_id: str
    outcome: str
    reason: str
    policy_ids: list[str]
    args_hash: str
    max_output_chars: int
    #: The time the tool may run, in milliseconds (0: no limit); `guard` applies it.
    timeout_ms: int
    #: The arguments to run with: the rewritten ones after a rewrite, else the requested ones.
    args: dict[str, Any]
    seq: int

    @property
    def allowed(self) -> bool:
        return self.outcome in ("allow", "rewrite")


@dataclass(frozen=True)
class Approval:
    """Where the approval of a decision stands, and its verdict once there is one."""

    decision_id: str
    #: "pending", "approved", "rejected", "expired" or "withdrawn".
    state: str
    #: Who gave the verdict; empty for an expiry or a withdrawal.
    approver: str
    comment: str
    decided_at: str
    #: What the verdict lets through: "allow" or "deny" ("" while pending).
    outcome: str
    seq: int

    @property
    def pending(self) -> bool:
        return self.state == "pending"


@dataclass(frozen=True)
class Report:
    """toolgate's answer to Execute: the output as handed back, and where the event stands."""

    #: The output cut to the decision's `max_output_chars` (and wrapped when asked).
    output: str
    truncated: bool
    #: The size of the whole output in bytes.
    result_bytes: int
    seq: int
    #: Non-empty when the report broke its decision (then `execute` raises `Violation`).
    violation: str


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
    #: The approval, for a call that required one.
    approval: Optional[Approval] = None
    report: Optional[Report] = None

    @property
    def outcome(self) -> str:
        return self.decision.outcome

    @property
    def policy_ids(self) -> list[str]:
        return self.decision.policy_ids

    @property
    def approved_by(self) -> str:
        """Who approved the call; empty when it needed no approval or was not approved."""
        approved = self.approval is not None and self.approval.state == "approved"
        return self.approval.approver if approved and self.approval else ""

    def for_model(self) -> str:
        """The text to give the model: the output, or the denial and the policies behind it."""
        if self.ran:
            return self.output
        policies = ", ".join(self.decision.policy_ids) or "none"
        return f"[toolgate: {self.decision.outcome}] {self.reason} (policies: {policies})"


@dataclass
class Call:
    """A call inside `guarded`: run the tool with `args`, then set `output`."""

    decision: Decision
    #: Run as a dry run only (the outcome was dry_run).
    dry_run: bool
    args: dict[str, Any]
    approval: Optional[Approval] = None
    output: Any = None
    result: Optional[GuardResult] = field(default=None, init=False)


# The exceptions. Each says whether the tool ran.


class ToolgateError(Exception):
    """A call to toolgate failed; `code` is the gRPC status code."""

    def __init__(self, message: str, code: Optional[grpc.StatusCode] = None):
        super().__init__(message)
        self.code = code


class Unavailable(ToolgateError):
    """toolgate could not be asked, or could not record the call: the tool did not run.
    Raised while waiting for an approval, it carries the `decision`, which still stands:
    `resume(error.decision, run)` waits again."""

    decision: Optional[Decision] = None


class InvalidRequest(ToolgateError):
    """toolgate refused the request as malformed (recorded as `invalid_request`)."""


class PermissionDenied(ToolgateError):
    """The caller may not make this call (no token, or one that may not act as this actor)."""


class Denied(ToolgateError):
    """The call may not run; `result` says why. The tool did not run."""

    def __init__(self, result: GuardResult):
        super().__init__(result.for_model())
        self.result = result


class Violation(ToolgateError):
    """The report was recorded, as a violation of its decision (`report.violation`)."""

    def __init__(self, report: Report):
        super().__init__(f"toolgate recorded a violation: {report.violation}")
        self.report = report


class ToolTimedOut(ToolgateError):
    """The tool ran out the decision's `timeout_ms`, and the timeout was reported. An async
    tool was cancelled; a sync one cannot be stopped and may still be running in its thread."""

    def __init__(self, decision: Decision, report: Report):
        super().__init__(f"the tool ran out its {decision.timeout_ms} ms and was reported TIMEOUT")
        self.decision = decision
        self.report = report


class NotRecorded(ToolgateError):
    """The tool ran, but its report did not reach the trail (toolgate became unreachable, or
    did not confirm it in time): the run happened and is not, or not yet, on the trail.

    `output` is what the tool returned (None when it raised), `tool_error` its own exception,
    `status` what was reported. `retry()` sends the same report again: Execute answers an exact
    repeat from the execution already recorded, so a retry never counts the run twice."""

    def __init__(self, cause: ToolgateError, decision: Decision, output: Any,
                 tool_error: Optional[BaseException], status: str, retry: Callable[[], Any]):
        super().__init__(f"the tool ran, but its report was not recorded: {cause}", cause.code)
        self.decision = decision
        self.output = output
        self.tool_error = tool_error
        self.status = status
        self._retry = retry

    def retry(self) -> Any:
        """Sends the report again; returns the `GuardResult` (an awaitable one from
        `AsyncToolgate`)."""
        return self._retry()


def error_from(error: grpc.RpcError) -> ToolgateError:
    """The client's exception for a failed RPC."""
    code = error.code()
    message = f"toolgate: {error.details()}"
    if code in (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED,
                grpc.StatusCode.RESOURCE_EXHAUSTED, grpc.StatusCode.CANCELLED):
        return Unavailable(message, code)
    if code == grpc.StatusCode.INVALID_ARGUMENT:
        return InvalidRequest(message, code)
    if code in (grpc.StatusCode.PERMISSION_DENIED, grpc.StatusCode.UNAUTHENTICATED):
        return PermissionDenied(message, code)
    return ToolgateError(message, code)


# Requests and answers.


def decide_request(base: dict[str, Any], tool: str, args: Mapping[str, Any], *, action: str = "",
                   resource: Optional[Mapping[str, str]] = None,
                   context: Optional[Mapping[str, Any]] = None, allow_write: bool = False,
                   allow_bash: bool = False, max_output_chars: int = 0, dry_run: bool = False,
                   idempotency_key: str = "", timeout_ms: int = 0,
                   session_id: str = "") -> gate_pb2.DecideRequest:
    resource = dict(resource or {})
    # A framework's run or conversation may name the session, over the client's own.
    base = dict(base, session_id=session_id) if session_id else base
    return gate_pb2.DecideRequest(
        **base,
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


def decision_from(answer: gate_pb2.DecideResponse, args: Mapping[str, Any]) -> Decision:
    run_args = json.loads(answer.rewritten_args_json) if answer.rewritten_args_json else dict(args)
    return Decision(
        decision_id=answer.decision_id,
        outcome=OUTCOMES.get(answer.outcome, "deny"),
        reason=answer.reason,
        policy_ids=list(answer.policy_ids),
        args_hash=answer.args_hash,
        max_output_chars=answer.max_output_chars,
        timeout_ms=answer.timeout_ms,
        args=run_args,
        seq=answer.seq,
    )


def approval_from(answer: approvals_pb2.Approval) -> Approval:
    state = approvals_pb2.ApprovalState.Name(answer.state).lower()
    return Approval(
        decision_id=answer.decision_id,
        state="pending" if state == "approval_state_unspecified" else state,
        approver=answer.approver,
        comment=answer.comment,
        decided_at=answer.decided_at,
        outcome=OUTCOMES.get(answer.verdict_outcome, ""),
        seq=answer.seq,
    )


def report_from(answer: gate_pb2.ExecuteResponse) -> Report:
    return Report(output=answer.output, truncated=answer.truncated,
                  result_bytes=answer.result_bytes, seq=answer.seq, violation=answer.violation)


def text_of(output: Any) -> str:
    """A tool's output as text: a string as it is, bytes decoded as UTF-8 (a bad byte becomes
    U+FFFD), anything else as JSON (objects it cannot encode by their `str`)."""
    if isinstance(output, str):
        return output
    if isinstance(output, (bytes, bytearray, memoryview)):
        return bytes(output).decode("utf-8", errors="replace")
    try:
        return json.dumps(output, default=str)
    except (TypeError, ValueError):
        return str(output)


def clipped(text: str, max_output_chars: int) -> tuple[str, int]:
    """What to send of an output, and its full size in bytes: a long output is cut to one
    character past what the decision hands back (so toolgate still sees it was cut), and to
    `MAX_OUTPUT_BYTES`."""
    size = len(text.encode("utf-8"))
    if max_output_chars > 0 and len(text) > max_output_chars + 1:
        text = text[: max_output_chars + 1]
    if len(text.encode("utf-8")) > MAX_OUTPUT_BYTES:
        text = text.encode("utf-8")[:MAX_OUTPUT_BYTES].decode("utf-8", errors="ignore")
    return text, size


def execute_request(decision: Decision, args: Mapping[str, Any], *, output: Any = None,
                    duration_us: int = 0, status: str = "ok", error: str = "",
                    wrap_output: bool = False, approved_in_harness: str = "") -> gate_pb2.ExecuteRequest:
    request = gate_pb2.ExecuteRequest(
        decision_id=decision.decision_id,
        args_json=json.dumps(dict(args)),
        duration_us=duration_us,
        status=STATUSES[status],
        error=error,
        wrap_output=wrap_output,
        # A person who approved the call in the harness's own prompt, by name: toolgate records
        # the approval before the run (the token needs `harness_approvals` with auth on).
        approved_in_harness=approved_in_harness,
    )
    if output is not None:
        request.output, request.result_bytes = clipped(text_of(output), decision.max_output_chars)
    return request


def session(session_id: str, actor_id: str, actor_kind: str, delegation_chain: tuple[str, ...],
            task_type: str) -> dict[str, Any]:
    """The fields every Decide of a session carries."""
    actor = {"id": actor_id, "kind": actor_kind, "delegation_chain": list(delegation_chain)}
    return {"session_id": session_id, "task_type": task_type, "actor": actor}


def bearer(token: Optional[str]) -> Optional[tuple[tuple[str, str], ...]]:
    """The metadata that carries a bearer token, when the server's auth is on."""
    return (("authorization", f"Bearer {token}"),) if token else None


def admitted(decision: Decision, approval: Optional[Approval], waited: float) -> Call:
    """The call to run once the decision, and its approval if it needed one, let it;
    `Denied` otherwise."""
    if decision.outcome == "deny":
        raise Denied(refused(decision, decision.reason))
    if approval is not None:
        refusal = verdict_refusal(decision, approval, waited)
        if refusal is not None:
            raise Denied(refusal)
    return Call(decision=decision, dry_run=decision.outcome == "dry_run", args=decision.args,
                approval=approval)


def refused(decision: Decision, reason: str, approval: Optional[Approval] = None) -> GuardResult:
    return GuardResult(decision=decision, ran=False, reason=reason, approval=approval)


def verdict_refusal(decision: Decision, approval: Approval, waited: float) -> Optional[GuardResult]:
    """Why an approval does not let the call run; None when it does."""
    if approval.pending or approval.state == "withdrawn":
        return refused(decision, f"no approval within {waited:g} s: withdrawn", approval)
    if approval.outcome != "allow":
        by = f" by {approval.approver}" if approval.approver else ""
        return refused(decision, f"approval {approval.state}{by}: {approval.comment}", approval)
    return None


# Functions as tools.


def bound_args(function: Callable[..., Any], args: tuple, kwargs: dict[str, Any]) -> dict[str, Any]:
    """A call's arguments by name, positional ones included (defaults left out: they are the
    function's, not the agent's)."""
    signature = inspect.signature(function)
    bound = signature.bind(*args, **kwargs)
    named = dict(bound.arguments)
    for name, parameter in signature.parameters.items():
        if parameter.kind == parameter.VAR_KEYWORD and name in named:
            named.update(named.pop(name))
        elif parameter.kind == parameter.VAR_POSITIONAL and name in named:
            raise TypeError(f"a guarded tool takes named arguments; *{name} has no name")
    return named


def unaccepted(function: Callable[..., Any], args: Mapping[str, Any]) -> list[str]:
    """The names in `args` that `function` does not take (a rewrite may add some)."""
    parameters = inspect.signature(function).parameters
    if any(p.kind == p.VAR_KEYWORD for p in parameters.values()):
        return []
    return sorted(name for name in args if name not in parameters)
