"""toolgate's Python client: ask toolgate before a tool runs, report after.

    from toolgate_client import AsyncToolgate

    tg = AsyncToolgate("127.0.0.1:50051", session_id="s1", actor_id="agent-1")
    result = await tg.guard("read", {"path": "README.md"}, run=read_file)
    print(result.for_model())

`Toolgate` is the same for synchronous code. The generated stubs are in `toolgate_client.v1` for
anything the ergonomic layer does not cover.
"""

from toolgate_client._model import (
    Approval, Call, Decision, Denied, GuardResult, InvalidRequest, NotRecorded, PermissionDenied,
    Report, ToolgateError, ToolTimedOut, Unavailable, Violation,
)
from toolgate_client.aio import AsyncToolgate
from toolgate_client.client import Toolgate

__all__ = [
    "Approval", "AsyncToolgate", "Call", "Decision", "Denied", "GuardResult", "InvalidRequest",
    "NotRecorded", "PermissionDenied", "Report", "ToolgateError", "ToolTimedOut", "Toolgate",
    "Unavailable", "Violation",
]
