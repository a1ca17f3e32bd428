"""An agent built on Pydantic AI, its tools governed by toolgate through the framework's own
seam (toolgate_client.integrations.pydantic_ai, docs/frameworks.md).

The model is Pydantic AI's own `FunctionModel` playing a script, so that it runs offline: it
reads the README (allowed), shreds a file (a tool nobody registered: denied, and it is told
why), and deploys to staging, which the policy sends to a person: the run pauses with Pydantic
AI's own deferred approval, a stand-in person approves it, and the run resumes.

    toolgate serve --config examples/agent/toolgate.toml        # in another terminal
    python3 -m venv .venv && .venv/bin/pip install "./clients/python[pydantic-ai]"
    .venv/bin/python examples/frameworks/pydantic_ai_agent.py [--target 127.0.0.1:50051] [--refuse]

Then `toolgate query --db toolgate.db` shows the three calls on the trail: the denial, the
approval with its verdict, the allowed read with its execution.
"""

from __future__ import annotations

import argparse
import asyncio
import pathlib
import uuid

from pydantic_ai import Agent, DeferredToolRequests, DeferredToolResults
from pydantic_ai.messages import ModelResponse, TextPart, ToolCallPart, ToolReturnPart
from pydantic_ai.models.function import FunctionModel
from pydantic_ai.toolsets import FunctionToolset

from toolgate_client import AsyncToolgate
from toolgate_client.integrations.pydantic_ai import ToolgateToolset

ROOT = pathlib.Path(__file__).resolve().parents[2]

# What the scripted model asks for, one call a turn.
SCRIPT = [
    ("read", {"path": str(ROOT / "README.md")}),
    ("shred", {"path": "/etc/passwd"}),
    ("deploy", {"env": "staging", "version": "1.4.2"}),
]


def model(messages, info) -> ModelResponse:
    """The next call of the script, or, once each came back, what they came to."""
    returned = [part for message in messages for part in getattr(message, "parts", [])
                if isinstance(part, ToolReturnPart)]
    if len(returned) < len(SCRIPT):
        tool, args = SCRIPT[len(returned)]
        return ModelResponse(parts=[ToolCallPart(tool, args, tool_call_id=f"call-{len(returned)}")])
    said = "; ".join(f"{part.tool_name}: {str(part.content)[:60]!r}" for part in returned)
    return ModelResponse(parts=[TextPart(f"done. {said}")])


def tools() -> FunctionToolset:
    toolset = FunctionToolset()

    @toolset.tool_plain
    def read(path: str) -> str:
        """Reads a file."""
        return pathlib.Path(path).read_text()[:200]

    @toolset.tool_plain
    def shred(path: str) -> str:
        """Overwrites a file and deletes it."""
        raise AssertionError("toolgate never lets this run")

    @toolset.tool_plain
    def deploy(env: str, version: str) -> str:
        """Deploys a version to an environment."""
        return f"deployed {version} to {env}"

    return toolset


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--target", default="127.0.0.1:50051")
    parser.add_argument("--refuse", action="store_true", help="the stand-in person refuses the deploy")
    options = parser.parse_args()

    async with AsyncToolgate(options.target, session_id=f"pydantic-ai-{uuid.uuid4().hex[:8]}",
                             actor_id="release-agent") as toolgate:
        governed = ToolgateToolset(tools(), toolgate, approver="reviewer", allow_bash=True)
        agent = Agent(FunctionModel(model), toolsets=[governed],
                      output_type=[str, DeferredToolRequests])
        result = await agent.run("ship 1.4.2 to staging")
        while isinstance(result.output, DeferredToolRequests):
            requests = result.output
            for call in requests.approvals:
                why = requests.metadata.get(call.tool_call_id, {}).get("toolgate", {}).get("reason")
                verdict = "refuses" if options.refuse else "approves"
                print(f"waiting for a person: {call.tool_name}({call.args}): {why}; reviewer {verdict}")
            answer = DeferredToolResults(
                approvals={call.tool_call_id: not options.refuse for call in requests.approvals},
                metadata=requests.metadata)
            result = await agent.run(message_history=result.all_messages(),
                                     deferred_tool_results=answer)
        for message in result.all_messages():
            for part in getattr(message, "parts", []):
                if isinstance(part, ToolReturnPart):
                    print(f"{part.tool_name} -> {str(part.content)[:100]!r}")
        print(f"model: {result.output}")


if __name__ == "__main__":
    asyncio.run(main())
