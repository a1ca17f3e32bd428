"""Pydantic AI: every tool call of an agent decided by toolgate before it runs and recorded
after, through the seam Pydantic AI offers for it, a wrapper toolset (docs/frameworks.md)::

    toolset = ToolgateToolset(my_tools, toolgate)          # toolgate: an AsyncToolgate
    agent = Agent(model, toolsets=[toolset], output_type=[str, DeferredToolRequests])

- Each call is decided with the tool's name and arguments, in the session of the run's
  conversation (`conversation_id`), under the toolset's idempotency key for the call.
- A denial does not run the tool: the model gets toolgate's reason as the tool's result, and
  the run goes on (`raise_on_deny=True` raises `Denied` instead).
- A call that needs approval uses Pydantic AI's own deferred approval: the run ends with
  `DeferredToolRequests`, toolgate's decision in its metadata; resumed with the person's
  answer (`DeferredToolResults(approvals=..., metadata=requests.metadata)`), an approved call
  runs once and toolgate records the approval as the person's (`approver`) with the run.
- A rewrite runs with the rewritten arguments; a dry run is refused like a denial (Pydantic AI
  has no dry run of a tool).
- The run is reported after the tool returns or raises (duration, output, the error), a run
  cancelled mid-call as an error; a sidecar that cannot be reached blocks the call
  (`ToolgateError`), unless `fail_open`.
"""

from __future__ import annotations

import asyncio
from typing import Any

from pydantic_ai import ApprovalRequired
from pydantic_ai.toolsets import WrapperToolset

from .._model import Decision, Denied, Unavailable, refused
from ..aio import AsyncToolgate
from ._seam import META, Stopwatch, error_text, fingerprint, jsonable, overruled, refusal

__all__ = ["ToolgateToolset"]

class ToolgateToolset(WrapperToolset):
    """`wrapped`'s tools, each call decided by `toolgate` (an `AsyncToolgate`) first."""

    def __init__(self, wrapped: Any, toolgate: AsyncToolgate, *, approver: str = "pydantic-ai:user",
                 raise_on_deny: bool = False, fail_open: bool = False, **decide: Any):
        super().__init__(wrapped)
        self._toolgate = toolgate
        self._approver = approver
        self._raise_on_deny = raise_on_deny
        self._fail_open = fail_open
        self._decide = decide

    async def call_tool(self, name: str, tool_args: dict[str, Any], ctx: Any, tool: Any) -> Any:
        metadata = (ctx.tool_call_metadata or {}).get(META) if ctx.tool_call_approved else None
        # Only the very call the approval was asked for takes it (the metadata comes back from
        # the application, the call id from the model).
        if metadata is not None and metadata.get("asked") == fingerprint(name, tool_args):
            # Resumed after Pydantic AI's own approval: the decision made before the pause.
            decision = Decision(decision_id=metadata["decision_id"], outcome="require_approval",
                                reason=metadata.get("reason", ""), policy_ids=[], args_hash="",
                                max_output_chars=metadata.get("max_output_chars", 0),
                                timeout_ms=0, args=dict(tool_args), seq=0)
            # The person's approval here stands only while toolgate's still waits: not once
            # toolgate's own verdict refused it, or it expired or was withdrawn.
            approval = await self._toolgate.await_approval(decision, timeout=0)
            why = overruled(approval)
            if why is not None:
                return why
            return await self._run(decision, name, tool_args, ctx, tool,
                                   approver=self._approver if approval.pending else "")
        session = ctx.conversation_id or ctx.run_id or self._toolgate.session_id
        try:
            decision = await self._toolgate.decide(
                name, jsonable(tool_args), session_id=session,
                idempotency_key=f"pydantic-ai:{ctx.tool_call_id}" if ctx.tool_call_id else "",
                **self._decide)
        except Unavailable:  # a refusal or a bad request never runs the tool
            if self._fail_open:
                return await super().call_tool(name, tool_args, ctx, tool)
            raise
        if decision.outcome == "require_approval":
            raise ApprovalRequired(metadata={META: {
                "decision_id": decision.decision_id, "reason": decision.reason,
                "asked": fingerprint(name, tool_args),
                "max_output_chars": decision.max_output_chars}})
        if not decision.allowed:
            if self._raise_on_deny:
                raise Denied(refused(decision, refusal(decision)))
            return refusal(decision)
        # The tool takes its typed arguments, or toolgate's rewritten ones.
        return await self._run(decision, name,
                               decision.args if decision.outcome == "rewrite" else tool_args, ctx, tool)

    async def _run(self, decision: Decision, name: str, args: dict[str, Any], ctx: Any, tool: Any,
                   approver: str = "") -> Any:
        took = Stopwatch()
        try:
            output = await super().call_tool(name, args, ctx, tool)
        except asyncio.CancelledError:
            await asyncio.shield(self._toolgate.execute(
                decision, jsonable(args), duration_us=took.us(), status="error", error="the run was cancelled",
                approved_in_harness=approver))
            raise
        except Exception as error:
            await self._toolgate.execute(decision, jsonable(args), duration_us=took.us(), status="error",
                                         error=error_text(error),
                                         approved_in_harness=approver)
            raise
        report = await self._toolgate.execute(decision, jsonable(args), output=output, duration_us=took.us(),
                                              approved_in_harness=approver)
        # Output past the decision's limit reaches the model cut, as toolgate cut it.
        return report.output if report.truncated else output
