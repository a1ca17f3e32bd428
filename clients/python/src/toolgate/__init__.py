"""toolgate's Python client: ask toolgate before a tool runs, report after.

    from toolgate import Toolgate

    tg = Toolgate("127.0.0.1:50051", session_id="s1", actor_id="agent-1")
    result = tg.guard("read", {"path": "README.md"}, run=lambda a: open(a["path"]).read())
    print(result.for_model())

The generated stubs are in `toolgate.v1` for anything the ergonomic layer does not cover.
"""

from toolgate.client import Call, Decision, Denied, GuardResult, Toolgate, Unavailable

__all__ = ["Call", "Decision", "Denied", "GuardResult", "Toolgate", "Unavailable"]
