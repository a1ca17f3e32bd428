"""The OpenAI Agents SDK adapter with the SDK's own package (Agent, Runner, function tools,
guardrails, interruptions and RunState) and its own scripted model, against the real server: a
denied call never runs and the model is told why, an allowed one runs and is on the trail, an
approval interrupts the run and resumes it with the person's answer, a raising tool is recorded
as failed, and a sidecar that cannot be reached blocks the call."""

from __future__ import annotations

import asyncio

import pytest
from agents import Agent, Runner, UserError, function_tool, set_tracing_disabled
from agents.testing import ModelStep, ScriptedModel, assistant_message, function_call

from conftest import events, free_port
from toolgate_client import AsyncToolgate, ToolgateError
from toolgate_client.integrations.openai_agents import ToolgateGuard

set_tracing_disabled(True)


def scripted(tool: str, args: dict) -> ScriptedModel:
    """A model that makes one tool call, then answers with what the tool gave back."""

    def answer(call) -> list:
        [given] = [item for item in call.input if isinstance(item, dict)
                   and item.get("type") == "function_call_output"]
        return [assistant_message(f"the tool said: {given['output']}")]

    steps = [[function_call(tool, args, call_id="call-1")], ModelStep.respond(answer)]
    return ScriptedModel(steps)


def tools(ran: list) -> list:
    @function_tool
    def read(path: str) -> str:
        """Reads a file."""
        if path == "long":
            return "x" * 5000
        if path == "missing":
            raise FileNotFoundError(path)
        ran.append(("read", path))
        return f"contents of {path}"

    @function_tool
    async def deploy(env: str) -> str:
        """Deploys."""
        await asyncio.sleep(0.01)
        ran.append(("deploy", env))
        return f"deployed to {env}"

    @function_tool
    def shred(path: str) -> str:
        """Shreds a file."""
        ran.append(("shred", path))
        return "shredded"

    return [read, deploy, shred]



def client(server, target: str | None = None) -> AsyncToolgate:
    return AsyncToolgate(target or server.target, session_id="unused", actor_id="agent-1",
                         rpc_timeout=3)


def agent(model: ScriptedModel, ran: list) -> Agent:
    return Agent(name="assistant", model=model, tools=tools(ran))


CONTEXT = {"session_id": "run-7"}


def test_a_denied_call_never_runs_and_the_model_is_told_why(server):
    ran: list = []

    async def main():
        async with client(server) as tg:
            guard = ToolgateGuard(tg, allow_bash=True)
            return await Runner.run(guard.agent(agent(scripted("shred", {"path": "/etc/passwd"}), ran)),
                                    "shred it", context=CONTEXT)

    result = asyncio.run(main())
    assert ran == []
    assert result.final_output == "the tool said: toolgate denied this call: unknown tool: shred"
    denied = events(server, "--kind", "decision")
    assert [(d["tool"], d["outcome"], d["session_id"]) for d in denied] == [("shred", "deny", "run-7")]


def test_an_allowed_call_runs_and_both_records_are_on_the_trail(server):
    ran: list = []

    async def main():
        async with client(server) as tg:
            guard = ToolgateGuard(tg, allow_bash=True)
            return await Runner.run(guard.agent(agent(scripted("read", {"path": "notes.txt"}), ran)),
                                    "read it", context=CONTEXT)

    result = asyncio.run(main())
    assert ran == [("read", "notes.txt")]
    assert result.final_output == "the tool said: contents of notes.txt"
    decided = events(server, "--kind", "decision")
    executed = events(server, "--kind", "execution")
    assert [d["outcome"] for d in decided] == ["allow"]
    assert [e["decision_id"] for e in executed] == [decided[0]["decision_id"]]
    assert executed[0]["status"] == "ok" and executed[0]["result_bytes"] > 0


def test_an_approval_interrupts_the_run_and_resumes_it_with_the_persons_answer(server):
    ran: list = []

    async def main():
        async with client(server) as tg:
            guard = ToolgateGuard(tg, allow_bash=True)
            governed = guard.agent(agent(scripted("deploy", {"env": "prod"}), ran))
            paused = await Runner.run(governed, "deploy", context=CONTEXT)
            [waiting] = paused.interruptions
            assert ran == [] and waiting.tool_name == "deploy"
            state = paused.to_state()
            guard.approve(state, waiting, approver="alice")
            return await Runner.run(governed, state)

    result = asyncio.run(main())
    assert ran == [("deploy", "prod")]
    assert result.final_output == "the tool said: deployed to prod"
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
            guard = ToolgateGuard(tg, allow_bash=True)
            governed = guard.agent(agent(scripted("deploy", {"env": "prod"}), ran))
            paused = await Runner.run(governed, "deploy", context=CONTEXT)
            state = paused.to_state()
            await guard.reject(state, paused.interruptions[0], "not today")
            return await Runner.run(governed, state)

    result = asyncio.run(main())
    assert ran == []
    assert result.final_output == "the tool said: a person refused this call: not today"
    assert events(server, "--kind", "approval_withdrawn")
    assert not events(server, "--kind", "execution")


def test_a_blanket_approval_in_the_sdk_does_not_let_a_second_call_run_on_it(server):
    ran: list = []
    model = ScriptedModel([[function_call("deploy", {"env": "staging"}, call_id="call-1")],
                           [function_call("deploy", {"env": "prod"}, call_id="call-2")],
                           ModelStep.respond(lambda call: [assistant_message("done")])])

    async def main():
        async with client(server) as tg:
            guard = ToolgateGuard(tg, allow_bash=True)
            governed = guard.agent(agent(model, ran))
            paused = await Runner.run(governed, "deploy both", context=CONTEXT)
            state = paused.to_state()
            state.approve(paused.interruptions[0], always_approve=True)
            result = await Runner.run(governed, state)
            # Whatever the run now waits for is left unanswered.
            return result

    asyncio.run(main())
    assert ran == [("deploy", "staging")], "the prod deploy ran on the staging deploy's approval"


def test_a_rewrite_runs_when_the_call_already_has_the_arguments_and_is_refused_otherwise(server):
    ran: list = []

    @function_tool
    def rm(path: str, interactive: bool) -> str:
        """Removes a file."""
        ran.append(("rm", path, interactive))
        return "removed"

    async def main(args: dict):
        async with client(server) as tg:
            guard = ToolgateGuard(tg, allow_write=True)
            return await Runner.run(guard.agent(Agent(name="a", model=scripted("rm", args), tools=[rm])),
                                    "remove it", context=CONTEXT)

    refused = asyncio.run(main({"path": "a", "interactive": False}))
    assert ran == [] and "toolgate allows this call only as" in refused.final_output
    asyncio.run(main({"path": "a", "interactive": True}))
    assert ran == [("rm", "a", True)]


def test_two_sessions_calls_under_one_id_are_each_recorded(server):
    ran: list = []

    async def main():
        async with client(server) as tg:
            guard = ToolgateGuard(tg, allow_bash=True)
            # Both wait for a person under call-1; then both are approved and run at once.
            paused = await asyncio.gather(*(Runner.run(
                guard.agent(agent(scripted("deploy", {"env": s}), ran)), "go",
                context={"session_id": s}) for s in ("A", "B")))
            states = []
            for result in paused:
                state = result.to_state()
                guard.approve(state, result.interruptions[0], approver="alice")
                states.append((result, state))
            await asyncio.gather(*(Runner.run(result.last_agent, state) for result, state in states))

    asyncio.run(main())
    assert sorted(ran) == [("deploy", "A"), ("deploy", "B")]
    executed = events(server, "--kind", "execution")
    assert sorted(e["session_id"] for e in executed) == ["A", "B"], "a run went unrecorded"


def test_a_tool_that_raises_is_recorded_as_failed(server):
    ran: list = []

    async def main():
        async with client(server) as tg:
            guard = ToolgateGuard(tg, allow_bash=True)
            return await Runner.run(guard.agent(agent(scripted("read", {"path": "missing"}), ran)),
                                    "read it", context=CONTEXT)

    result = asyncio.run(main())
    assert "error" in result.final_output.lower()
    executed = events(server, "--kind", "execution")
    assert [e["status"] for e in executed] == ["error"]
    assert "missing" in executed[0]["error"]


def test_a_model_that_reuses_a_waiting_calls_id_cannot_run_another_tool_on_its_decision(server):
    ran: list = []

    async def main():
        async with client(server) as tg:
            guard = ToolgateGuard(tg, allow_bash=True)
            waiting = await Runner.run(guard.agent(agent(ScriptedModel(
                [[function_call("deploy", {"env": "prod"}, call_id="same")]]), ran)), "deploy",
                context=CONTEXT)
            assert waiting.interruptions, "the deploy waits for a person"
            # The next run: the model calls shred under the waiting deploy's id.
            governed = guard.agent(agent(ScriptedModel(
                [[function_call("shred", {"path": "notes.txt"}, call_id="same")],
                 [assistant_message("done")]]), ran))
            result = await Runner.run(governed, "never mind", context=CONTEXT)
            # Whatever the run now waits for, a person says yes to it.
            if result.interruptions:
                state = result.to_state()
                for item in result.interruptions:
                    guard.approve(state, item, approver="alice")
                await Runner.run(governed, state)

    asyncio.run(main())
    assert ("shred", "notes.txt") not in ran, "the shred ran on the deploy's decision"
    decided = [(e["tool"], e["outcome"]) for e in events(server, "--kind", "decision")]
    assert ("shred", "deny") in decided, decided


def test_output_past_the_limit_reaches_the_model_cut(server):
    ran: list = []

    async def main():
        async with client(server) as tg:
            guard = ToolgateGuard(tg, allow_bash=True)
            return await Runner.run(guard.agent(agent(scripted("read", {"path": "long"}), ran)),
                                    "read it", context=CONTEXT)

    result = asyncio.run(main())
    assert 40 <= result.final_output.count("x") <= 50, result.final_output


def test_a_sidecar_that_cannot_be_reached_blocks_the_call(server):
    ran: list = []

    async def main():
        async with client(server, target=f"127.0.0.1:{free_port()}") as tg:
            guard = ToolgateGuard(tg, allow_bash=True)
            await Runner.run(guard.agent(agent(scripted("read", {"path": "notes.txt"}), ran)),
                             "read it", context=CONTEXT)

    # The SDK wraps what a tool's seam raised in its own UserError.
    with pytest.raises(UserError) as raised:
        asyncio.run(main())
    assert isinstance(raised.value.__cause__, ToolgateError), raised.value
    assert ran == []
