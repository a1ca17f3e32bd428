"""The Pydantic AI adapter with Pydantic AI's own package and its own test model
(`FunctionModel`), against the real server: a denied call never runs and the model is told why,
an allowed one runs and is on the trail, an approval pauses the run and resumes it with the
person's answer, a raising tool is recorded as failed, and a sidecar that cannot be reached
blocks the call."""

from __future__ import annotations

import asyncio
import datetime
import threading
import time

import pytest
from pydantic_ai import Agent, DeferredToolRequests, DeferredToolResults
from pydantic_ai.messages import ModelResponse, RetryPromptPart, TextPart, ToolCallPart, ToolReturnPart
from pydantic_ai.models.function import FunctionModel
from pydantic_ai.toolsets import FunctionToolset

from conftest import events, free_port, reject_pending
from toolgate_client import AsyncToolgate, ToolgateError
from toolgate_client.integrations.pydantic_ai import ToolgateToolset


# Set when the slow read has started (the run is then cancelled mid-call).
SLOW = threading.Event()


class Scripted:
    """A model that makes one tool call, then answers with what the tool gave back."""

    def __init__(self, tool: str, args: dict):
        self.call = ToolCallPart(tool, args, tool_call_id="call-1")
        self.requests: list = []

    def __call__(self, messages, info):
        self.requests.append(messages)
        returned = [p for p in messages[-1].parts if isinstance(p, (ToolReturnPart, RetryPromptPart))]
        if returned:
            return ModelResponse(parts=[TextPart(f"the tool said: {returned[0].content}")])
        return ModelResponse(parts=[self.call])


def tools(ran: list) -> FunctionToolset:
    toolset = FunctionToolset()

    @toolset.tool_plain
    def read(path: str) -> str:
        if path == "slow":
            SLOW.set()
            time.sleep(2)
        if path == "long":
            return "x" * 5000
        if path == "missing":
            raise FileNotFoundError(path)
        ran.append(("read", path))
        return f"contents of {path}"

    @toolset.tool_plain
    def deploy(env: str) -> str:
        ran.append(("deploy", env))
        return f"deployed to {env}"

    @toolset.tool_plain
    def shred(path: str) -> str:
        ran.append(("shred", path))
        return "shredded"

    return toolset



def agent(server, model: Scripted, ran: list, target: str | None = None) -> tuple[Agent, AsyncToolgate]:
    toolgate = AsyncToolgate(target or server.target, session_id="unused", actor_id="agent-1",
                             rpc_timeout=3)
    toolset = ToolgateToolset(tools(ran), toolgate, approver="alice", allow_bash=True)
    return Agent(FunctionModel(model), toolsets=[toolset], output_type=[str, DeferredToolRequests]), toolgate


def test_a_denied_call_never_runs_and_the_model_is_told_why(server):
    ran: list = []
    model = Scripted("shred", {"path": "/etc/passwd"})

    async def main():
        built, toolgate = agent(server, model, ran)
        async with toolgate:
            return await built.run("shred it")

    result = asyncio.run(main())
    assert ran == []
    assert "toolgate denied this call: unknown tool: shred" in result.output
    denied = events(server, "--kind", "decision")
    assert [(d["tool"], d["outcome"]) for d in denied] == [("shred", "deny")]
    assert denied[0]["session_id"] == result.conversation_id


def test_an_allowed_call_runs_and_both_records_are_on_the_trail(server):
    ran: list = []

    async def main():
        built, toolgate = agent(server, Scripted("read", {"path": "notes.txt"}), ran)
        async with toolgate:
            return await built.run("read it")

    result = asyncio.run(main())
    assert ran == [("read", "notes.txt")]
    assert result.output == "the tool said: contents of notes.txt"
    decided = events(server, "--kind", "decision")
    executed = events(server, "--kind", "execution")
    assert [d["outcome"] for d in decided] == ["allow"]
    assert [e["decision_id"] for e in executed] == [decided[0]["decision_id"]]
    assert executed[0]["duration_us"] > 0 and executed[0]["result_bytes"] > 0


def test_an_approval_pauses_the_run_and_resumes_it_with_the_persons_answer(server):
    ran: list = []
    model = Scripted("deploy", {"env": "prod"})

    async def main():
        built, toolgate = agent(server, model, ran)
        async with toolgate:
            paused = await built.run("deploy")
            assert isinstance(paused.output, DeferredToolRequests) and ran == []
            requests = paused.output
            answer = DeferredToolResults(approvals={c.tool_call_id: True for c in requests.approvals},
                                         metadata=requests.metadata)
            return await built.run(message_history=paused.all_messages(), deferred_tool_results=answer)

    result = asyncio.run(main())
    assert ran == [("deploy", "prod")]
    assert result.output == "the tool said: deployed to prod"
    decided = events(server, "--kind", "decision")
    assert [d["outcome"] for d in decided] == ["require_approval"]
    approved = events(server, "--kind", "approval_approved")
    assert [a["actor_id"] for a in approved] == ["alice"]
    executed = events(server, "--kind", "execution")
    assert [e["decision_id"] for e in executed] == [decided[0]["decision_id"]]
    assert not events(server, "--kind", "violation")


def test_a_tool_that_raises_is_recorded_as_failed(server):
    ran: list = []

    async def main():
        built, toolgate = agent(server, Scripted("read", {"path": "missing"}), ran)
        async with toolgate:
            await built.run("read it")

    with pytest.raises(FileNotFoundError):
        asyncio.run(main())
    executed = events(server, "--kind", "execution")
    assert [(e["status"], e["error"]) for e in executed] == [("error", "missing")]


def test_a_call_refused_in_toolgate_does_not_run_on_the_frameworks_approval(server):
    ran: list = []

    async def main():
        built, toolgate = agent(server, Scripted("deploy", {"env": "prod"}), ran)
        async with toolgate:
            paused = await built.run("deploy")
            reject_pending(server)  # refused in toolgate while the run waits
            requests = paused.output
            answer = DeferredToolResults(approvals={c.tool_call_id: True for c in requests.approvals},
                                         metadata=requests.metadata)
            return await built.run(message_history=paused.all_messages(), deferred_tool_results=answer)

    result = asyncio.run(main())
    assert ran == [], "the deploy ran on the framework's approval after toolgate's refusal"
    assert "approval was rejected by bob" in result.output
    assert not events(server, "--kind", "execution")


def test_output_past_the_limit_reaches_the_model_cut(server):
    ran: list = []

    async def main():
        built, toolgate = agent(server, Scripted("read", {"path": "long"}), ran)
        async with toolgate:
            return await built.run("read it")

    result = asyncio.run(main())
    assert 40 <= result.output.count("x") <= 50, result.output


def test_a_run_cancelled_mid_call_is_recorded_as_such(server):
    ran: list = []

    async def main():
        built, toolgate = agent(server, Scripted("read", {"path": "slow"}), ran)
        async with toolgate:
            SLOW.clear()
            running = asyncio.ensure_future(built.run("read it"))
            assert await asyncio.to_thread(SLOW.wait, 30), "the tool never started"
            running.cancel()
            with pytest.raises(asyncio.CancelledError):
                await running

    asyncio.run(main())
    executed = events(server, "--kind", "execution")
    assert [(e["status"], e["error"]) for e in executed] == [("error", "the run was cancelled")]


def test_a_tool_with_typed_arguments_is_decided_and_runs_with_them(server):
    ran: list = []
    toolset = FunctionToolset()

    @toolset.tool_plain
    def read(path: str, since: datetime.date) -> str:
        """Reads a file's changes since a day."""
        ran.append((path, since))
        return "changes"

    async def main():
        async with AsyncToolgate(server.target, session_id="unused", actor_id="agent-1") as tg:
            built = Agent(FunctionModel(Scripted("read", {"path": "a", "since": "2026-12-24"})),
                          toolsets=[ToolgateToolset(toolset, tg)])
            await built.run("read it")

    asyncio.run(main())
    assert ran == [("a", datetime.date(2026, 12, 24))]
    assert [e["status"] for e in events(server, "--kind", "execution")] == ["ok"]


def test_a_sidecar_that_cannot_be_reached_blocks_the_call(server):
    ran: list = []

    async def main():
        built, toolgate = agent(server, Scripted("read", {"path": "notes.txt"}), ran,
                                target=f"127.0.0.1:{free_port()}")
        async with toolgate:
            await built.run("read it")

    with pytest.raises(ToolgateError):
        asyncio.run(main())
    assert ran == []
