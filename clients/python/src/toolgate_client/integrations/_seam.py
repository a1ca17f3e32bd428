"""What every framework adapter says and measures the same way: the words a refused call is
shown to the model with, a call's fingerprint, a run's duration, a raised error as the trail
records it, when a framework's approval is overruled by toolgate's, and withdrawing an approval
that may already have ended."""

from __future__ import annotations

import json
import time
from typing import Any, Optional

import grpc
from pydantic_core import to_jsonable_python

from .._model import Approval, Decision, ToolgateError

#: Where toolgate's decision travels in a framework's own approval request (its metadata, its
#: interrupt's value, its payload).
META = "toolgate"


def refusal(decision: Decision) -> str:
    """Why a call that toolgate did not let through was not run, in words for the model."""
    if decision.outcome == "dry_run":
        return f"toolgate denied this call: {decision.reason}; only a dry run is allowed"
    if decision.outcome == "require_approval":
        return f"toolgate: a person must approve this call: {decision.reason}"
    return f"toolgate denied this call: {decision.reason}"


def error_text(error: BaseException) -> str:
    """A raised error as the trail records it: its message, else its type."""
    return str(error) or type(error).__name__


class Stopwatch:
    """The duration of one run of a tool, in microseconds, as Execute takes it."""

    def __init__(self) -> None:
        self._started = time.monotonic()

    def us(self) -> int:
        return int((time.monotonic() - self._started) * 1_000_000)


def fingerprint(tool: str, args: Any) -> str:
    """What a decision was asked about, to hold it to the call it is kept for: a call id comes
    from the model, which may give two calls one id, so a kept decision is taken only by the
    very call (tool and arguments) it was made for."""
    return json.dumps([tool, args], sort_keys=True, separators=(",", ":"), default=str)


def overruled(approval: Approval) -> Optional[str]:
    """Why a person's approval given in the framework no longer lets the call run: toolgate's own
    verdict came first (rejected there, expired, withdrawn). None while the approval still waits
    (the framework's person is then its approver) or once toolgate's own approver allowed it."""
    if approval.pending or approval.outcome == "allow":
        return None
    by = f" by {approval.approver}" if approval.approver else ""
    return f"toolgate: this call's approval was {approval.state}{by}: it may not run"


def ended(error: ToolgateError) -> bool:
    """Whether a withdrawal failed only because the approval had already ended (a verdict, an
    expiry): then there is nothing left to withdraw, and the call is refused all the same."""
    return error.code == grpc.StatusCode.FAILED_PRECONDITION


def withdraw(toolgate: Any, decision: Decision, reason: str) -> None:
    """Withdraws a refused call's approval (sync client); one that already ended stays as it is."""
    try:
        toolgate.withdraw(decision, reason)
    except ToolgateError as error:
        if not ended(error):
            raise


async def withdraw_async(toolgate: Any, decision: Decision, reason: str) -> None:
    """`withdraw`, with the async client."""
    try:
        await toolgate.withdraw(decision, reason)
    except ToolgateError as error:
        if not ended(error):
            raise


def jsonable(args: dict[str, Any]) -> dict[str, Any]:
    """Arguments as JSON values (a date as its ISO text, a model as its fields), which is what
    Decide and Execute take: a framework that validated them hands the tool typed values."""
    return to_jsonable_python(args)
