"""Each coding agent, hooked by `toolgate hook install`, with its shell call decided by the
coding policy: denied, allowed and recorded, held until a person approves it, and blocked when
the sidecar is down. The agent's own words are the evidence: what its model was told next, what
the shell did, and what the trail holds."""

from __future__ import annotations

import json
import subprocess
import time

from conftest import ROOT, RUN_TIMEOUT, Server, Session, free_port, toolgate

PROMPT = "Run the command."
DENIED = "not one of the safe command lines"
# The decision `hook doctor` makes to try the sidecar is not the agent's.
DOCTOR_SESSION = "toolgate-doctor"
# Each agent's npm package, whose pinned version the trail names.
PACKAGES = {"claude": "@anthropic-ai/claude-code", "codex": "@openai/codex",
            "gemini": "@google/gemini-cli", "copilot": "@github/copilot", "opencode": "opencode-ai",
            "qwen": "@qwen-code/qwen-code"}


def hooked(session: Session, server: Server) -> None:
    """The hooks installed for `server`, and `hook doctor` content with them."""
    session.install(server.url)
    doctor = session.doctor(server.url)
    assert doctor.returncode == 0, (
        f"hook doctor exited {doctor.returncode}:\n{doctor.stdout}\n{doctor.stderr}"
    )


def agent_events(server: Server, *filters: str) -> list[dict]:
    return [e for e in server.events(*filters) if e.get("session_id") != DOCTOR_SESSION]


def evidence(session: Session, run, server: Server | None = None) -> str:
    """What a failure shows: the run, the model's requests, the hook's file, the trail."""
    model = session.ws.model
    parts = [run.describe(), "--- model requests", model.transcript(),
             "--- tool results after the shell call", *model.results_after_call()]
    hook = session.agent.hook_file(session.ws)
    if hook.exists():
        parts += [f"--- {hook}", hook.read_text()[:3000]]
    if server is not None:
        parts += ["--- trail", *(json.dumps(e)[:700] for e in server.events())]
        parts += ["--- server log", server.log.read_text()[-3000:]]
    return "\n".join(parts)


def told_the_model(session: Session, text: str) -> bool:
    """Whether a tool result the agent gave its model after the shell call holds `text`: the
    command's output, or the reason it did not run."""
    return any(text in result for result in session.ws.model.results_after_call())


def asked_for_the_call(session: Session, run) -> None:
    """The model's shell call was made, and the agent came back after it: the run got as far
    as the hook."""
    model = session.ws.model
    assert model.calls(), "the agent never offered its model the shell tool:\n" + evidence(session, run)
    assert model.after_call(), "the agent never came back to its model after the shell call:\n" + evidence(
        session, run
    )


def test_a_command_the_policy_denies_does_not_run(agent, make_session, server):
    session = make_session("touch {project}/marker")
    hooked(session, server)
    run = session.run(PROMPT)
    assert run.returncode is not None, "the agent did not finish:\n" + evidence(session, run, server)
    asked_for_the_call(session, run)

    assert not (session.ws.project / "marker").exists(), "the denied command ran:\n" + evidence(
        session, run, server
    )
    assert told_the_model(session, DENIED), "the model was not told why:\n" + evidence(session, run, server)
    denied = agent_events(server, "--kind", "decision", "--outcome", "deny")
    assert [(d["actor_id"], d["tool"], d["reason"]) for d in denied] == [
        (agent.harness, "bash", DENIED)
    ], evidence(session, run, server)
    assert not agent_events(server, "--kind", "execution"), evidence(session, run, server)


def test_a_command_the_policy_allows_runs_and_is_recorded(agent, make_session, server):
    session = make_session("ls")
    hooked(session, server)
    run = session.run(PROMPT)
    assert run.returncode is not None, "the agent did not finish:\n" + evidence(session, run, server)
    asked_for_the_call(session, run)

    # `ls` ran: its listing went back to the model.
    assert told_the_model(session, "README.md"), "the allowed command's output did not reach the model:\n" + (
        evidence(session, run, server)
    )
    allowed = agent_events(server, "--kind", "decision", "--outcome", "allow")
    assert [(d["actor_id"], d["tool"], d["resource_id"]) for d in allowed] == [
        (agent.harness, "bash", "ls")
    ], evidence(session, run, server)
    # The agent named on the trail, with its version: from its own word where it tells its
    # hooks (Copilot CLI), else from its package, found from the processes the hook runs under.
    context = json.loads(allowed[0]["request"])["context"]
    assert context["harness"] == agent.harness, evidence(session, run, server)
    pinned = json.loads((ROOT / "tests/agents/package.json").read_text())["dependencies"]
    assert context.get("harness_version", "").startswith(pinned[PACKAGES[agent.name]]), (
        context, evidence(session, run, server))
    # The after-hook reported the run, paired with its decision.
    executions = agent_events(server, "--kind", "execution")
    assert len(executions) == 1, evidence(session, run, server)
    execution = executions[0]
    assert execution["decision_id"] == allowed[0]["decision_id"], evidence(session, run, server)
    assert execution["actor_id"] == agent.harness, evidence(session, run, server)
    assert execution["result_bytes"] > 0, evidence(session, run, server)
    # The run's duration: the agent's word where it gives one, or else timed by the hooks
    # themselves, from the before-hook's answer to the after-hook (Codex, Gemini CLI, Copilot CLI).
    duration = execution["duration_us"]
    assert isinstance(duration, int) and duration > 0, evidence(session, run, server)
    assert not agent_events(server, "--kind", "violation"), evidence(session, run, server)


def git(*args: str, cwd, env) -> str:
    return subprocess.run(["git", *args], cwd=cwd, env=env, check=True, capture_output=True, text=True).stdout


def test_a_command_that_needs_approval_is_held_until_a_person_approves_it(agent, make_session, server):
    session = make_session("git push")
    ws, env = session.ws, session.env
    # The project is a clone with a remote on this disk, and a commit it has not pushed.
    remote = ws.root / "remote.git"
    git("init", "-q", "--bare", "-b", "main", str(remote), cwd=ws.root, env=env)
    git("init", "-q", "-b", "main", cwd=ws.project, env=env)
    git("config", "user.email", "agent@example.com", cwd=ws.project, env=env)
    git("config", "user.name", "Agent", cwd=ws.project, env=env)
    git("add", "README.md", cwd=ws.project, env=env)
    git("commit", "-q", "-m", "first", cwd=ws.project, env=env)
    git("remote", "add", "origin", str(remote), cwd=ws.project, env=env)
    git("push", "-q", "-u", "origin", "main", cwd=ws.project, env=env)
    (ws.project / "CHANGES.md").write_text("A change to push.\n")
    git("add", "CHANGES.md", cwd=ws.project, env=env)
    git("commit", "-q", "-m", "second", cwd=ws.project, env=env)
    head = git("rev-parse", "HEAD", cwd=ws.project, env=env).strip()

    def remote_main():
        return git("--git-dir", str(remote), "rev-parse", "main", cwd=ws.root, env=env).strip()

    hooked(session, server)

    started = session.start(PROMPT)
    process = started.process
    # The hook holds the call, the agent waiting; a person sees it pending and approves it.
    approved, deadline = None, time.monotonic() + RUN_TIMEOUT
    while approved is None and process.poll() is None and time.monotonic() < deadline:
        pending = server.pending(agent.harness)
        if pending:
            approved = pending[0]
            while_held = remote_main()
            toolgate("approvals", "approve", approved, "--as", "alice", "--server", server.url)
        else:
            time.sleep(0.5)
    run = session.finish(started)
    assert approved is not None, "no approval was ever pending:\n" + evidence(session, run, server)
    assert run.returncode is not None, "the agent did not finish:\n" + evidence(session, run, server)

    assert while_held != head, "the push ran before it was approved:\n" + evidence(session, run, server)
    assert remote_main() == head, "the approved push did not run:\n" + evidence(session, run, server)
    decisions = agent_events(server, "--kind", "decision")
    assert [(d["decision_id"], d["actor_id"], d["outcome"]) for d in decisions] == [
        (approved, agent.harness, "require_approval")
    ], evidence(session, run, server)
    approvals = agent_events(server, "--kind", "approval_approved")
    assert [(a["decision_id"], a["actor_id"]) for a in approvals] == [(approved, "alice")], evidence(
        session, run, server
    )
    executions = agent_events(server, "--kind", "execution")
    assert [(e["decision_id"], e["actor_id"]) for e in executions] == [(approved, agent.harness)], evidence(
        session, run, server
    )
    assert not agent_events(server, "--kind", "violation"), evidence(session, run, server)


def test_a_call_is_blocked_when_the_sidecar_is_not_running(agent, make_session):
    session = make_session("touch {project}/marker")
    # Nothing listens there.
    session.install(f"http://127.0.0.1:{free_port()}")
    run = session.run(PROMPT)
    assert run.returncode is not None, "the agent did not finish:\n" + evidence(session, run)
    asked_for_the_call(session, run)

    assert not (session.ws.project / "marker").exists(), "the call ran without the sidecar:\n" + evidence(
        session, run
    )
    # The model is told that toolgate blocked it, and why.
    assert told_the_model(session, "toolgate blocked this call"), "the model was not told why:\n" + evidence(
        session, run
    )
