"""The CrewAI adapter with CrewAI's own package (Agent, Task, Crew, its tool-call hooks) and a
scripted LLM on CrewAI's own `BaseLLM`, on both of CrewAI's paths (native function calling and
ReAct text), against the real server: a denied call never runs and the model is told why, an
allowed one runs and is on the trail, a call that needs approval waits for a person in toolgate,
a raising tool is recorded as failed, and a sidecar that cannot be reached blocks the call.

CrewAI pins an openai the OpenAI Agents SDK cannot share a venv with: scripts/test runs this file
in a venv of its own (target/python-venv-crewai), and conftest.py leaves it out elsewhere."""

from __future__ import annotations

import json
import os
import tempfile
import threading
import time

# Before CrewAI is imported: nothing leaves this machine, nothing is written outside the test's.
os.environ.update(CREWAI_DISABLE_TELEMETRY="true", OTEL_SDK_DISABLED="true",
                  CREWAI_TRACING_ENABLED="false", CREWAI_DISABLE_VERSION_CHECK="true")

import grpc  # noqa: E402
import pytest  # noqa: E402
from crewai import Agent, Crew, Task  # noqa: E402
from crewai.hooks import (  # noqa: E402
    get_after_tool_call_hooks, get_before_tool_call_hooks, register_before_tool_call_hook,
    unregister_before_tool_call_hook,
)
from crewai.llms.base_llm import BaseLLM  # noqa: E402
from crewai.tools import tool  # noqa: E402
from pydantic import Field  # noqa: E402

from conftest import HERE, events, free_port, start  # noqa: E402
from toolgate_client import Toolgate  # noqa: E402
from toolgate_client.integrations.crewai import ToolgateHooks  # noqa: E402
from toolgate_client.v1 import approvals_pb2, approvals_pb2_grpc  # noqa: E402

PATHS = ["native", "react"]
# CrewAI's own deprecations, raised inside its package on every kickoff: not this test's to fix.
pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


@pytest.fixture(autouse=True)
def crewai_home(tmp_path, monkeypatch):
    """CrewAI writes a key under ~, its storage where told and lock files in the temporary
    folder: all the test's own."""
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("CREWAI_STORAGE_DIR", str(tmp_path / "crewai"))
    (tmp_path / "tmp").mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "tmp"))


class Scripted(BaseLLM):
    """Makes one tool call (a native function call, or ReAct's Action), then answers with what
    the tool gave back."""

    native: bool = True
    tool: str = ""
    args: dict = Field(default_factory=dict)
    seen: list = Field(default_factory=list)

    def supports_function_calling(self) -> bool:
        return self.native

    def call(self, messages, tools=None, callbacks=None, available_functions=None,
             from_task=None, from_agent=None, response_model=None, **kwargs):
        messages = [{"role": "user", "content": messages}] if isinstance(messages, str) else messages
        self.seen.append([(m.get("role"), str(m.get("content"))) for m in messages])
        if len(self.seen) == 1:
            if self.native and tools:
                return [{"id": "call_1", "type": "function",
                         "function": {"name": self.tool, "arguments": json.dumps(self.args)}}]
            return f"Thought: I need the tool.\nAction: {self.tool}\nAction Input: {json.dumps(self.args)}"
        # CrewAI's own error text holds its format help, "Final Answer:" among it.
        said = self.last_result().replace("Final Answer:", "Final-Answer:").replace("\n", " ")
        return f"the tool said: {said}" if self.native else f"Thought: done\nFinal Answer: the tool said: {said}"

    def last_result(self) -> str:
        for role, content in reversed(self.seen[-1]):
            if role == "tool":
                return content
            if "\nObservation: " in content:
                return content.rsplit("\nObservation: ", 1)[1].strip()
        return ""


def tools(ran: list) -> list:
    @tool("read")
    def read(path: str) -> str:
        """Reads a file."""
        ran.append(("read", path))
        if path == "long":
            return "x" * 5000
        if path == "missing":
            raise FileNotFoundError(path)
        return f"contents of {path}"

    @tool("deploy")
    def deploy(env: str) -> str:
        """Deploys."""
        ran.append(("deploy", env))
        return f"deployed to {env}"

    @tool("shred")
    def shred(path: str) -> str:
        """Shreds a file."""
        ran.append(("shred", path))
        return "shredded"

    return [read, deploy, shred]


def kickoff(toolgate: Toolgate, path: str, tool_name: str, args: dict, ran: list) -> tuple[str, Crew]:
    llm = Scripted(model="scripted", native=path == "native", tool=tool_name, args=args)
    agent = Agent(role="operator", goal="do the task", backstory="scripted", llm=llm,
                  tools=tools(ran), max_iter=3, verbose=False)
    task = Task(description="do it", expected_output="what the tool said", agent=agent)
    crew = Crew(agents=[agent], tasks=[task], verbose=False)
    with ToolgateHooks(toolgate, allow_bash=True):
        output = crew.kickoff()
    return str(output.raw), crew



def client(server, target: str | None = None, approval_timeout: float = 30) -> Toolgate:
    return Toolgate(target or server.target, session_id="unused", actor_id="agent-1",
                    rpc_timeout=3, approval_timeout=approval_timeout)


@pytest.mark.parametrize("path", PATHS)
def test_a_denied_call_never_runs_and_the_model_is_told_why(server, path):
    ran: list = []
    with client(server) as tg:
        said, crew = kickoff(tg, path, "shred", {"path": "/etc/passwd"}, ran)
    assert ran == []
    assert "toolgate denied this call: unknown tool: shred" in said
    denied = events(server, "--kind", "decision")
    assert [(d["tool"], d["outcome"], d["session_id"]) for d in denied] == [("shred", "deny", str(crew.id))]
    assert (get_before_tool_call_hooks(), get_after_tool_call_hooks()) == ([], []), "the hooks are gone"


@pytest.mark.parametrize("path", PATHS)
def test_an_allowed_call_runs_and_both_records_are_on_the_trail(server, path):
    ran: list = []
    with client(server) as tg:
        said, _ = kickoff(tg, path, "read", {"path": "notes.txt"}, ran)
    assert ran == [("read", "notes.txt")]
    assert "contents of notes.txt" in said
    decided = events(server, "--kind", "decision")
    executed = events(server, "--kind", "execution")
    assert [d["outcome"] for d in decided] == ["allow"]
    assert [(e["decision_id"], e["status"]) for e in executed] == [(decided[0]["decision_id"], "ok")]
    assert json.loads(decided[0]["request"])["context"]["crewai"]["agent_role"] == "operator"


def approve_when_asked(server, approver: str) -> threading.Thread:
    """A person who approves the first pending call in toolgate once there is one."""

    def approve() -> None:
        with grpc.insecure_channel(server.target) as channel:
            approvals = approvals_pb2_grpc.ApprovalsStub(channel)
            deadline = time.monotonic() + 30
            while time.monotonic() < deadline:
                pending = approvals.ListPending(approvals_pb2.ListPendingRequest()).approvals
                if pending:
                    approvals.Approve(approvals_pb2.VerdictRequest(
                        decision_id=pending[0].decision_id, approver=approver, comment="ok"))
                    return
                time.sleep(0.05)

    person = threading.Thread(target=approve)
    person.start()
    return person


def test_a_call_that_needs_approval_waits_for_a_person_in_toolgate(server):
    ran: list = []
    person = approve_when_asked(server, "alice")
    with client(server) as tg:
        said, _ = kickoff(tg, "native", "deploy", {"env": "prod"}, ran)
    person.join()
    assert ran == [("deploy", "prod")]
    assert "deployed to prod" in said
    assert [a["actor_id"] for a in events(server, "--kind", "approval_approved")] == ["alice"]
    assert [e["status"] for e in events(server, "--kind", "execution")] == ["ok"]


def test_a_call_nobody_approves_in_time_is_refused_and_withdrawn(server):
    ran: list = []
    with client(server, approval_timeout=0.5) as tg:
        said, _ = kickoff(tg, "native", "deploy", {"env": "prod"}, ran)
    assert ran == []
    assert "toolgate refused this call: no approval within" in said
    assert events(server, "--kind", "approval_withdrawn")


@pytest.mark.parametrize("path", PATHS)
def test_a_tool_that_raises_is_recorded_as_failed(server, path):
    ran: list = []
    with client(server) as tg:
        kickoff(tg, path, "read", {"path": "missing"}, ran)
    assert ran and set(ran) == {("read", "missing")}
    executed = events(server, "--kind", "execution")
    assert [e["status"] for e in executed] == ["error"]
    assert "missing" in executed[0]["error"]


@pytest.mark.parametrize("path", PATHS)
def test_arguments_are_decided_as_the_tool_takes_them(tmp_path, path):
    # A policy that forbids following links: a model that writes "true" for true is held to it.
    policy = tmp_path / "policy.cedar"
    policy.write_text((HERE / "policy.cedar").read_text() + '''
@id("no-follow") @reason("following links is forbidden")
forbid (principal, action, resource) when { context.args has follow && context.args.follow == true };
''')
    server = start(tmp_path, policy=policy)
    ran: list = []

    @tool("read")
    def read(path: str, follow: bool = False) -> str:
        """Reads a file, following links when asked."""
        ran.append(("read", path, follow))
        return "contents"

    llm = Scripted(model="scripted", native=path == "native", tool="read",
                   args={"path": "a", "follow": "true"})
    agent = Agent(role="operator", goal="do the task", backstory="scripted", llm=llm, tools=[read],
                  max_iter=2, verbose=False)
    crew = Crew(agents=[agent], tasks=[Task(description="do it", expected_output="it", agent=agent)])
    try:
        with client(server) as tg, ToolgateHooks(tg):
            crew.kickoff()
    finally:
        server.process.terminate()
        server.process.wait(timeout=30)
    assert not any(follow is True for _, _, follow in ran), "a read ran with follow=True, decided as text"
    decided = events(server, "--kind", "decision")
    assert decided and all(d["outcome"] == "deny" for d in decided), decided


def test_output_past_the_limit_reaches_the_model_cut(server):
    ran: list = []
    with client(server) as tg:
        said, _ = kickoff(tg, "native", "read", {"path": "long"}, ran)
    assert 40 <= said.count("x") <= 50, said


def test_a_call_another_hook_blocks_after_toolgate_allowed_it_is_not_recorded_as_run(server):
    ran: list = []

    def veto(ctx):
        return False

    llm = Scripted(model="scripted", native=True, tool="read", args={"path": "notes.txt"})
    agent = Agent(role="operator", goal="do the task", backstory="scripted", llm=llm,
                  tools=tools(ran), max_iter=2, verbose=False)
    crew = Crew(agents=[agent], tasks=[Task(description="do it", expected_output="it", agent=agent)])
    with client(server) as tg, ToolgateHooks(tg):
        register_before_tool_call_hook(veto)  # after toolgate's: it sees the call allowed
        try:
            crew.kickoff()
        finally:
            unregister_before_tool_call_hook(veto)
    assert ran == []
    assert [d["outcome"] for d in events(server, "--kind", "decision")] == ["allow"]
    assert not events(server, "--kind", "execution"), "a run that never happened was recorded"


def test_a_sidecar_that_cannot_be_reached_blocks_the_call(server):
    ran: list = []
    with client(server, target=f"127.0.0.1:{free_port()}") as tg:
        said, _ = kickoff(tg, "native", "read", {"path": "notes.txt"}, ran)
    assert ran == []
    assert "toolgate could not be asked" in said
