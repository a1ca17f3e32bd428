"""AsyncToolgate against the real server: coroutine tools through guard, guarded and tool, a
grpc.aio channel, cancellation at the decision's timeout, and concurrent guards."""

from __future__ import annotations

import asyncio
import json

import grpc
import pytest

from toolgate_client import AsyncToolgate, Denied, ToolTimedOut


def client(server, **options) -> AsyncToolgate:
    return AsyncToolgate(server.target, session_id="a1", actor_id="agent-1", **options)


def executions(server) -> list[dict]:
    lines = server.query("--json", "--kind", "execution").splitlines()
    return [json.loads(line) for line in lines]


def test_a_coroutine_tool_runs_through_guard_guarded_and_the_decorator(server):
    async def main():
        async with client(server) as tg:
            async def read(args):
                await asyncio.sleep(0.01)
                return f"read {args['path']}"

            first = await tg.guard("read", {"path": "a"}, run=read)
            async with tg.guarded("read", {"path": "b"}) as call:
                call.output = await read(call.args)

            @tg.tool("read")
            async def read_file(path):
                return await read({"path": path})

            third = await read_file("c")
            with pytest.raises(Denied):
                await tg.guard("write", {"path": "a"}, run=read, raise_on_deny=True)
            return first, call.result, third

    first, second, third = asyncio.run(main())

    assert first.ran and first.output == "read a"
    assert second is not None and second.output == "read b"
    assert third == "read c"
    assert [e["status"] for e in executions(server)] == ["ok", "ok", "ok"]


def test_a_grpc_aio_channel_can_be_given(server):
    async def main():
        channel = grpc.aio.insecure_channel(server.target)
        tg = AsyncToolgate(session_id="a1", actor_id="agent-1", channel=channel)
        try:
            return await tg.guard("read", {"path": "a"}, run=lambda a: "from a plain function")
        finally:
            await tg.close()

    result = asyncio.run(main())

    assert result.ran and result.output == "from a plain function"


def test_a_coroutine_past_its_timeout_is_cancelled_and_reported(server):
    finished = []

    async def slow(args):
        await asyncio.sleep(2)
        finished.append(True)

    async def main():
        async with client(server) as tg:
            with pytest.raises(ToolTimedOut):
                await tg.guard("read", {"path": "slow"}, run=slow, timeout_ms=200)
            await asyncio.sleep(2.2)

    asyncio.run(main())

    assert finished == [], "the coroutine was cancelled, not left running"
    (execution,) = executions(server)
    assert execution["status"] == "timeout" and execution["error"] == "ran out its 200 ms"


def test_concurrent_guards_each_pair_their_decision(server):
    async def main():
        async with client(server) as tg:
            async def tool(args):
                await asyncio.sleep(0.05)
                return args["path"]

            return await asyncio.gather(
                *(tg.guard("read", {"path": f"f{i}"}, run=tool) for i in range(8))
            )

    results = asyncio.run(main())

    assert sorted(r.output for r in results) == [f"f{i}" for i in range(8)]
    paired = {e["decision_id"] for e in executions(server)}
    assert paired == {r.decision.decision_id for r in results}


def test_an_unanswered_approval_is_withdrawn_by_the_async_client_too(server):
    async def main():
        async with client(server, approval_timeout=0.5) as tg:
            return await tg.guard("deploy", {"env": "prod"}, run=lambda a: "no", allow_bash=True)

    result = asyncio.run(main())

    assert not result.ran and result.approval.state == "withdrawn"
