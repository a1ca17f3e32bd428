"""The synchronous client: decide, run, report.

A harness wraps each tool call in `Toolgate.guard` (a call), `Toolgate.guarded` (a context
manager) or `Toolgate.tool` (a decorator). Each asks Decide first and runs the tool only when
toolgate allows it — with the rewritten arguments after a rewrite, after a person's approval
when one is required — within the decision's `timeout_ms`, measures the tool's own run time,
reports it with Execute, and hands back the output as toolgate processed it. `AsyncToolgate`
(`toolgate_client.aio`) does the same for coroutines.
"""

from __future__ import annotations

import functools
import inspect
import threading
import time
from typing import Any, Callable, Mapping, Optional

import grpc

from toolgate_client._model import (
    Approval, Call, Decision, Denied, GuardResult, NotRecorded, Report, ToolgateError,
    ToolTimedOut, Unavailable, Violation, admitted, approval_from, bearer, bound_args,
    decide_request, decision_from, error_from, execute_request, refused, report_from, session,
    unaccepted,
)
from toolgate_client.v1 import approvals_pb2, approvals_pb2_grpc, gate_pb2_grpc

#: The longest one Await call waits on the server (its own limit).
MAX_AWAIT_MS = 600_000


def channel_for(target: str, credentials: Optional[grpc.ChannelCredentials], secure: Callable,
                insecure: Callable) -> Any:
    # Over a unix socket grpc sends the socket's path as the :authority. The server accepts
    # it now; naming a host keeps this client working against servers from before that.
    options = [("grpc.default_authority", "localhost")] if target.startswith("unix:") else []
    if credentials is not None:
        return secure(target, credentials, options=options)
    return insecure(target, options=options)


class Toolgate:
    """A client for one agent session.

    `target` is `host:port` (`127.0.0.1:50051`) or `unix:/path/to.sock`; `token` is the bearer
    token when the server's auth is on; `credentials` (`grpc.ssl_channel_credentials(...)`, with
    a client certificate for mutual TLS) when the server serves TLS. Every RPC has a deadline of
    `rpc_timeout` seconds (an Await, its wait plus that); `approval_timeout` is how long `guard`
    waits for a verdict before it withdraws the approval.
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
        rpc_timeout: float = 10.0,
        token: Optional[str] = None,
        credentials: Optional[grpc.ChannelCredentials] = None,
        channel: Optional[grpc.Channel] = None,
    ):
        self._channel = channel or channel_for(
            target, credentials, grpc.secure_channel, grpc.insecure_channel
        )
        self._gate = gate_pb2_grpc.GateStub(self._channel)
        self._approvals = approvals_pb2_grpc.ApprovalsStub(self._channel)
        self._base = session(session_id, actor_id, actor_kind, delegation_chain, task_type)
        self.session_id = session_id
        self.approval_timeout = approval_timeout
        self.rpc_timeout = rpc_timeout
        self._metadata = bearer(token)

    def close(self) -> None:
        self._channel.close()

    def __enter__(self) -> "Toolgate":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # The calls, typed.

    def decide(self, tool: str, args: Mapping[str, Any], **options: Any) -> Decision:
        """Asks whether `tool` may run with `args`; the answer is on the trail before it comes.
        Options: action, resource, context, allow_write, allow_bash, max_output_chars,
        dry_run, idempotency_key, timeout_ms."""
        request = decide_request(self._base, tool, args, **options)
        return decision_from(self._call(self._gate.Decide, request), args)

    def execute(self, decision: Decision, args: Mapping[str, Any], **report: Any) -> Report:
        """Reports a run of the decided call (output, duration_us, status "ok", "error" or
        "timeout", error, wrap_output); returns the processed output. Raises `Violation` when
        toolgate recorded the report as breaking its decision."""
        return self._report(execute_request(decision, args, **report))

    def await_approval(self, decision: Decision, timeout: Optional[float] = None) -> Approval:
        """Waits for the verdict on a decision that requires approval, up to `timeout` seconds
        (`approval_timeout` by default); returns the approval, still pending if none came."""
        deadline = time.monotonic() + (self.approval_timeout if timeout is None else timeout)
        while True:
            left_ms = max(0, int((deadline - time.monotonic()) * 1000))
            wait_ms = min(left_ms, MAX_AWAIT_MS)
            request = approvals_pb2.AwaitRequest(decision_id=decision.decision_id, timeout_ms=wait_ms)
            # A wait may outlast a restart of the server: it waits for the connection too.
            answer = self._call(self._approvals.Await, request, wait_ms / 1000, ready=True)
            approval = approval_from(answer)
            if not approval.pending or left_ms == 0:
                return approval

    def withdraw(self, decision: Decision, reason: str = "") -> Approval:
        """Withdraws the pending approval of a decision: no verdict can follow, and the call
        may not run. Raises `ToolgateError` (FAILED_PRECONDITION) once a verdict exists."""
        request = approvals_pb2.WithdrawRequest(decision_id=decision.decision_id, reason=reason)
        return approval_from(self._call(self._approvals.Withdraw, request))

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
        """Decides, runs `run(args)` when allowed (`dry_run(args)` when only a dry run is)
        within the decision's `timeout_ms`, reports, and returns the result. A denial is a
        `GuardResult` with `ran=False`, or `Denied` with `raise_on_deny=True`. The tool's own
        exception is reported as an error and raised again; a tool past its time is reported
        as a timeout (`ToolTimedOut`); a run whose report fails raises `NotRecorded`."""
        for function in (run, dry_run):
            if inspect.iscoroutinefunction(function):
                raise TypeError("a coroutine function needs AsyncToolgate (toolgate_client.aio)")
        return self.resume(self.decide(tool, args, **decide), run, dry_run=dry_run,
                           raise_on_deny=raise_on_deny)

    def resume(
        self,
        decision: Decision,
        run: Callable[[dict[str, Any]], Any],
        *,
        dry_run: Optional[Callable[[dict[str, Any]], Any]] = None,
        raise_on_deny: bool = False,
    ) -> GuardResult:
        """`guard` from a decision already made: after an `Unavailable` during the wait for
        its approval (`error.decision`), wait again and run as `guard` would."""
        try:
            call = self._admit(decision)
        except Denied as denied:
            if raise_on_deny:
                raise
            return denied.result
        runner = dry_run if call.dry_run else run
        if runner is None:
            result = refused(call.decision, "only a dry run is allowed and none was given")
            if raise_on_deny:
                raise Denied(result)
            return result
        started = time.monotonic()
        finished, output, error = _run_within(runner, call.args, call.decision.timeout_ms)
        duration_us = int((time.monotonic() - started) * 1_000_000)
        if not finished:
            ran_out = f"ran out its {call.decision.timeout_ms} ms"
            report = self._record(call, None, None, duration_us=duration_us, status="timeout",
                                  error=ran_out).report
            raise ToolTimedOut(call.decision, report)  # type: ignore[arg-type]
        if error is not None:
            self._record(call, None, error, duration_us=duration_us, status="error", error=str(error))
            raise error
        return self._record(call, output, None, duration_us=duration_us)

    def guarded(self, tool: str, args: Mapping[str, Any], **decide: Any) -> "_Guarded":
        """A context manager: `with tg.guarded("write", args, allow_write=True) as call:` runs
        the block only when allowed (raising `Denied` otherwise), with `call.args` to run with;
        set `call.output`. Leaving the block reports the run (an exception as an error) and
        sets `call.result`. The block's time is measured, not limited: `guard` applies the
        decision's `timeout_ms`."""
        return _Guarded(self, tool, dict(args), decide)

    def tool(self, name: str, **decide: Any) -> Callable[[Callable[..., Any]], Callable[..., str]]:
        """A decorator: the function's arguments, positional or named, are the tool's
        arguments; calling it decides, runs and reports, and returns the processed output. A
        denial raises `Denied`. A function with a `dry_run` parameter is run with
        `dry_run=True` when only a dry run is allowed."""

        def wrap(function: Callable[..., Any]) -> Callable[..., str]:
            if inspect.iscoroutinefunction(function):
                raise TypeError("a coroutine function needs AsyncToolgate (toolgate_client.aio)")
            takes_dry_run = "dry_run" in inspect.signature(function).parameters

            @functools.wraps(function)
            def guarded(*args: Any, **kwargs: Any) -> str:
                named = bound_args(function, args, kwargs)
                dry = (lambda a: _call_with(function, a, dry_run=True)) if takes_dry_run else None
                result = self.guard(name, named, lambda a: _call_with(function, a), dry_run=dry,
                                    raise_on_deny=True, **decide)
                return result.output

            return guarded

        return wrap

    # The steps.

    def _admit(self, decision: Decision) -> Call:
        """The call to run, once the decision (and any approval) lets it; `Denied` otherwise."""
        approval = None
        if decision.outcome == "require_approval":
            try:
                approval = self.await_approval(decision)
                if approval.pending:
                    approval = self._give_up(decision)
            except Unavailable as error:
                # The decision stands: `resume(error.decision, run)` waits again.
                error.decision = decision
                raise
        return admitted(decision, approval, self.approval_timeout)

    def _give_up(self, decision: Decision) -> Approval:
        """Withdraws an approval nobody answered in time; a verdict given meanwhile stands."""
        reason = f"the agent stopped waiting after {self.approval_timeout:g} s"
        try:
            return self.withdraw(decision, reason)
        except ToolgateError as error:
            if error.code != grpc.StatusCode.FAILED_PRECONDITION:
                raise
            return self.await_approval(decision, timeout=0)

    def _record(self, call: Call, output: Any, tool_error: Optional[BaseException],
                **report: Any) -> GuardResult:
        """Reports a run; `NotRecorded` when the report does not reach the trail."""
        request = execute_request(call.decision, call.args, output=output, **report)

        def send(retry: bool = False) -> GuardResult:
            answer = self._report(request, ready=retry)
            result = GuardResult(decision=call.decision, ran=True, output=answer.output,
                                 truncated=answer.truncated, approval=call.approval, report=answer)
            if tool_error is None:
                call.result = result
            return result

        try:
            return send()
        except (Violation, Denied):
            raise
        except ToolgateError as error:
            raise NotRecorded(error, call.decision, output, tool_error,
                              report.get("status", "ok"), lambda: send(retry=True)) from error

    def _report(self, request: Any, ready: bool = False) -> Report:
        report = report_from(self._call(self._gate.Execute, request, ready=ready))
        if report.violation:
            raise Violation(report)
        return report

    def _call(self, method: Callable[..., Any], request: Any, waits: float = 0.0,
              ready: bool = False) -> Any:
        """One RPC within its deadline; `ready`: wait for a connection until then (a retry)
        instead of failing at once while the channel reconnects."""
        timeout = waits + self.rpc_timeout
        try:
            return method(request, metadata=self._metadata, timeout=timeout, wait_for_ready=ready)
        except grpc.RpcError as error:
            raise error_from(error) from error


def _call_with(function: Callable[..., Any], args: Mapping[str, Any], **extra: Any) -> Any:
    """Calls a decorated function with the arguments it was allowed to run with; a rewrite
    that adds an argument the function does not take is refused before it runs."""
    extra_names = unaccepted(function, args)
    if extra_names:
        raise TypeError(f"not run: the decided arguments name parameters the tool does not take: "
                        f"{', '.join(extra_names)}")
    return function(**args, **extra)


def _run_within(runner: Callable[[dict[str, Any]], Any], args: dict[str, Any],
                timeout_ms: int) -> tuple[bool, Any, Optional[BaseException]]:
    """Runs the tool; with a timeout, in a thread of its own, given up on (it cannot be stopped)
    once the time is out. Returns whether it finished, its output and its exception."""
    if timeout_ms <= 0:
        try:
            return True, runner(args), None
        except Exception as error:  # noqa: BLE001 - the tool's own, reported and raised again
            return True, None, error
    box: dict[str, Any] = {}

    def target() -> None:
        try:
            box["output"] = runner(args)
        except BaseException as error:  # noqa: BLE001
            box["error"] = error

    thread = threading.Thread(target=target, daemon=True, name="toolgate-tool")
    thread.start()
    thread.join(timeout_ms / 1000)
    if thread.is_alive():
        return False, None, None
    return True, box.get("output"), box.get("error")


class _Guarded:
    def __init__(self, client: Toolgate, tool: str, args: dict[str, Any], decide: dict[str, Any]):
        self._client = client
        self._tool = tool
        self._args = args
        self._decide = decide
        self._call: Optional[Call] = None
        self._started = 0.0

    def __enter__(self) -> Call:
        self._call = self._client._admit(self._client.decide(self._tool, self._args, **self._decide))
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
            self._client._record(call, None, error, duration_us=duration_us, status="error",
                                 error=str(error))
            return False
        self._client._record(call, call.output, None, duration_us=duration_us)
        return False
