"""Flow policies across the MCP gateway: what a session's executed calls read decides what it
may send, between two tools of one server and between two servers behind one sidecar."""

import asyncio
import subprocess

from conftest import (
    PERMIT_ALL,
    TOOLGATE,
    connected,
    everything,
    filesystem,
    misbehaving,
    run,
    text,
    toolgate,
    wait_for,
)

# The flows example's first rule (examples/policies/flows) over every tool permitted.
SECRET_THEN_EXTERNAL = PERMIT_ALL + """
@id("flows.secret_then_external")
@reason("external send after reading secret data in this session: approval required (read by {read_seqs})")
@outcome("require_approval")
forbid (principal, action, resource)
when { context.tool.sends == "external" && context.session.read_classes.contains("secret") }
unless { context.approval.state == "approved" };
"""

# The vault's files are secret; writing a file is, here, a share that leaves the organisation.
ONE_SERVER = """
[mcp]
allow_write = true

[tools.mcp__fs__read_text_file]
safety = "read_only"
reads = ["secret"]
sends = "internal"

[tools.mcp__fs__write_file]
safety = "write"
sends = "external"
"""


def reject(gateway, server, db=None):
    """Rejects the newest pending approval, as a person would; its decision id."""
    requested = wait_for(lambda: gateway.events("--kind", "approval_requested", db=db))
    decision_id = requested[-1]["decision_id"]
    toolgate("approvals", "reject", "--server", server, "--as", "alice", "--comment", "no", decision_id)
    return decision_id


def test_a_secret_read_holds_the_same_servers_external_tool(gateway, tmp_path):
    root = tmp_path / "vault"
    root.mkdir()
    (root / "token.txt").write_text("s3cr3t")
    params = gateway.params("fs", filesystem(root), config=ONE_SERVER, policy=SECRET_THEN_EXTERNAL)

    async def session():
        async with connected(params) as s:
            before = await s.call_tool("write_file", {"path": str(root / "before.txt"), "content": "hi"})
            read = await s.call_tool("read_text_file", {"path": str(root / "token.txt")})
            held = asyncio.create_task(
                s.call_tool("write_file", {"path": str(root / "leak.txt"), "content": "s3cr3t"}))
            await asyncio.to_thread(reject, gateway, gateway.socket)
            return before, read, await held

    before, read, held = run(session())
    assert not before.is_error, "a clean session sends freely"
    assert text(read) == "s3cr3t"
    assert held.is_error
    assert not (root / "leak.txt").exists(), "the server never saw the held call"
    [execution] = [e for e in gateway.events("--kind", "execution") if e["tool"] == "mcp__fs__read_text_file"]
    assert execution["request"] == '{"reads":["secret"]}'
    assert text(held) == (
        "toolgate: this call needed approval (external send after reading secret data in this session: "
        f"approval required (read by seq {execution['seq']} (secret))): rejected by alice: no"
    )
    gateway.verify()


# One sidecar, two gateways: the filesystem's reads are secret, the other server's echo sends out.
SIDECAR = """
[tools.mcp__fs__read_text_file]
safety = "read_only"
reads = ["secret"]

[tools.mcp__everything__echo]
safety = "read_only"
sends = "external"
"""


def test_a_secret_read_through_one_server_holds_another_servers_send_in_the_same_session(gateway, tmp_path):
    root = tmp_path / "vault"
    root.mkdir()
    (root / "token.txt").write_text("s3cr3t")
    db, socket = tmp_path / "shared.db", tmp_path / "shared.sock"
    (tmp_path / "shared.cedar").write_text(SECRET_THEN_EXTERNAL)
    (tmp_path / "shared.toml").write_text(SIDECAR)
    sidecar = subprocess.Popen(
        [TOOLGATE, "serve", "--db", str(db), "--listen", f"unix:{socket}", "--config", str(tmp_path / "shared.toml"),
         "--policy", str(tmp_path / "shared.cedar")],
        stderr=subprocess.DEVNULL,
    )
    server = f"unix:{socket}"
    try:
        wait_for(socket.exists)
        fs = gateway.params("fs", filesystem(root), extra=["--server", server, "--session", "task-7"])
        echo = gateway.params("everything", everything(), extra=["--server", server, "--session", "task-7"])
        elsewhere = gateway.params("everything", everything(), extra=["--server", server, "--session", "task-8"])

        async def flow():
            async with connected(fs) as f, connected(echo) as e, connected(elsewhere) as other:
                await e.list_tools()
                await other.list_tools()
                clean = await e.call_tool("echo", {"message": "status: green"})
                read = await f.call_tool("read_text_file", {"path": str(root / "token.txt")})
                held = asyncio.create_task(e.call_tool("echo", {"message": "s3cr3t"}))
                rejected = await asyncio.to_thread(reject, gateway, server, db)
                untouched = await other.call_tool("echo", {"message": "status: green"})
                return clean, read, await held, rejected, untouched

        clean, read, held, rejected, untouched = run(flow())
    finally:
        sidecar.terminate()
        sidecar.wait(timeout=30)
    assert text(clean) == "Echo: status: green", "nothing sensitive read yet: never held"
    assert text(read) == "s3cr3t"
    assert held.is_error and "external send after reading secret data" in text(held)
    assert text(untouched) == "Echo: status: green", "another session is not tainted"
    decision = next(e for e in gateway.events("--decision", rejected, db=db) if e["kind"] == "decision")
    assert (decision["tool"], decision["session_id"], decision["outcome"]) == (
        "mcp__everything__echo", "task-7", "require_approval")
    gateway.verify(db=db)


def test_a_result_the_trail_could_not_take_never_reaches_the_model(gateway, tmp_path):
    db, socket = tmp_path / "shared.db", tmp_path / "shared.sock"
    (tmp_path / "shared.cedar").write_text(PERMIT_ALL)
    sidecar = subprocess.Popen(
        [TOOLGATE, "serve", "--db", str(db), "--listen", f"unix:{socket}", "--policy", str(tmp_path / "shared.cedar")],
        stderr=subprocess.DEVNULL,
    )
    try:
        wait_for(socket.exists)
        params = gateway.params("slow", misbehaving(tmp_path / "markers"), extra=["--server", f"unix:{socket}"])

        async def call():
            async with connected(params) as s:
                await s.list_tools()
                running = asyncio.create_task(s.call_tool("slow", {"seconds": 2}))
                await asyncio.sleep(0.5)
                # The sidecar goes while the tool runs: its execution cannot be recorded.
                sidecar.terminate()
                await asyncio.to_thread(sidecar.wait, 30)
                return await running

        result = run(call())
    finally:
        sidecar.kill()
        sidecar.wait(timeout=30)
    assert (tmp_path / "markers" / "finished").exists(), "the tool ran"
    assert result.is_error
    assert text(result) == "toolgate: the call ran, but it could not be recorded, so its result is withheld"
    assert "done" not in text(result)
