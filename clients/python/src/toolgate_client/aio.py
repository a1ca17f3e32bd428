"""The asyncio client: the same calls and the same guard as `Toolgate`, on `grpc.aio`, for
harnesses whose tools are coroutines.

    tg = AsyncToolgate("127.0.0.1:50051", session_id="s1", actor_id="agent-1")
    result = await tg.guard("read", {"path": "README.md"}, run=read_file)

`run` may be a coroutine function (cancelled when it runs out the decision's `timeout_ms`)
or a plain function (run in a worker thread, `asyncio.to_thread`, and given up on at the
timeout, as the sync client does).
"""

from __future__ import annotations

import asyncio
import functools
import inspect
import time
from typing import Any, Awaitable, Callable, Mapping, Optional

import grpc

from toolgate_client._model import (
    Approval, Call, Decision, Denied, GuardResult, NotRecorded, Report, ToolgateError,
    ToolTimedOut, Unavailable, Violation, admitted, approval_from, bearer, bound_args,
    decide_request, decision_from, error_from, execute_request, refused, report_from, session,
)
from toolgate_client.client import MAX_AWAIT_MS, _call_with, channel_for
from toolgate_client.v1 import approvals_pb2, approvals_pb2_grpc, gate_pb2_grpc

__all__ = ["AsyncToolgate"]


class AsyncToolgate:
    """`Toolgate` for asyncio: every call is a coroutine; `guard`, `guarded` (`async with`) and
    `tool` take coroutine functions. `channel` is a `grpc.aio` channel, when given."""

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
        channel: Optional[grpc.aio.Channel] = None,
    ):
        self._channel = channel or channel_for(
            target, credentials, grpc.aio.secure_channel, grpc.aio.insecure_channel
        )
        self._gate = gate_pb2_grpc.GateStub(self._channel)
        self._approvals = approvals_pb2_grpc.ApprovalsStub(self._channel)
        self._base = session(session_id, actor_id, actor_kind, delegation_chain, task_type)
        self.session_id = session_id
        self.approval_timeout = approval_timeout
        self.rpc_timeout = rpc_timeout
        self._metadata = bearer(token)

    async def close(self) -> None:
        await self._channel.close()

    async def __aenter__(self) -> "AsyncToolgate":
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def decide(self, tool: str, args: Mapping[str, Any], **options: Any) -> Decision:
        request = decide_request(self._base, tool, args, **options)
        return decision_from(await self._call(self._gate.Decide, request), args)

    async def execute(self, decision: Decision, args: Mapping[str, Any], **report: Any) -> Report:
        return await self._report(execute_request(decision, args, **report))

    async def await_approval(self, decision: Decision, timeout: Optional[float] = None) -> Approval:
        deadline = time.monotonic() + (self.approval_timeout if timeout is None else timeout)
        while True:
            left_ms = max(0, int((deadline - time.monotonic()) * 1000))
            wait_ms = min(left_ms, MAX_AWAIT_MS)
            request = approvals_pb2.AwaitRequest(decision_id=decision.decision_id, timeout_ms=wait_ms)
            answer = await self._call(self._approvals.Await, request, wait_ms / 1000, ready=True)
            approval = approval_from(answer)
            if not approval.pending or left_ms == 0:
                return approval

    async def withdraw(self, decision: Decision, reason: str = "") -> Approval:
        request = approvals_pb2.WithdrawRequest(decision_id=decision.decision_id, reason=reason)
        return approval_from(await self._call(self._approvals.Withdraw, request))

    async def guard(
        self,
        tool: str,
        args: Mapping[str, Any],
        run: Callable[[dict[str, Any]], Any],
        *,
        dry_run: Optional[Callable[[dict[str, Any]], Any]] = None,
        raise_on_deny: bool = False,
        **decide: Any,
    ) -> GuardResult:
        """As `Toolgate.guard`; a coroutine `run` is cancelled when it runs out its time."""
        decision = await self.decide(tool, args, **decide)
        return await self.resume(decision, run, dry_run=dry_run, raise_on_deny=raise_on_deny)

    async def resume(
        self,
        decision: Decision,
        run: Callable[[dict[str, Any]], Any],
        *,
        dry_run: Optional[Callable[[dict[str, Any]], Any]] = None,
        raise_on_deny: bool = False,
    ) -> GuardResult:
        """As `Toolgate.resume`: `guard` from a decision already made."""
        try:
            call = await self._admit(decision)
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
        timeout_ms = call.decision.timeout_ms
        started = time.monotonic()
        try:
            output = await asyncio.wait_for(_started(runner, call.args),
                                            timeout_ms / 1000 if timeout_ms > 0 else None)
        except asyncio.TimeoutError:
            duration_us = int((time.monotonic() - started) * 1_000_000)
            recorded = await self._record(call, None, None, duration_us=duration_us,
                                          status="timeout", error=f"ran out its {timeout_ms} ms")
            raise ToolTimedOut(call.decision, recorded.report)  # type: ignore[arg-type]
        except Exception as error:  # the tool's own: reported, then raised again
            duration_us = int((time.monotonic() - started) * 1_000_000)
            await self._record(call, None, error, duration_us=duration_us, status="error",
                               error=str(error))
            raise
        duration_us = int((time.monotonic() - started) * 1_000_000)
        return await self._record(call, output, None, duration_us=duration_us)

    def guarded(self, tool: str, args: Mapping[str, Any], **decide: Any) -> "_Guarded":
        """`async with tg.guarded(...) as call:` as `Toolgate.guarded`."""
        return _Guarded(self, tool, dict(args), decide)

    def tool(self, name: str, **decide: Any) -> Callable[[Callable[..., Any]], Callable[..., Awaitable[str]]]:
        """A decorator for coroutine functions (plain ones too): calling the result decides,
        runs and reports, and returns the processed output; a denial raises `Denied`."""

        def wrap(function: Callable[..., Any]) -> Callable[..., Awaitable[str]]:
            takes_dry_run = "dry_run" in inspect.signature(function).parameters

            def runner(**extra: Any) -> Callable[[dict[str, Any]], Any]:
                if not inspect.iscoroutinefunction(function):
                    return lambda a: _call_with(function, a, **extra)

                async def run(a: dict[str, Any]) -> Any:
                    return await _call_with(function, a, **extra)

                return run

            @functools.wraps(function)
            async def guarded(*args: Any, **kwargs: Any) -> str:
                named = bound_args(function, args, kwargs)
                dry = runner(dry_run=True) if takes_dry_run else None
                result = await self.guard(name, named, runner(), dry_run=dry, raise_on_deny=True,
                                          **decide)
                return result.output

            return guarded

        return wrap

    async def _admit(self, decision: Decision) -> Call:
        approval = None
        if decision.outcome == "require_approval":
            try:
                approval = await self.await_approval(decision)
                if approval.pending:
                    approval = await self._give_up(decision)
            except Unavailable as error:
                error.decision = decision
                raise
        return admitted(decision, approval, self.approval_timeout)

    async def _give_up(self, decision: Decision) -> Approval:
        reason = f"the agent stopped waiting after {self.approval_timeout:g} s"
        try:
            return await self.withdraw(decision, reason)
        except ToolgateError as error:
            if error.code != grpc.StatusCode.FAILED_PRECONDITION:
                raise
            return await self.await_approval(decision, timeout=0)

    async def _record(self, call: Call, output: Any, tool_error: Optional[BaseException],
                      **report: Any) -> GuardResult:
        request = execute_request(call.decision, call.args, output=output, **report)

        async def send(retry: bool = False) -> GuardResult:
            answer = await self._report(request, ready=retry)
            result = GuardResult(decision=call.decision, ran=True, output=answer.output,
                                 truncated=answer.truncated, approval=call.approval, report=answer)
            if tool_error is None:
                call.result = result
            return result

        try:
            return await send()
        except (Violation, Denied):
            raise
        except ToolgateError as error:
            raise NotRecorded(error, call.decision, output, tool_error,
                              report.get("status", "ok"), lambda: send(retry=True)) from error

    async def _report(self, request: Any, ready: bool = False) -> Report:
        report = report_from(await self._call(self._gate.Execute, request, ready=ready))
        if report.violation:
            raise Violation(report)
        return report

    async def _call(self, method: Callable[..., Any], request: Any, waits: float = 0.0,
                    ready: bool = False) -> Any:
        timeout = waits + self.rpc_timeout
        try:
            return await method(request, metadata=self._metadata, timeout=timeout,
                                wait_for_ready=ready)
        except grpc.RpcError as error:
            raise error_from(error) from error


async def _started(runner: Callable[[dict[str, Any]], Any], args: dict[str, Any]) -> Any:
    """Runs the tool: a coroutine function on the loop, a plain function in a worker thread."""
    if inspect.iscoroutinefunction(runner):
        return await runner(args)
    output = await asyncio.to_thread(runner, args)
    if inspect.isawaitable(output):
        return await output
    return output


class _Guarded:
    def __init__(self, client: AsyncToolgate, tool: str, args: dict[str, Any], decide: dict[str, Any]):
        self._client = client
        self._tool = tool
        self._args = args
        self._decide = decide
        self._call: Optional[Call] = None
        self._started = 0.0

    async def __aenter__(self) -> Call:
        decision = await self._client.decide(self._tool, self._args, **self._decide)
        self._call = await self._client._admit(decision)
        self._started = time.monotonic()
        return self._call

    async def __aexit__(self, kind: Any, error: Any, trace: Any) -> bool:
        call = self._call
        assert call is not None
        duration_us = int((time.monotonic() - self._started) * 1_000_000)
        if isinstance(error, Denied):
            return False
        if error is not None:
            await self._client._record(call, None, error, duration_us=duration_us, status="error",
                                       error=str(error))
            return False
        await self._client._record(call, call.output, None, duration_us=duration_us)
        return False
