"""The Claude Agent SDK: every tool call of the Claude Code it runs decided by toolgate before
it runs and recorded after, through the seam the SDK offers for it, hooks run in the
application's own process (`PreToolUse`, `PostToolUse`, `PostToolUseFailure`), each handed to
toolgate's Claude Code hook endpoint on the server's side port (docs/frameworks.md)::

    hooks = ToolgateHooks("http://127.0.0.1:9090")            # the server's --http-listen
    options = ClaudeAgentOptions(hooks=hooks.hooks(), can_use_tool=ask_a_person)

The SDK's calls are Claude Code's, so toolgate answers them as it answers Claude Code's own
hooks (docs/agents.md): the tool's name and input in toolgate's vocabulary, the session of the
SDK's session, the call paired with its run by its `tool_use_id`.

- A denial does not run the tool: the model gets toolgate's reason as the tool's error.
- A call that needs approval is put to the application's own permission callback
  (`can_use_tool`): toolgate answers `ask`, and the call runs only if the person lets it
  through there, recorded as approved in the harness. Without a `can_use_tool` the SDK refuses
  an `ask`. Under `bypassPermissions`, where nobody is asked, toolgate holds the call until a
  person approves it in toolgate.
- An allowed call goes on to the SDK's own permission rules, as without toolgate: toolgate never
  lets through what they would stop.
- The run is reported after it (`PostToolUse`, or `PostToolUseFailure` as an error). A hook that
  cannot reach toolgate blocks the call (and the matcher blocks on any failure of the hook).
"""

from __future__ import annotations

import asyncio
import json
import urllib.request
from typing import Any, Optional

from claude_agent_sdk import HookMatcher

__all__ = ["ToolgateHooks"]

#: The largest answer read from the endpoint: a hook's answer is a few hundred bytes.
MAX_ANSWER = 1 << 20


class _Unredirected(urllib.request.HTTPRedirectHandler):
    """A redirect is an error: the hook's input goes to the endpoint given, nowhere else."""

    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None


_OPENER = urllib.request.build_opener(_Unredirected)


class ToolgateHooks:
    """The SDK hooks that hand every tool call to toolgate at `side_url` (its side port)."""

    def __init__(self, side_url: str, *, token: Optional[str] = None, timeout: float = 150.0):
        self._endpoint = side_url.rstrip("/") + "/hooks/claude"
        self._token = token
        # A call held for a person (hooks.hold_ms, 120 s by default) and the answer after it.
        self._timeout = timeout

    def hooks(self) -> dict[str, list[HookMatcher]]:
        """`ClaudeAgentOptions(hooks=...)`: every tool, each hook blocking the call if it fails."""
        matcher = HookMatcher(matcher=None, hooks=[self.hook], timeout=self._timeout,
                              on_failure="block")
        return {event: [matcher] for event in ("PreToolUse", "PostToolUse", "PostToolUseFailure")}

    async def hook(self, input: dict[str, Any], tool_use_id: Optional[str], context: Any) -> dict:
        """One hook event, answered by toolgate."""
        try:
            return await asyncio.to_thread(self._post, dict(input))
        except (OSError, ValueError) as error:
            reason = f"toolgate could not be asked: {error}"
            if input.get("hook_event_name") == "PreToolUse":
                return {"hookSpecificOutput": {"hookEventName": "PreToolUse",
                                               "permissionDecision": "deny",
                                               "permissionDecisionReason": reason}}
            return {"decision": "block", "reason": reason}

    def _post(self, event: dict[str, Any]) -> dict:
        headers = {"Content-Type": "application/json"}
        if self._token:
            headers["Authorization"] = f"Bearer {self._token}"
        request = urllib.request.Request(self._endpoint, data=json.dumps(event).encode(),
                                         headers=headers, method="POST")
        with _OPENER.open(request, timeout=self._timeout) as response:
            answer = json.loads(response.read(MAX_ANSWER) or b"{}")
        if not isinstance(answer, dict):
            raise ValueError("toolgate's answer is not a JSON object")
        return answer
