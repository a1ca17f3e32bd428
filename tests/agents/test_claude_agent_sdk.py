"""The Claude Agent SDK adapters, for Python and for TypeScript, each with the SDK's own package
(`query`, its hooks and its permission callback) and the Claude Code it brings, driven by the
scripted model (model.py) against the real server with the coding policy: a denied command never
runs and the model is told why, an allowed one runs and is on the trail, one that needs approval
is put to the application's person and runs only if they let it, and a toolgate that cannot be
reached blocks the call."""

from __future__ import annotations

import asyncio
import json
import shutil
import subprocess

import pytest
from claude_agent_sdk import (
    ClaudeAgentOptions,
    PermissionResultAllow,
    PermissionResultDeny,
    SystemMessage,
    query,
)

from conftest import HERE, NODE, ROOT, RUN_TIMEOUT, Server, Workspace, claude_env, free_port
from model import Model
from toolgate_client.integrations.claude_agent_sdk import ToolgateHooks

DENIED = "not one of the safe command lines"
# The TypeScript adapter, as the client's package builds it.
TS_ADAPTER = ROOT / "clients/typescript/dist/integrations/claude-agent-sdk.js"


@pytest.fixture(params=["python", "typescript"])
def sdk(request) -> str:
    return request.param


def run(tmp_path, command: str, side: str, sdk: str, person: str | None = None
        ) -> tuple[Workspace, str, list]:
    """One SDK query whose model runs `command`, with a person who answers "allow" or "deny"
    (or none): the workspace, the SDK's session id, and what the person was asked."""
    model = Model("").start()
    ws = Workspace(tmp_path / "ws", model)
    model.command = command.format(project=ws.project)
    env = {**ws.base_env(), **claude_env(ws), "CLAUDE_CONFIG_DIR": str(ws.config)}
    try:
        if sdk == "python":
            return (ws, *asyncio.run(python_query(env, ws, side, person)))
        # The runner sits where the SDK is installed, so that node finds it.
        runner = NODE.parent / "claude_agent_sdk.mjs"
        shutil.copy(HERE / "claude_agent_sdk.mjs", runner)
        config = {"adapter": str(TS_ADAPTER), "side": side, "env": env, "cwd": str(ws.project),
                  "person": person}
        done = subprocess.run(["node", str(runner), json.dumps(config)], capture_output=True,
                              text=True, timeout=RUN_TIMEOUT)
        assert done.returncode == 0, done.stderr
        answer = json.loads(done.stdout.splitlines()[-1])
        return ws, answer["session"], [tuple(asked) for asked in answer["asked"]]
    finally:
        model.stop()


async def python_query(env: dict, ws: Workspace, side: str, person: str | None) -> tuple[str, list]:
    asked: list = []

    async def prompt(tool, input, context):
        """The application's own permission prompt: lets each call through, or not."""
        asked.append((tool, input.get("command"), context.decision_reason))
        if person == "allow":
            return PermissionResultAllow()
        return PermissionResultDeny(message="the person said no")

    options = ClaudeAgentOptions(env=env, cwd=str(ws.project), setting_sources=[], max_turns=4,
                                 hooks=ToolgateHooks(side, timeout=60).hooks(),
                                 can_use_tool=prompt if person else None, stderr=lambda line: None)
    session = ""
    async for message in query(prompt="Run the command.", options=options):
        if isinstance(message, SystemMessage) and message.subtype == "init":
            session = message.data.get("session_id", "")
    return session, asked


def told_the_model(ws: Workspace, text: str) -> bool:
    return any(text in result for result in ws.model.results_after_call())


def test_a_denied_command_never_runs_and_the_model_is_told_why(tmp_path, server: Server, sdk):
    ws, session, _ = run(tmp_path, "touch {project}/marker", server.side, sdk)
    assert not (ws.project / "marker").exists()
    assert told_the_model(ws, DENIED), ws.model.transcript()
    denied = server.events("--kind", "decision")
    assert [(d["tool"], d["outcome"], d["session_id"]) for d in denied] == [("bash", "deny", session)]
    assert not server.events("--kind", "execution")


def test_an_allowed_command_runs_and_both_records_are_on_the_trail(tmp_path, server: Server, sdk):
    ws, session, _ = run(tmp_path, "ls", server.side, sdk)
    assert told_the_model(ws, "README.md"), ws.model.transcript()
    [allowed] = server.events("--kind", "decision")
    assert (allowed["tool"], allowed["outcome"], allowed["session_id"]) == ("bash", "allow", session)
    [executed] = server.events("--kind", "execution")
    assert executed["decision_id"] == allowed["decision_id"]
    assert executed["status"] == "ok" and executed["result_bytes"] > 0 and executed["duration_us"] > 0


def test_a_command_that_needs_approval_runs_only_if_the_person_lets_it(tmp_path, server: Server, sdk):
    ws, _, asked = run(tmp_path / "no", "git push", server.side, sdk, "deny")
    assert [(tool, command) for tool, command, _ in asked] == [("Bash", "git push")]
    assert "a person approves it" in asked[0][2], "the person was shown toolgate's reason"
    assert not server.events("--kind", "execution"), "the refused push did not run"

    ws, _, asked = run(tmp_path / "yes", "git push", server.side, sdk, "allow")
    assert len(asked) == 1
    # It ran (and failed: the workspace is no repository), approved by the SDK's person.
    executed = server.events("--kind", "execution")
    assert [e["status"] for e in executed] == ["error"], executed
    assert "not a git repository" in executed[0]["error"].lower()
    approved = server.events("--kind", "approval_approved")
    assert [a["decision_id"] for a in approved] == [executed[0]["decision_id"]]


def test_a_toolgate_that_cannot_be_reached_blocks_the_call(tmp_path, server: Server, sdk):
    # `ls` is a call Claude Code runs without asking anyone: only the hook stands in its way.
    ws, _, _ = run(tmp_path, "ls", f"http://127.0.0.1:{free_port()}", sdk)
    assert not told_the_model(ws, "README.md"), "the blocked command ran"
    assert told_the_model(ws, "toolgate could not be asked"), ws.model.transcript()
