"""LangChain (and LangGraph underneath): every tool call of an agent made with `create_agent`
decided by toolgate before it runs and recorded after, through the seam LangChain offers for
it, agent middleware around tool calls (docs/frameworks.md)::

    agent = create_agent(model, tools, middleware=[ToolgateMiddleware(toolgate)],
                         checkpointer=InMemorySaver())     # toolgate: a Toolgate

- Each call is decided with the tool's name and arguments, in the session of the run's thread
  (`thread_id`), under the idempotency key `langchain:<tool_call_id>`.
- A denial does not run the tool: the model gets a `ToolMessage` with `status="error"` and
  toolgate's reason, and the run goes on (`raise_on_deny=True` raises `Denied` instead).
- A call that needs approval uses LangGraph's own human-in-the-loop: the run is interrupted
  (`interrupt`, a checkpointer is needed) with toolgate's decision in the interrupt's value,
  and resumed with the person's answer, `Command(resume={"approved": True, "approver": "alice"})`.
  An approved call runs once and toolgate records the approval as the person's with the run;
  a refused one is not run, the model is told, and toolgate's pending approval is withdrawn.
- A rewrite runs with the rewritten arguments; a dry run is refused like a denial.
- The run is reported after the tool returns (a `ToolMessage` with `status="error"` as an
  error) or raises; a sidecar that cannot be reached blocks the call (`ToolgateError`), unless
  `fail_open`.
- An async run (`ainvoke`, `astream`, async tools) goes the same way (`awrap_tool_call`), the
  client's calls made in a worker thread.
"""

from __future__ import annotations

import asyncio
import json
from functools import partial
from typing import Any, Awaitable, Callable, Generator, Optional

from langchain.agents.middleware import AgentMiddleware
from langchain_core.messages import ToolMessage
from langgraph.config import get_config
from langgraph.errors import GraphBubbleUp
from langgraph.types import interrupt

from .._model import Decision, Denied, Unavailable, refused
from ..client import Toolgate
from ._seam import META, Stopwatch, error_text, fingerprint, jsonable, overruled, refusal, withdraw

__all__ = ["ToolgateMiddleware"]

#: How many calls waiting for a person are kept between the interrupt and the resume (a run
#: that is never resumed leaves its call here): the oldest is forgotten first.
MAX_PENDING = 10_000

class ToolgateMiddleware(AgentMiddleware):
    """Agent middleware that has `toolgate` (a `Toolgate`) decide every tool call first."""

    def __init__(self, toolgate: Toolgate, *, raise_on_deny: bool = False, fail_open: bool = False,
                 **decide: Any):
        super().__init__()
        self._toolgate = toolgate
        self._raise_on_deny = raise_on_deny
        self._fail_open = fail_open
        self._decide = decide
        # Decisions waiting for a person, by thread and tool call (and the call they were made
        # for): a resumed run runs the middleware again from the start, and must not decide the
        # call a second time.
        self._waiting: dict[str, tuple[str, Decision]] = {}

    def wrap_tool_call(self, request: Any, handler: Callable[[Any], Any]) -> Any:
        steps = self._steps(request)
        try:
            step = next(steps)
            while True:  # each step's I/O: the client's calls, the tool's run
                if isinstance(step, _Run):
                    step = steps.send(_attempt(partial(handler, step.request)))
                else:
                    step = steps.send(_attempt(step))
        except StopIteration as done:
            return done.value

    async def awrap_tool_call(self, request: Any, handler: Callable[[Any], Awaitable[Any]]) -> Any:
        steps = self._steps(request)
        try:
            step = next(steps)
            while True:  # the client's calls in a thread (it blocks), the tool's run awaited
                if isinstance(step, _Run):
                    try:
                        outcome = await _attempt_async(lambda: handler(step.request))
                    except asyncio.CancelledError as cancelled:
                        # The run was cancelled mid-call: reported as such, then cancelled on.
                        outcome = _Outcome(error=cancelled)
                else:
                    outcome = await asyncio.to_thread(_attempt, step)
                step = steps.send(outcome)
        except StopIteration as done:
            return done.value

    def _steps(self, request: Any) -> Generator[Any, "_Outcome", Any]:
        """One call, as steps: each yields what is to be done (a call of the client, or `_Run`
        of the tool) and is sent back its `_Outcome`; the return value is the call's result."""
        call = request.tool_call
        name, call_id = call["name"], call.get("id") or ""
        # Decided as the tool takes them: LangChain converts the model's arguments by the tool's
        # schema after this (a "true" becomes True), and the call then runs with these very ones.
        args = jsonable(_as_taken(request.tool, dict(call.get("args") or {}), call_id))
        if args != call.get("args"):
            request = request.override(tool_call={**call, "args": args})
        asked = fingerprint(name, args)
        session = str((get_config().get("configurable") or {}).get("thread_id")
                      or self._toolgate.session_id)
        # A waiting call is its thread's: another thread's call under the same id is not it.
        key = f"{session}\n{call_id}"
        waiting = self._waiting.get(key)
        decision = waiting[1] if waiting is not None and waiting[0] == asked else None
        if decision is None:
            decided = yield partial(self._toolgate.decide, name, args, session_id=session,
                                    idempotency_key=f"langchain:{call_id}" if call_id else "",
                                    **self._decide)
            # Only a sidecar that cannot be reached: a refusal or a bad request never runs it.
            if isinstance(decided.error, Unavailable) and self._fail_open:
                return (yield _Run(request)).value()
            decision = decided.value()
        approver = ""
        if decision.outcome == "require_approval":
            if len(self._waiting) >= MAX_PENDING:
                self._waiting.pop(next(iter(self._waiting)))
            self._waiting[key] = (asked, decision)
            answer = interrupt({META: {"decision_id": decision.decision_id, "tool": name,
                                       "args": args, "reason": decision.reason}})
            self._waiting.pop(key, None)
            if not (isinstance(answer, dict) and answer.get("approved") is True):
                why = (answer or {}).get("comment", "") if isinstance(answer, dict) else ""
                (yield partial(withdraw, self._toolgate, decision,
                               f"refused in the run: {why}".strip())).value()
                return ToolMessage(content=f"a person refused this call: {decision.reason}",
                                   tool_call_id=call_id, name=name, status="error")
            # The person's approval here stands only while toolgate's still waits.
            approval = (yield partial(self._toolgate.await_approval, decision, 0)).value()
            why = overruled(approval)
            if why is not None:
                return ToolMessage(content=why, tool_call_id=call_id, name=name, status="error")
            approver = str(answer.get("approver") or "langchain:user") if approval.pending else ""
        elif not decision.allowed:
            if self._raise_on_deny:
                raise Denied(refused(decision, refusal(decision)))
            return ToolMessage(content=refusal(decision), tool_call_id=call_id, name=name,
                               status="error")
        run_args = dict(decision.args) if decision.outcome == "rewrite" else args
        if run_args != args:
            if jsonable(_as_taken(request.tool, run_args, call_id)) != run_args:
                # The tool would drop or change what the rewrite names: it cannot be carried.
                return ToolMessage(content=f"toolgate allows this call only as "
                                           f"{json.dumps(run_args)}, which this tool does not "
                                           f"take: {decision.reason}",
                                   tool_call_id=call_id, name=name, status="error")
            request = request.override(tool_call={**call, "args": run_args})
        took = Stopwatch()
        ran = yield _Run(request)
        if isinstance(ran.error, GraphBubbleUp):
            raise ran.error  # the tool paused the run itself: it runs again on resume
        if ran.error is not None:
            why = "the run was cancelled" if isinstance(ran.error, asyncio.CancelledError) \
                else error_text(ran.error)
            (yield partial(self._toolgate.execute, decision, run_args, duration_us=took.us(),
                           status="error", error=why, approved_in_harness=approver)).value()
            raise ran.error
        result = ran.value()
        failed = isinstance(result, ToolMessage) and result.status == "error"
        output: Optional[str] = getattr(result, "content", None)
        report = (yield partial(self._toolgate.execute, decision, run_args,
                                output=output if output is not None else "",
                                duration_us=took.us(), status="error" if failed else "ok",
                                error=str(output)[:1000] if failed else "",
                                approved_in_harness=approver)).value()
        if report.truncated and isinstance(result, ToolMessage):
            # Output past the decision's limit reaches the model cut, as toolgate cut it.
            return result.model_copy(update={"content": report.output})
        return result


def _as_taken(tool: Any, args: dict[str, Any], call_id: str) -> dict[str, Any]:
    """`args` as the tool takes them (converted by its schema, defaults filled in, unknown
    names dropped); as given when the tool is not known here or they do not fit its schema (the
    tool then refuses them itself, without running)."""
    parse = getattr(tool, "_parse_input", None)
    if parse is None:
        return args
    try:
        taken = parse(args, call_id)
    except Exception:
        return args
    return dict(taken) if isinstance(taken, dict) else args


class _Run:
    """The step that runs the tool (the handler), with this request."""

    def __init__(self, request: Any):
        self.request = request


class _Outcome:
    """What a step came to: its value, or what it raised."""

    def __init__(self, value: Any = None, error: Optional[BaseException] = None):
        self._value = value
        self.error = error

    def value(self) -> Any:
        if self.error is not None:
            raise self.error
        return self._value


def _attempt(step: Callable[[], Any]) -> _Outcome:
    try:
        return _Outcome(step())
    except Exception as error:
        return _Outcome(error=error)


async def _attempt_async(step: Callable[[], Awaitable[Any]]) -> _Outcome:
    try:
        return _Outcome(await step())
    except Exception as error:
        return _Outcome(error=error)
