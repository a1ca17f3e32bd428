"""CrewAI: every tool call of every agent decided by toolgate before it runs and recorded after,
through the seam CrewAI offers for it, its tool-call hooks (docs/frameworks.md)::

    with ToolgateHooks(toolgate):                            # toolgate: a Toolgate
        crew.kickoff()

- Each call is decided with the tool's name (as CrewAI names it to the hooks) and input, in the
  session of the crew (`crew.id`; a lone agent's `agent.id`), with the agent's role in the
  request's context.
- A denial (and a dry run) does not run the tool: the model gets toolgate's reason as the tool's
  result (CrewAI itself would say only that a hook blocked it), and the run goes on.
- CrewAI has no way to pause a run for a person: a call that needs approval waits in the hook on
  toolgate's approval (`toolgate approvals approve`, the console), up to the client's
  `approval_timeout`; a verdict that does not let it through, or none in time (the approval
  is withdrawn), is refused like a denial.
- A rewrite runs with the rewritten input.
- The run is reported after the tool returns, a failed one as an error (CrewAI hands its hooks
  the error as the tool's text); a sidecar that cannot be reached refuses the call, unless
  `fail_open`. The hooks are CrewAI's global ones: registered on entering, removed on leaving.
"""

from __future__ import annotations

import json
import threading
from typing import Any, Optional

from crewai.hooks import (
    register_after_tool_call_hook,
    register_before_tool_call_hook,
    unregister_after_tool_call_hook,
    unregister_before_tool_call_hook,
)
from crewai.tools.tool_failure import ToolFailure

from .._model import Decision, ToolgateError, Unavailable, verdict_refusal
from ..client import Toolgate
from ._seam import Stopwatch, ended, refusal

__all__ = ["ToolgateHooks"]

#: What CrewAI hands the after-hook for a tool that raised: on the native function-calling path,
#: and on the ReAct path (CrewAI 1.15).
FAILED = ("Error executing tool: ", "I encountered an error while trying to use the tool")
#: What CrewAI hands the after-hooks for a call a before-hook blocked.
BLOCKED = "Tool execution blocked by hook"


class _Call:
    """One call between the before-hook and the after-hook: run, or refused and why."""

    def __init__(self, decision: Optional[Decision], refused: str = ""):
        self.decision = decision
        self.refused = refused
        self.took = Stopwatch()


class ToolgateHooks:
    """CrewAI's before- and after-tool-call hooks, deciding with `toolgate` (a `Toolgate`)."""

    def __init__(self, toolgate: Toolgate, *, fail_open: bool = False, **decide: Any):
        self._toolgate = toolgate
        self._fail_open = fail_open
        self._decide = decide
        # By the input dict CrewAI hands both hooks of one call (calls run in parallel threads).
        self._calls: dict[int, _Call] = {}
        self._lock = threading.Lock()

    def __enter__(self) -> "ToolgateHooks":
        register_before_tool_call_hook(self.before)
        register_after_tool_call_hook(self.after)
        return self

    def __exit__(self, *exc: object) -> None:
        unregister_before_tool_call_hook(self.before)
        unregister_after_tool_call_hook(self.after)

    def before(self, ctx: Any) -> Optional[bool]:
        """None lets the call run; False blocks it (the after-hook then says why)."""
        try:
            call = self._admit(ctx)
        except Unavailable as error:
            call = _Call(None) if self._fail_open else \
                _Call(None, refused=f"toolgate could not be asked: {error}")
        except Exception as error:  # CrewAI runs the tool when a hook raises: never let it
            call = _Call(None, refused=f"toolgate refused this call: {error}")
        with self._lock:
            self._calls[id(ctx.tool_input)] = call
        return False if call.refused else None

    def after(self, ctx: Any) -> Optional[str]:
        """The refusal's reason for the model, or None after reporting the run."""
        with self._lock:
            call = self._calls.pop(id(ctx.tool_input), None)
        if call is None:
            return None
        if call.refused:
            return call.refused
        if call.decision is None:
            return None  # run unrecorded: fail_open
        raw = ctx.raw_tool_result
        text = ctx.tool_result or ""
        if text.startswith(BLOCKED):
            return None  # another hook blocked it after toolgate allowed it: it did not run
        failed = isinstance(raw, ToolFailure) or (isinstance(raw, str) and raw.startswith(FAILED[0])) \
            or FAILED[1] in text
        report = self._toolgate.execute(call.decision, dict(ctx.tool_input), output=text,
                                        duration_us=call.took.us(),
                                        status="error" if failed else "ok",
                                        error=text[:1000] if failed else "")
        # Output past the decision's limit reaches the model cut, as toolgate cut it.
        return report.output if report.truncated else None

    def _admit(self, ctx: Any) -> _Call:
        # Decided as the tool takes them (CrewAI converts the model's input by the tool's schema
        # after this hook: a "true" becomes True), and run with these very ones.
        given = bool(ctx.tool_input)
        taken = _as_taken(ctx.tool, dict(ctx.tool_input))
        if taken != ctx.tool_input:
            ctx.tool_input.clear()
            ctx.tool_input.update(taken)
        scope = ctx.crew if ctx.crew is not None else ctx.agent
        options = dict(self._decide)
        context = {**(options.pop("context", None) or {}),
                   "crewai": {"agent_role": getattr(ctx.agent, "role", ""),
                              "task": getattr(ctx.task, "name", None) or ""}}
        decision = self._toolgate.decide(ctx.tool_name, dict(ctx.tool_input),
                                         session_id=str(getattr(scope, "id", "") or ""),
                                         context=context, **options)
        if decision.outcome == "require_approval":
            approval = self._toolgate.await_approval(decision)
            if approval.pending:
                try:
                    approval = self._toolgate.withdraw(decision, "no approval in time")
                except ToolgateError as error:
                    if not ended(error):
                        raise
                    # A verdict came between the wait and the withdrawal: it stands.
                    approval = self._toolgate.await_approval(decision, timeout=0)
            refused = verdict_refusal(decision, approval, self._toolgate.approval_timeout)
            if refused is not None:
                return _Call(None, refused=f"toolgate refused this call: {refused.reason}")
        elif not decision.allowed:
            return _Call(None, refused=refusal(decision))
        if decision.outcome == "rewrite":
            # CrewAI runs the tool with this very dict, rewritten in place; but not one it made
            # afresh (an empty input on its ReAct path), nor names the tool would drop.
            if not given or _as_taken(ctx.tool, dict(decision.args)) != decision.args:
                return _Call(None, refused=f"toolgate allows this call only as "
                                          f"{json.dumps(decision.args)}: {decision.reason}")
            ctx.tool_input.clear()
            ctx.tool_input.update(decision.args)
        return _Call(decision)


def _as_taken(tool: Any, args: dict[str, Any]) -> dict[str, Any]:
    """`args` as the tool takes them (converted by its schema, defaults filled in, unknown names
    dropped); as given when the tool is not known here or they do not fit its schema (CrewAI
    then refuses them itself)."""
    schema = getattr(tool, "args_schema", None)
    if schema is None:
        return args
    try:
        return schema.model_validate(args).model_dump(mode="json")
    except Exception:
        return args
