"""The LangChain adapter with LangChain's own packages (`create_agent`, agent middleware,
LangGraph's interrupt and checkpointer) and a scripted chat model on LangChain's own base
class, against the real server: a denied call never runs and the model is told why, an allowed
one runs and is on the trail, an approval interrupts the run and resumes it with the person's
answer, a raising tool is recorded as failed, and a sidecar that cannot be reached blocks the
call."""

from __future__ import annotations

import asyncio
import datetime
import threading
from typing import Any

import pytest
from langchain.agents import create_agent
from langchain_core.language_models.chat_models import BaseChatModel
from langchain_core.messages import AIMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command

from conftest import HERE, events, free_port, reject_pending, start
from toolgate_client import Toolgate, ToolgateError
from toolgate_client.integrations.langchain import ToolgateMiddleware


class Scripted(BaseChatModel):
    """A chat model that makes one tool call, then answers with what the tool gave back."""

    call: dict

    @property
    def _llm_type(self) -> str:
        return "scripted"

    def bind_tools(self, tools: Any, **kwargs: Any) -> "Scripted":
        return self

    def _generate(self, messages, stop=None, run_manager=None, **kwargs) -> ChatResult:
        if isinstance(messages[-1], ToolMessage):
            answer = AIMessage(content=f"the tool said: {messages[-1].content}")
        else:
            answer = AIMessage(content="", tool_calls=[{**self.call, "id": "call-1"}])
        return ChatResult(generations=[ChatGeneration(message=answer)])


def tools(ran: list) -> list:
    @tool
    def read(path: str) -> str:
        """Reads a file."""
        if path == "long":
            return "x" * 5000
        if path == "missing":
            raise FileNotFoundError(path)
        ran.append(("read", path))
        return f"contents of {path}"

    @tool
    def deploy(env: str) -> str:
        """Deploys."""
        ran.append(("deploy", env))
        return f"deployed to {env}"

    @tool
    def shred(path: str) -> str:
        """Shreds a file."""
        ran.append(("shred", path))
        return "shredded"

    return [read, deploy, shred]



def agent(toolgate: Toolgate, call: dict, ran: list):
    model = Scripted(call=call)
    middleware = ToolgateMiddleware(toolgate, allow_bash=True)
    return create_agent(model, tools(ran), middleware=[middleware], checkpointer=InMemorySaver())


def client(server, target: str | None = None) -> Toolgate:
    return Toolgate(target or server.target, session_id="unused", actor_id="agent-1", rpc_timeout=3)


THREAD = {"configurable": {"thread_id": "thread-7"}}


def test_a_denied_call_never_runs_and_the_model_is_told_why(server):
    ran: list = []
    with client(server) as tg:
        state = agent(tg, {"name": "shred", "args": {"path": "/etc/passwd"}}, ran).invoke(
            {"messages": [("user", "shred it")]}, THREAD)
    assert ran == []
    assert state["messages"][-1].content == "the tool said: toolgate denied this call: unknown tool: shred"
    denied = events(server, "--kind", "decision")
    assert [(d["tool"], d["outcome"], d["session_id"]) for d in denied] == [("shred", "deny", "thread-7")]


def test_an_allowed_call_runs_and_both_records_are_on_the_trail(server):
    ran: list = []
    with client(server) as tg:
        state = agent(tg, {"name": "read", "args": {"path": "notes.txt"}}, ran).invoke(
            {"messages": [("user", "read it")]}, THREAD)
    assert ran == [("read", "notes.txt")]
    assert state["messages"][-1].content == "the tool said: contents of notes.txt"
    decided = events(server, "--kind", "decision")
    executed = events(server, "--kind", "execution")
    assert [d["outcome"] for d in decided] == ["allow"]
    assert [e["decision_id"] for e in executed] == [decided[0]["decision_id"]]
    assert executed[0]["duration_us"] > 0 and executed[0]["result_bytes"] > 0


def test_an_approval_interrupts_the_run_and_resumes_it_with_the_persons_answer(server):
    ran: list = []
    with client(server) as tg:
        built = agent(tg, {"name": "deploy", "args": {"env": "prod"}}, ran)
        paused = built.invoke({"messages": [("user", "deploy")]}, THREAD)
        [waiting] = paused["__interrupt__"]
        assert waiting.value["toolgate"]["tool"] == "deploy" and ran == []
        state = built.invoke(Command(resume={"approved": True, "approver": "alice"}), THREAD)
    assert ran == [("deploy", "prod")]
    assert state["messages"][-1].content == "the tool said: deployed to prod"
    decided = events(server, "--kind", "decision")
    assert [d["outcome"] for d in decided] == ["require_approval"], "decided once, not again on resume"
    assert [a["actor_id"] for a in events(server, "--kind", "approval_approved")] == ["alice"]
    executed = events(server, "--kind", "execution")
    assert [e["decision_id"] for e in executed] == [decided[0]["decision_id"]]
    assert not events(server, "--kind", "violation")


def test_a_refusal_in_the_run_does_not_run_the_call_and_withdraws_it(server):
    ran: list = []
    with client(server) as tg:
        built = agent(tg, {"name": "deploy", "args": {"env": "prod"}}, ran)
        built.invoke({"messages": [("user", "deploy")]}, THREAD)
        state = built.invoke(Command(resume={"approved": False, "comment": "not today"}), THREAD)
    assert ran == []
    assert "a person refused this call" in state["messages"][-1].content
    assert events(server, "--kind", "approval_withdrawn")
    assert not events(server, "--kind", "execution")


def test_a_call_refused_in_toolgate_does_not_run_on_the_frameworks_approval(server):
    ran: list = []
    with client(server) as tg:
        built = agent(tg, {"name": "deploy", "args": {"env": "prod"}}, ran)
        built.invoke({"messages": [("user", "deploy")]}, THREAD)
        reject_pending(server)  # refused in toolgate while the run waits
        state = built.invoke(Command(resume={"approved": True, "approver": "alice"}), THREAD)
    assert ran == [], "the deploy ran on the framework's approval after toolgate's refusal"
    assert "approval was rejected by bob" in state["messages"][-1].content
    assert not events(server, "--kind", "execution")


def test_only_an_approval_that_says_true_lets_the_call_run(server):
    ran: list = []
    with client(server) as tg:
        built = agent(tg, {"name": "deploy", "args": {"env": "prod"}}, ran)
        built.invoke({"messages": [("user", "deploy")]}, THREAD)
        # A form's answer, as text: "false" is not an approval.
        built.invoke(Command(resume={"approved": "false", "comment": "NO"}), THREAD)
    assert ran == []
    assert events(server, "--kind", "approval_withdrawn")


def test_arguments_are_decided_as_the_tool_takes_them(tmp_path):
    # A policy that forbids following links: a model that writes `"true"` for true is held to it.
    policy = tmp_path / "policy.cedar"
    policy.write_text((HERE / "policy.cedar").read_text() + '''
@id("no-follow") @reason("following links is forbidden")
forbid (principal, action, resource) when { context.args has follow && context.args.follow == true };
''')
    server = start(tmp_path, policy=policy)
    ran: list = []

    @tool
    def read(path: str, follow: bool = False) -> str:
        """Reads a file, following links when asked."""
        ran.append(("read", path, follow))
        return "contents"

    try:
        with client(server) as tg:
            built = create_agent(Scripted(call={"name": "read", "args": {"path": "a", "follow": "true"}}),
                                 [read], middleware=[ToolgateMiddleware(tg)], checkpointer=InMemorySaver())
            built.invoke({"messages": [("user", "read it")]}, THREAD)
    finally:
        server.process.terminate()
        server.process.wait(timeout=30)
    assert ran == [], "the read ran with follow=True, decided as the text \"true\""
    [decided] = events(server, "--kind", "decision")
    assert (decided["outcome"], decided["policy_ids"]) == ("deny", '["no-follow"]')


def test_a_tool_with_typed_arguments_is_decided_and_runs_with_them(server):
    ran: list = []

    @tool
    def read(path: str, since: datetime.date) -> str:
        """Reads a file's changes since a day."""
        ran.append((path, since))
        return "changes"

    with client(server) as tg:
        create_agent(Scripted(call={"name": "read", "args": {"path": "a", "since": "2026-12-24"}}),
                     [read], middleware=[ToolgateMiddleware(tg)], checkpointer=InMemorySaver()
                     ).invoke({"messages": [("user", "read it")]}, THREAD)
    assert ran == [("a", datetime.date(2026, 12, 24))]
    assert [e["status"] for e in events(server, "--kind", "execution")] == ["ok"]


def test_a_tool_that_raises_is_recorded_as_failed(server):
    ran: list = []
    with client(server) as tg:
        built = agent(tg, {"name": "read", "args": {"path": "missing"}}, ran)
        try:
            built.invoke({"messages": [("user", "read it")]}, THREAD)
        except FileNotFoundError:
            pass
    executed = events(server, "--kind", "execution")
    assert [e["status"] for e in executed] == ["error"]
    assert "missing" in executed[0]["error"]


def test_a_model_that_reuses_a_waiting_calls_id_cannot_run_another_tool_on_its_decision(server):
    ran: list = []
    with client(server) as tg:
        middleware = ToolgateMiddleware(tg, allow_bash=True)

        def built(call: dict):
            return create_agent(Scripted(call=call), tools(ran), middleware=[middleware],
                                checkpointer=InMemorySaver())

        built({"name": "deploy", "args": {"env": "prod"}}).invoke({"messages": [("user", "deploy")]}, THREAD)
        # Another run, on another thread: the model calls shred under the waiting deploy's id.
        other = {"configurable": {"thread_id": "thread-8"}}
        shred = built({"name": "shred", "args": {"path": "notes.txt"}})
        state = shred.invoke({"messages": [("user", "never mind")]}, other)
        if "__interrupt__" in state:  # whatever the run waits for, a person says yes to it
            shred.invoke(Command(resume={"approved": True, "approver": "alice"}), other)
    assert ("shred", "notes.txt") not in ran, "the shred ran on the deploy's decision"
    decided = [(d["tool"], d["outcome"]) for d in events(server, "--kind", "decision")]
    assert ("shred", "deny") in decided, decided


def test_an_async_run_is_decided_and_recorded_the_same_way(server):
    ran: list = []

    @tool
    async def deploy(env: str) -> str:
        """Deploys, asynchronously."""
        await asyncio.sleep(0.01)
        ran.append(("deploy", env))
        return f"deployed to {env}"

    async def main(tg: Toolgate):
        built = create_agent(Scripted(call={"name": "deploy", "args": {"env": "prod"}}), [deploy],
                             middleware=[ToolgateMiddleware(tg, allow_bash=True)],
                             checkpointer=InMemorySaver())
        paused = await built.ainvoke({"messages": [("user", "deploy")]}, THREAD)
        assert paused["__interrupt__"] and ran == []
        return await built.ainvoke(Command(resume={"approved": True, "approver": "alice"}), THREAD)

    with client(server) as tg:
        state = asyncio.run(main(tg))
    assert ran == [("deploy", "prod")]
    assert state["messages"][-1].content == "the tool said: deployed to prod"
    decided = events(server, "--kind", "decision")
    assert [d["outcome"] for d in decided] == ["require_approval"]
    assert [a["actor_id"] for a in events(server, "--kind", "approval_approved")] == ["alice"]
    assert [e["status"] for e in events(server, "--kind", "execution")] == ["ok"]


def test_output_past_the_limit_reaches_the_model_cut(server):
    ran: list = []
    with client(server) as tg:
        state = agent(tg, {"name": "read", "args": {"path": "long"}}, ran).invoke(
            {"messages": [("user", "read it")]}, THREAD)
    assert 40 <= state["messages"][-1].content.count("x") <= 50, state["messages"][-1].content


def test_a_run_cancelled_mid_call_is_recorded_as_such(server):
    started = threading.Event()

    @tool
    async def read(path: str) -> str:
        """Reads a file, slowly."""
        started.set()
        await asyncio.sleep(30)
        return "contents"

    async def main(tg: Toolgate):
        built = create_agent(Scripted(call={"name": "read", "args": {"path": "a"}}), [read],
                             middleware=[ToolgateMiddleware(tg)], checkpointer=InMemorySaver())
        running = asyncio.ensure_future(built.ainvoke({"messages": [("user", "read it")]}, THREAD))
        assert await asyncio.to_thread(started.wait, 30), "the tool never started"
        running.cancel()
        with pytest.raises(asyncio.CancelledError):
            await running

    with client(server) as tg:
        asyncio.run(main(tg))
    executed = events(server, "--kind", "execution")
    assert [(e["status"], e["error"]) for e in executed] == [("error", "the run was cancelled")]


def test_a_sidecar_that_cannot_be_reached_blocks_the_call(server):
    ran: list = []
    with client(server, target=f"127.0.0.1:{free_port()}") as tg:
        with pytest.raises(ToolgateError):
            agent(tg, {"name": "read", "args": {"path": "notes.txt"}}, ran).invoke(
                {"messages": [("user", "read it")]}, THREAD)
    assert ran == []
