"""The OpenAI Agents SDK: every function-tool call of an agent decided by toolgate before it runs
and recorded after, through the seams the SDK offers on each tool: its approval check
(`needs_approval`), its input and output guardrails, and its failure function
(docs/frameworks.md)::

    guard = ToolgateGuard(toolgate)                         # toolgate: an AsyncToolgate
    result = await Runner.run(guard.agent(agent), "refund order 42")

- Each call is decided once, with the tool's name and arguments, in the session named by the
  run's context (a `session_id` attribute or key) or else the client's, under the idempotency
  key `openai-agents:<call_id>`.
- A denial (and a dry run) does not run the tool: the model gets toolgate's reason as the tool's
  output (the guardrail's `reject_content`) and the run goes on.
- A call that needs approval uses the SDK's own human-in-the-loop: the run stops with an
  interruption (`result.interruptions`); the application answers with `guard.approve(state, item,
  approver="alice")` or `guard.reject(state, item, reason)` and runs the state again. An approved
  call runs once, recorded as the approver's; a refused one never runs, and toolgate's pending
  approval is withdrawn.
- A rewrite cannot be carried (a guardrail cannot change a call's arguments): the model is told
  the arguments toolgate allows instead, and may call again with them.
- The run is reported when the tool returns, or raises (recorded before the SDK turns the error
  into the model's message); a sidecar that cannot be reached blocks the call, unless `fail_open`.
"""

from __future__ import annotations

import copy
import inspect
import json
from typing import Any, Optional

from agents import (
    Agent,
    FunctionTool,
    RunState,
    ToolApprovalItem,
    ToolGuardrailFunctionOutput,
    tool_input_guardrail,
    tool_output_guardrail,
)
from agents.tool import (
    resolve_function_tool_failure_error_function,
    set_function_tool_failure_error_function,
)

from .._model import Decision, Unavailable
from ..aio import AsyncToolgate
from ._seam import Stopwatch, error_text, fingerprint, overruled, refusal, withdraw_async

__all__ = ["ToolgateGuard"]

#: How many calls' decisions are kept between the SDK's interruption and its resumption.
MAX_PENDING = 10_000
#: A call id no model gives: whether a tool is approved for it says whether it is for all.
PROBE = "\x00toolgate-probe"


class _Call:
    """One decided call of a tool, from the decision to its report."""

    def __init__(self, decision: Optional[Decision], asked: str, key: str):
        #: None: the sidecar could not be reached and `fail_open` lets the call run unrecorded.
        self.decision = decision
        #: The call it was decided for (`fingerprint`).
        self.asked = asked
        #: Where the guard keeps it: its session and call id.
        self.key = key
        #: This guard interrupted the run for it: a person's approval in the SDK stands only then.
        self.interrupted = False
        self.approver = ""
        self.took: Optional[Stopwatch] = None


class ToolgateGuard:
    """Governs agents' function tools with `toolgate` (an `AsyncToolgate`)."""

    def __init__(self, toolgate: AsyncToolgate, *, approver: str = "openai-agents:user",
                 fail_open: bool = False, **decide: Any):
        self._toolgate = toolgate
        self._approver = approver
        self._fail_open = fail_open
        self._decide_options = decide
        self._calls: dict[str, _Call] = {}

    def agent(self, agent: Agent) -> Agent:
        """A clone of `agent` whose function tools are each governed (`tool`); the others
        (hosted tools, handoffs, MCP servers' tools) are left as they are (docs say so)."""
        tools = [self.tool(t) if isinstance(t, FunctionTool) else t for t in agent.tools]
        return agent.clone(tools=tools)

    def tool(self, tool: FunctionTool) -> FunctionTool:
        """A copy of `tool` whose every call toolgate decides first and records after."""
        governed = copy.copy(tool)
        own_approval = tool.needs_approval

        async def needs_approval(ctx: Any, params: dict[str, Any], call_id: str) -> bool:
            call = await self._decided(tool.name, params, call_id, ctx)
            if call.decision is not None and call.decision.outcome == "require_approval":
                call.interrupted = True
                return True
            if callable(own_approval):
                asked = own_approval(ctx, params, call_id)
                return bool(await asked if inspect.isawaitable(asked) else asked)
            return bool(own_approval)

        @tool_input_guardrail(name="toolgate")
        async def before(data: Any) -> ToolGuardrailFunctionOutput:
            context = data.context
            args = json.loads(context.tool_arguments or "{}")
            call = await self._decided(context.tool_name, args, context.tool_call_id, context)
            decision = call.decision
            # A rewrite to the very arguments the call has is an allow (a guardrail cannot change
            # a call's arguments, so any other rewrite is refused below).
            if decision is None or decision.outcome == "allow" or \
                    (decision.outcome == "rewrite" and decision.args == args):
                call.took = Stopwatch()
                return ToolGuardrailFunctionOutput.allow()
            # A blanket approval (`always_approve`) answers for any call id and skips
            # needs_approval: it stands only for a call this guard interrupted itself.
            blanket = context.is_tool_approved(context.tool_name, PROBE) is True
            if decision.outcome == "require_approval" and (call.interrupted or not blanket) and \
                    context.is_tool_approved(context.tool_name, context.tool_call_id):
                # The person's approval here stands only while toolgate's still waits.
                approval = await self._toolgate.await_approval(decision, timeout=0)
                why = overruled(approval)
                if why is not None:
                    self._calls.pop(_key(context, context.tool_call_id), None)
                    return ToolGuardrailFunctionOutput.reject_content(why)
                call.approver = (call.approver or self._approver) if approval.pending else ""
                call.took = Stopwatch()
                return ToolGuardrailFunctionOutput.allow()
            self._calls.pop(_key(context, context.tool_call_id), None)
            if decision.outcome == "rewrite":
                return ToolGuardrailFunctionOutput.reject_content(
                    f"toolgate allows this call only as {json.dumps(decision.args)}: "
                    f"{decision.reason}")
            return ToolGuardrailFunctionOutput.reject_content(refusal(decision))

        @tool_output_guardrail(name="toolgate")
        async def after(data: Any) -> ToolGuardrailFunctionOutput:
            call = self._calls.pop(_key(data.context, data.context.tool_call_id), None)
            if call is not None and call.decision is not None and call.took is not None:
                report = await self._toolgate.execute(
                    call.decision, call.decision.args, output=data.output,
                    duration_us=call.took.us(), approved_in_harness=call.approver)
                if report.truncated:
                    # Output past the decision's limit reaches the model cut, as toolgate cut it
                    # (the guardrail's way to give the model other content than the tool's).
                    return ToolGuardrailFunctionOutput.reject_content(report.output)
            return ToolGuardrailFunctionOutput.allow()

        failure = resolve_function_tool_failure_error_function(tool)

        async def failed(ctx: Any, error: Exception) -> str:
            # The tool raised: recorded here, before the SDK makes the model's message of it
            # (the output guardrail then finds the call reported).
            call = self._calls.pop(_key(ctx, getattr(ctx, "tool_call_id", "")), None)
            if call is not None and call.decision is not None and call.took is not None:
                await self._toolgate.execute(call.decision, call.decision.args, status="error",
                                             error=error_text(error), duration_us=call.took.us(),
                                             approved_in_harness=call.approver)
            if failure is None:
                raise error
            message = failure(ctx, error)
            return await message if inspect.isawaitable(message) else message

        governed.needs_approval = needs_approval
        # First, so that no other guardrail's refusal or rewrite comes before toolgate's.
        governed.tool_input_guardrails = [before, *(tool.tool_input_guardrails or [])]
        governed.tool_output_guardrails = [after, *(tool.tool_output_guardrails or [])]
        set_function_tool_failure_error_function(governed, failed)
        return governed

    def approve(self, state: RunState, item: ToolApprovalItem, approver: str = "") -> None:
        """Approves an interrupted call as `approver` (the guard's by default) in the SDK; never
        a blanket approval: each call toolgate holds needs its own."""
        call = self._waiting_for(item)
        if call is not None:
            call.approver = approver or self._approver
        state.approve(item)

    async def reject(self, state: RunState, item: ToolApprovalItem, reason: str = "") -> None:
        """Refuses an interrupted call in the SDK and withdraws toolgate's pending approval."""
        call = self._waiting_for(item)
        if call is not None:
            self._calls.pop(call.key, None)
        if call is not None and call.decision is not None:
            await withdraw_async(self._toolgate, call.decision, f"refused in the run: {reason}".strip())
        why = f"a person refused this call: {reason}" if reason else "a person refused this call"
        state.reject(item, rejection_message=why)

    def _waiting_for(self, item: ToolApprovalItem) -> Optional[_Call]:
        """The call the guard interrupted for an item of the SDK's interruptions (in whichever
        session: the item does not say)."""
        call_id = item.raw_item.call_id
        return next((call for call in self._calls.values()
                     if call.interrupted and call.key.endswith(f"\n{call_id}")), None)

    async def _decided(self, tool: str, args: dict[str, Any], call_id: str, ctx: Any) -> _Call:
        """The call's decision, made the first time it is asked for (by this very call)."""
        # The call, in its session: another session's call under the same id is not it.
        asked = f"{_session(ctx)}\n{fingerprint(tool, args)}"
        key = _key(ctx, call_id)
        call = self._calls.get(key)
        if call is not None and call.asked == asked:
            return call
        try:
            decision: Optional[Decision] = await self._toolgate.decide(
                tool, args, session_id=_session(ctx) or self._toolgate.session_id,
                idempotency_key=f"openai-agents:{call_id}", **self._decide_options)
        except Unavailable:  # a refusal or a bad request never runs the tool
            if not self._fail_open:
                raise
            decision = None
        if len(self._calls) >= MAX_PENDING:
            self._calls.pop(next(iter(self._calls)))
        call = self._calls[key] = _Call(decision, asked, key)
        return call


def _key(ctx: Any, call_id: str) -> str:
    """Where a call is kept: its session and its id (two sessions' calls may share an id)."""
    return f"{_session(ctx)}\n{call_id}"


def _session(ctx: Any) -> str:
    """The session the run's own context names (`context=` of `Runner.run`), if it names one."""
    context = getattr(ctx, "context", None)
    named = context.get("session_id") if isinstance(context, dict) else \
        getattr(context, "session_id", None)
    return named if isinstance(named, str) else ""
