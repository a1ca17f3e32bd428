"""The ADK adapter with Google's own package (LlmAgent, Runner, plugins, tool confirmation,
InMemorySessionService) and a scripted model on ADK's own `BaseLlm`, against the real server: a
denied call never runs and the model is told why, an allowed one runs and is on the trail, an
approval pauses the run and resumes it with the person's answer, a raising tool is recorded as
failed, and a sidecar that cannot be reached blocks the call."""

from __future__ import annotations

import asyncio
import json
from typing import Any, AsyncGenerator

import pytest
from google.adk.agents import LlmAgent
from google.adk.apps import App
from google.adk.models.base_llm import BaseLlm
from google.adk.models.llm_response import LlmResponse
from google.adk.runners import Runner
from google.adk.sessions import InMemorySessionService
from google.genai import types
from pydantic import Field

from conftest import events, free_port
from toolgate_client import AsyncToolgate, ToolgateError
from toolgate_client.integrations.adk import ToolgatePlugin

CONFIRM = "adk_request_confirmation"


class Scripted(BaseLlm):
    """A model that makes one tool call, then answers with what the tool gave back."""

    tool: str
    args: dict = Field(default_factory=dict)
    requests: list = Field(default_factory=list)

    async def generate_content_async(self, llm_request: Any, stream: bool = False
                                     ) -> AsyncGenerator[LlmResponse, None]:
        self.requests.append(llm_request)
        given = [part.function_response for content in llm_request.contents
                 for part in content.parts or [] if part.function_response is not None]
        part = types.Part(function_call=types.FunctionCall(name=self.tool, args=self.args)) \
            if not given else types.Part(text=f"the tool said: {json.dumps(given[-1].response)}")
        yield LlmResponse(content=types.Content(role="model", parts=[part]))


def tools(ran: list) -> list:
    def read(path: str) -> dict:
        """Reads a file."""
        if path == "long":
            return "x" * 5000
        if path == "missing":
            raise FileNotFoundError(path)
        ran.append(("read", path))
        return {"contents": f"contents of {path}"}

    async def deploy(env: str) -> dict:
        """Deploys."""
        await asyncio.sleep(0.01)
        ran.append(("deploy", env))
        return {"deployed": env}

    def shred(path: str) -> dict:
        """Shreds a file."""
        ran.append(("shred", path))
        return {"shredded": path}

    async def grep(path: str) -> dict:
        """Searches a file, taking its time."""
        await asyncio.sleep(0.5)
        ran.append(("grep", path))
        return {"found": path}

    return [read, deploy, shred, grep]



class Run:
    """One agent on a runner with the plugin, and its session."""

    def __init__(self, toolgate: AsyncToolgate, tool: str, args: dict, ran: list):
        self.model = Scripted(model="scripted", tool=tool, args=args)
        agent = LlmAgent(name="assistant", model=self.model, tools=tools(ran))
        app = App(name="app", root_agent=agent, plugins=[ToolgatePlugin(toolgate, allow_bash=True)])
        self.runner = Runner(app=app, session_service=InMemorySessionService())
        self.session: Any = None

    async def send(self, *parts: types.Part) -> list:
        if self.session is None:
            self.session = await self.runner.session_service.create_session(app_name="app",
                                                                           user_id="u1")
        message = types.Content(role="user", parts=list(parts))
        return [event async for event in self.runner.run_async(
            user_id="u1", session_id=self.session.id, new_message=message)]

    async def answer(self, asked: list, confirmed: bool, approver: str = "") -> list:
        [request] = [call for event in asked for call in event.get_function_calls()
                     if call.name == CONFIRM]
        response = {"confirmed": confirmed, "payload": {"approver": approver} if approver else {}}
        return await self.send(types.Part(function_response=types.FunctionResponse(
            id=request.id, name=CONFIRM, response=response)))


def said(happened: list) -> str:
    return [e.content.parts[0].text for e in happened if e.content and e.content.parts
            and e.content.parts[0].text][-1]


def client(server, target: str | None = None) -> AsyncToolgate:
    return AsyncToolgate(target or server.target, session_id="unused", actor_id="agent-1",
                         rpc_timeout=3)


def test_a_denied_call_never_runs_and_the_model_is_told_why(server):
    ran: list = []

    async def main():
        async with client(server) as tg:
            run = Run(tg, "shred", {"path": "/etc/passwd"}, ran)
            return run, await run.send(types.Part(text="shred it"))

    run, happened = asyncio.run(main())
    assert ran == []
    assert said(happened) == 'the tool said: {"error": "toolgate denied this call: unknown tool: shred"}'
    denied = events(server, "--kind", "decision")
    assert [(d["tool"], d["outcome"], d["session_id"]) for d in denied] == [("shred", "deny", run.session.id)]


def test_an_allowed_call_runs_and_both_records_are_on_the_trail(server):
    ran: list = []

    async def main():
        async with client(server) as tg:
            return await Run(tg, "read", {"path": "notes.txt"}, ran).send(types.Part(text="read it"))

    happened = asyncio.run(main())
    assert ran == [("read", "notes.txt")]
    assert said(happened) == 'the tool said: {"contents": "contents of notes.txt"}'
    decided = events(server, "--kind", "decision")
    executed = events(server, "--kind", "execution")
    assert [d["outcome"] for d in decided] == ["allow"]
    assert [e["decision_id"] for e in executed] == [decided[0]["decision_id"]]
    assert executed[0]["status"] == "ok" and executed[0]["result_bytes"] > 0


def test_an_approval_pauses_the_run_and_resumes_it_with_the_persons_answer(server):
    ran: list = []

    async def main():
        async with client(server) as tg:
            run = Run(tg, "deploy", {"env": "prod"}, ran)
            asked = await run.send(types.Part(text="deploy"))
            assert ran == [] and len(run.model.requests) == 1, "the run paused for a person"
            return await run.answer(asked, confirmed=True, approver="alice")

    happened = asyncio.run(main())
    assert ran == [("deploy", "prod")]
    assert said(happened) == 'the tool said: {"deployed": "prod"}'
    decided = events(server, "--kind", "decision")
    assert [d["outcome"] for d in decided] == ["require_approval"], "decided once, not again on resume"
    assert [a["actor_id"] for a in events(server, "--kind", "approval_approved")] == ["alice"]
    executed = events(server, "--kind", "execution")
    assert [e["decision_id"] for e in executed] == [decided[0]["decision_id"]]
    assert not events(server, "--kind", "violation")


def test_a_refusal_does_not_run_the_call_and_withdraws_it(server):
    ran: list = []

    async def main():
        async with client(server) as tg:
            run = Run(tg, "deploy", {"env": "prod"}, ran)
            return await run.answer(await run.send(types.Part(text="deploy")), confirmed=False)

    happened = asyncio.run(main())
    assert ran == []
    assert "a person refused this call" in said(happened)
    assert events(server, "--kind", "approval_withdrawn")
    assert not events(server, "--kind", "execution")


def test_a_tool_that_raises_is_recorded_as_failed(server):
    ran: list = []

    async def main():
        async with client(server) as tg:
            await Run(tg, "read", {"path": "missing"}, ran).send(types.Part(text="read it"))

    with pytest.raises(FileNotFoundError):
        asyncio.run(main())
    executed = events(server, "--kind", "execution")
    assert [e["status"] for e in executed] == ["error"]
    assert "missing" in executed[0]["error"]


class Reusing(Scripted):
    """A model that gives a second call the id of one still waiting for a person: a deploy,
    then, after the user's next message, a shred under the deploy's id."""

    async def generate_content_async(self, llm_request: Any, stream: bool = False
                                     ) -> AsyncGenerator[LlmResponse, None]:
        self.requests.append(llm_request)
        turn = len(self.requests)
        call = {1: ("deploy", {"env": "prod"}), 2: ("shred", {"path": "notes.txt"})}.get(turn)
        part = types.Part(function_call=types.FunctionCall(id="same", name=call[0], args=call[1])) \
            if call else types.Part(text="done")
        yield LlmResponse(content=types.Content(role="model", parts=[part]))


def test_a_model_that_reuses_a_waiting_calls_id_cannot_run_another_tool_on_its_decision(server):
    ran: list = []

    async def main():
        async with client(server) as tg:
            run = Run(tg, "deploy", {}, ran)
            run.runner.agent.model = Reusing(model="scripted", tool="deploy")
            await run.send(types.Part(text="deploy"))           # the deploy waits for a person
            asked = await run.send(types.Part(text="never mind"))  # the shred, under its id
            # Whatever the run now waits for, a person says yes to it.
            if any(c.name == CONFIRM for e in asked for c in e.get_function_calls()):
                await run.answer(asked, confirmed=True, approver="alice")

    asyncio.run(main())
    assert ("shred", "notes.txt") not in ran, "the shred ran on the deploy's decision"
    decided = [(e["tool"], e["outcome"]) for e in events(server, "--kind", "decision")]
    assert ("shred", "deny") in decided, decided


class Thrice(Scripted):
    """A model that gives three calls of one turn one id (ADK runs them at once)."""

    async def generate_content_async(self, llm_request: Any, stream: bool = False
                                     ) -> AsyncGenerator[LlmResponse, None]:
        self.requests.append(llm_request)
        parts = [types.Part(text="done")] if len(self.requests) > 1 else [
            types.Part(function_call=types.FunctionCall(id="dup", name="grep", args={"path": "notes.txt"}))
            for _ in range(3)]
        yield LlmResponse(content=types.Content(role="model", parts=parts))


def test_calls_a_model_gives_one_id_in_one_turn_are_each_recorded(server):
    ran: list = []

    async def main():
        async with client(server) as tg:
            run = Run(tg, "grep", {}, ran)
            run.runner.agent.model = Thrice(model="scripted", tool="grep")
            await run.send(types.Part(text="go"))

    asyncio.run(main())
    assert len(ran) == 3
    decided = events(server, "--kind", "decision")
    executed = events(server, "--kind", "execution")
    assert len(executed) == len(ran), "a run went unrecorded"
    assert sorted(e["decision_id"] for e in executed) == sorted(d["decision_id"] for d in decided)


def test_output_past_the_limit_reaches_the_model_cut(server):
    ran: list = []

    async def main():
        async with client(server) as tg:
            return await Run(tg, "read", {"path": "long"}, ran).send(types.Part(text="read it"))

    happened = asyncio.run(main())
    assert 40 <= said(happened).count("x") <= 50, said(happened)


def test_a_sidecar_that_cannot_be_reached_blocks_the_call(server):
    ran: list = []

    async def main():
        async with client(server, target=f"127.0.0.1:{free_port()}") as tg:
            await Run(tg, "read", {"path": "notes.txt"}, ran).send(types.Part(text="read it"))

    with pytest.raises(Exception) as raised:
        asyncio.run(main())
    assert isinstance(raised.value, ToolgateError) or isinstance(raised.value.__cause__, ToolgateError), raised.value
    assert ran == []
