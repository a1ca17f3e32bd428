"""Google's Agent Development Kit: every tool call of every agent in a run decided by toolgate
before it runs and recorded after, through the seam ADK offers for it, a plugin of the app
(docs/frameworks.md)::

    app = App(name="support", root_agent=agent, plugins=[ToolgatePlugin(toolgate)])
    runner = Runner(app=app, session_service=sessions)           # toolgate: an AsyncToolgate

- Each call is decided with the tool's name and arguments, in the session of the ADK session
  (`session.id`), under the idempotency key `adk:<function_call_id>`.
- A denial (and a dry run) does not run the tool: the model gets `{"error": <toolgate's
  reason>}` as the tool's result, and the run goes on.
- A call that needs approval uses ADK's own tool confirmation: the run pauses with an
  `adk_request_confirmation` call (toolgate's decision in its payload); resumed with the person's
  `FunctionResponse` (`{"confirmed": true, "payload": {"approver": "alice"}}`), an approved call
  runs once, recorded as the approver's; a refused one never runs, the model is told, and
  toolgate's pending approval is withdrawn.
- A rewrite runs with the rewritten arguments.
- The run is reported when the tool returns (an MCP result with `isError` as an error) or raises
  (recorded, then raised as without toolgate); a sidecar that cannot be reached ends the run
  with `ToolgateError` before the tool runs, unless `fail_open`.
"""

from __future__ import annotations

import asyncio
from typing import Any, Optional

from google.adk.plugins import BasePlugin

from .._model import Decision, Unavailable
from ..aio import AsyncToolgate
from ._seam import META, Stopwatch, error_text, fingerprint, overruled, refusal, withdraw_async

__all__ = ["ToolgatePlugin"]

#: How many calls are kept between ADK's confirmation request and the person's answer.
MAX_PENDING = 10_000


class _Call:
    """One decided call, from its decision to its report."""

    def __init__(self, decision: Decision, asked: str):
        self.decision = decision
        #: The call it was decided for (`fingerprint`).
        self.asked = asked
        self.approver = ""
        self.took: Optional[Stopwatch] = None


class ToolgatePlugin(BasePlugin):
    """A runner plugin that has `toolgate` (an `AsyncToolgate`) decide every tool call first."""

    def __init__(self, toolgate: AsyncToolgate, *, approver: str = "adk:user",
                 fail_open: bool = False, name: str = "toolgate", **decide: Any):
        super().__init__(name=name)
        self._toolgate = toolgate
        self._approver = approver
        self._fail_open = fail_open
        self._decide = decide
        # Calls paused for a person, by call id, until the confirmation's answer comes back.
        self._waiting: dict[str, _Call] = {}
        # Calls between their before- and after-callbacks, by their ToolContext: a model may give
        # two calls of one turn one id, and ADK runs them at once.
        self._running: dict[int, _Call] = {}

    async def before_tool_callback(self, *, tool: Any, tool_args: dict[str, Any],
                                   tool_context: Any) -> Optional[dict]:
        call_id = tool_context.function_call_id or ""
        session = tool_context.session.id
        confirmation = tool_context.tool_confirmation
        # The call, in its session: another session's call under the same id is not it.
        asked = f"{session}\n{fingerprint(tool.name, dict(tool_args))}"
        call = self._waiting.get(call_id)
        if call is None or call.asked != asked:
            try:
                decision = await self._toolgate.decide(
                    tool.name, dict(tool_args), session_id=session,
                    idempotency_key=f"adk:{call_id}" if call_id else "", **self._decide)
            except Unavailable:  # not a refusal, not a bad request: those never run the tool
                if self._fail_open:
                    return None
                raise
            call = _Call(decision, asked)
        decision = call.decision
        if decision.outcome == "require_approval":
            if confirmation is None:
                # ADK's own human-in-the-loop: the run pauses until a person answers.
                _keep(self._waiting, call_id, call)
                tool_context.request_confirmation(
                    hint=f"toolgate: {decision.reason}",
                    payload={META: {"decision_id": decision.decision_id, "reason": decision.reason}})
                tool_context.actions.skip_summarization = True
                return {"error": refusal(decision)}
            self._waiting.pop(call_id, None)
            if not confirmation.confirmed:
                await withdraw_async(self._toolgate, decision, "refused in the run")
                return {"error": f"a person refused this call: {decision.reason}"}
            # The person's confirmation stands only while toolgate's approval still waits.
            approval = await self._toolgate.await_approval(decision, timeout=0)
            why = overruled(approval)
            if why is not None:
                return {"error": why}
            payload = confirmation.payload if isinstance(confirmation.payload, dict) else {}
            if approval.pending:
                call.approver = str(payload.get("approver") or self._approver)
        elif not decision.allowed:
            return {"error": refusal(decision)}
        if decision.outcome == "rewrite":
            # The tool takes these very arguments: rewritten in place.
            tool_args.clear()
            tool_args.update(decision.args)
        call.took = Stopwatch()
        _keep(self._running, id(tool_context), call)
        return None

    async def after_tool_callback(self, *, tool: Any, tool_args: dict[str, Any], tool_context: Any,
                                  result: Any) -> Optional[dict]:
        if (tool_context.function_call_id or "") in tool_context.actions.requested_tool_confirmations:
            return None  # paused for a person: reported when it runs
        call = self._running.pop(id(tool_context), None)
        if call is None or call.took is None:
            return None  # refused, or unrecorded (fail_open)
        failed = isinstance(result, dict) and result.get("isError") is True
        report = await self._toolgate.execute(call.decision, dict(tool_args), output=result,
                                              duration_us=call.took.us(),
                                              status="error" if failed else "ok",
                                              error="the tool returned an error" if failed else "",
                                              approved_in_harness=call.approver)
        # Output past the decision's limit reaches the model cut, as toolgate cut it.
        return {"result": report.output} if report.truncated else None

    async def on_tool_error_callback(self, *, tool: Any, tool_args: dict[str, Any],
                                     tool_context: Any, error: BaseException) -> Optional[dict]:
        call = self._running.pop(id(tool_context), None)
        if call is not None and call.took is not None:
            why = "the run was cancelled" if isinstance(error, asyncio.CancelledError) \
                else error_text(error)
            report = self._toolgate.execute(call.decision, dict(tool_args), status="error",
                                            error=why, duration_us=call.took.us(),
                                            approved_in_harness=call.approver)
            await asyncio.shield(report)
        return None  # ADK goes on as without toolgate: the error is raised


def _keep(calls: dict, key: Any, call: _Call) -> None:
    """`calls[key] = call`, forgetting the oldest past MAX_PENDING (a run never resumed leaves
    its call waiting)."""
    calls.pop(key, None)
    if len(calls) >= MAX_PENDING:
        calls.pop(next(iter(calls)))
    calls[key] = call
