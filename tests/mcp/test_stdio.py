"""`toolgate mcp -- COMMAND`: the gateway over stdio, with the real server as its child."""

import asyncio
import json
import os
import subprocess
import sys
import time

from conftest import (
    PERMIT_ALL,
    SERVERS,
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


def decisions_and_executions(gateway):
    events = gateway.events()
    decisions = {e["decision_id"]: e for e in events if e["kind"] == "decision"}
    executions = [e for e in events if e["kind"] == "execution"]
    return decisions, executions


def test_an_allowed_call_returns_the_servers_result_and_everything_else_passes_through(gateway):
    params = gateway.params("everything", everything(), policy=PERMIT_ALL)

    async def session():
        async with connected(params) as s:
            init = s.initialized
            await s.send_ping()
            tools = await s.list_tools()
            resources = await s.list_resources()
            prompts = await s.list_prompts()
            result = await s.call_tool("echo", {"message": "hush-4711"})
            return init, tools, resources, prompts, result

    init, tools, resources, prompts, result = run(session())
    assert init.capabilities.tools is not None and init.capabilities.resources is not None
    assert init.server_info.name == "mcp-servers/everything"
    assert "echo" in {t.name for t in tools.tools}
    assert resources.resources and prompts.prompts
    assert not result.is_error and text(result) == "Echo: hush-4711"

    decisions, executions = decisions_and_executions(gateway)
    [decision] = decisions.values()
    assert decision["tool"] == "mcp__everything__echo"
    assert decision["outcome"] == "allow"
    assert (decision["resource_type"], decision["resource_id"]) == ("mcp", "everything")
    assert decision["session_id"].startswith("mcp-") and decision["actor_id"] == "mcp-client"
    [execution] = executions
    assert execution["decision_id"] == decision["decision_id"]
    assert execution["status"] == "ok" and execution["result_bytes"] > 0
    assert execution["args_hash"] == decision["args_hash"]
    assert "hush-4711" not in json.dumps(gateway.events()), "arguments are stored by hash only"
    gateway.verify()


FS_CONFIG = """
[mcp]
allow_write = true

[tools.mcp__fs__write_file]
safety = "write"
action = "fs.write"
resource_type = "file"
resource_from = "/path"
"""

NO_SECRETS = PERMIT_ALL + """
@id("test.no_secrets")
@reason("no writes to secrets: {resource}")
forbid (principal, action == Action::"fs.write", resource)
when { context.resource.id like "*secret*" };
"""


def test_a_denied_call_never_reaches_the_server(gateway, tmp_path):
    root = tmp_path / "files"
    root.mkdir()
    params = gateway.params("fs", filesystem(root), config=FS_CONFIG, policy=NO_SECRETS)

    async def session():
        async with connected(params) as s:
            denied = await s.call_tool("write_file", {"path": str(root / "secret.txt"), "content": "x"})
            allowed = await s.call_tool("write_file", {"path": str(root / "plain.txt"), "content": "y"})
            return denied, allowed

    denied, allowed = run(session())
    assert denied.is_error
    assert text(denied) == f"toolgate denied this call: no writes to secrets: {root / 'secret.txt'}"
    assert denied.meta["toolgate/outcome"] == "deny"
    assert denied.meta["toolgate/policies"] == ["test.no_secrets"]
    assert not (root / "secret.txt").exists(), "the server never saw the denied call"
    assert not allowed.is_error and (root / "plain.txt").read_text() == "y"

    decisions, executions = decisions_and_executions(gateway)
    outcomes = {d["resource_id"]: (d["outcome"], d["action"], d["resource_type"]) for d in decisions.values()}
    assert outcomes == {
        str(root / "secret.txt"): ("deny", "fs.write", "file"),
        str(root / "plain.txt"): ("allow", "fs.write", "file"),
    }
    [execution] = executions
    assert decisions[execution["decision_id"]]["outcome"] == "allow"
    gateway.verify()


SUMS_NEED_APPROVAL = PERMIT_ALL + """
@id("test.sums_need_a_human")
@reason("sums need a human")
@outcome("require_approval")
forbid (principal, action, resource)
when { context.tool.name == "mcp__everything__get-sum" };
"""


def test_a_call_that_needs_approval_is_held_until_approved_then_relayed(gateway):
    params = gateway.params("everything", everything(), policy=SUMS_NEED_APPROVAL)

    def verdict(*args):
        requested = wait_for(lambda: gateway.events("--kind", "approval_requested"))
        decision_id = requested[-1]["decision_id"]
        toolgate("approvals", *args[:1], "--server", gateway.socket, "--as", "alice", *args[1:], decision_id)
        return decision_id

    async def session():
        async with connected(params) as s:
            call = asyncio.create_task(s.call_tool("get-sum", {"a": 1, "b": 2}))
            await asyncio.sleep(0.2)
            assert not call.done(), "held while it waits for a verdict"
            approved = await asyncio.to_thread(verdict, "approve")
            result = await call
            # A second one, rejected.
            call = asyncio.create_task(s.call_tool("get-sum", {"a": 2, "b": 2}))
            await asyncio.sleep(0.2)
            rejected_id = await asyncio.to_thread(
                lambda: wait_for(lambda: len(gateway.events("--kind", "approval_requested")) == 2)
                and verdict("reject", "--comment", "not today")
            )
            return approved, result, rejected_id, await call

    approved, result, rejected_id, rejected = run(session())
    assert not result.is_error and "3" in text(result)
    assert rejected.is_error
    assert text(rejected) == "toolgate: this call needed approval (sums need a human): rejected by alice: not today"

    events = gateway.events()
    kinds = [(e["kind"], e["decision_id"]) for e in events if e["decision_id"] in (approved, rejected_id)]
    assert kinds == [
        ("decision", approved),
        ("approval_requested", approved),
        ("approval_approved", approved),
        ("execution", approved),
        ("decision", rejected_id),
        ("approval_requested", rejected_id),
        ("approval_rejected", rejected_id),
    ]
    gateway.verify()


def test_a_rewrite_is_relayed_with_the_rewritten_arguments(gateway):
    policy = PERMIT_ALL + """
@id("test.quiet_echo")
@reason("echo is rewritten")
@outcome("rewrite")
@rewrite("{\\"message\\": \\"rewritten\\"}")
forbid (principal, action, resource)
when { context.tool.name == "mcp__everything__echo" };
"""
    params = gateway.params("everything", everything(), policy=policy)

    async def session():
        async with connected(params) as s:
            return await s.call_tool("echo", {"message": "original"})

    result = run(session())
    assert text(result) == "Echo: rewritten"
    decisions, executions = decisions_and_executions(gateway)
    [decision] = decisions.values()
    assert decision["outcome"] == "rewrite"
    [execution] = executions
    assert execution["args_hash"] == decision["rewritten_args_hash"]
    assert not gateway.events("--kind", "violation")


def test_a_result_over_the_cap_is_cut_in_characters(gateway):
    params = gateway.params("everything", everything(), config="[defaults]\nmax_output_chars = 10\n", policy=PERMIT_ALL)

    async def session():
        async with connected(params) as s:
            return await s.call_tool("echo", {"message": "é" * 20})

    result = run(session())
    assert text(result) == "Echo: éééé"
    assert result.meta["toolgate/truncated"] is True
    assert result.meta["toolgate/originalChars"] == 26
    _, [execution] = decisions_and_executions(gateway)
    assert execution["truncated"] == 1


def test_a_hung_call_is_cut_by_its_timeout_and_cancelled_upstream(gateway, tmp_path):
    markers = tmp_path / "markers"
    config = "[defaults]\nbash_timeout_ms = 500\n"  # unregistered tools get the strictest timeout
    params = gateway.params("odd", misbehaving(markers), config=config, policy=PERMIT_ALL)

    async def session():
        async with connected(params) as s:
            hung = await s.call_tool("slow", {"seconds": 30})
            await asyncio.to_thread(wait_for, lambda: (markers / "cancelled").exists())
            after = await s.call_tool("write_note", {"name": "after", "text": "ok"})
            return hung, after

    started = time.monotonic()
    hung, after = run(session())
    assert time.monotonic() - started < 20
    assert hung.is_error
    assert text(hung) == "toolgate: the tool did not answer within its 500 ms timeout; the call was cancelled"
    assert (markers / "cancelled").read_text() == "cancelled", "the server was told to stop"
    assert not after.is_error and (markers / "after").exists()
    decisions, executions = decisions_and_executions(gateway)
    statuses = {decisions[e["decision_id"]]["tool"]: (e["status"], e["error"]) for e in executions}
    assert statuses["mcp__odd__slow"] == ("timeout", "no answer within 500 ms; cancelled")
    assert statuses["mcp__odd__write_note"] == ("ok", None)
    gateway.verify()


def test_a_server_that_crashes_mid_call_is_recorded_and_the_client_told(gateway, tmp_path):
    markers = tmp_path / "markers"
    params = gateway.params("odd", misbehaving(markers), policy=PERMIT_ALL)

    async def session():
        async with connected(params) as s:
            return await s.call_tool("crash", {})

    result = run(session())
    assert result.is_error
    assert text(result).startswith("toolgate: the MCP server exited (exit status: 3) before answering")
    _, [execution] = decisions_and_executions(gateway)
    assert execution["status"] == "error" and "exited (exit status: 3)" in execution["error"]
    gateway.verify()


def test_lines_that_are_not_messages_are_dropped_and_the_relay_goes_on(gateway, tmp_path):
    markers = tmp_path / "markers"
    params = gateway.params("odd", misbehaving(markers), policy=PERMIT_ALL)

    async def session():
        async with connected(params) as s:
            garbled = await s.call_tool("garble", {})
            after = await s.call_tool("write_note", {"name": "n", "text": "t"})
            return garbled, after

    garbled, after = run(session())
    assert text(garbled) == "still here" and text(after) == "wrote n"


def test_the_server_is_stopped_when_the_client_leaves(gateway, tmp_path):
    markers = tmp_path / "markers"
    params = gateway.params("odd", misbehaving(markers), policy=PERMIT_ALL)

    async def session():
        async with connected(params) as s:
            await s.list_tools()

    run(session())
    pid = int((markers / "pid").read_text())

    def gone():
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        return False

    wait_for(gone)


def raw_gateway(gateway, tmp_path):
    markers = tmp_path / "markers"
    params = gateway.params("odd", misbehaving(markers), policy=PERMIT_ALL)
    return subprocess.Popen(
        [params.command, *params.args],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        cwd=params.cwd,
    )


def handshake(proc):
    proc.stdin.write(json.dumps({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}}}) + "\n")
    proc.stdin.write(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}) + "\n")
    proc.stdin.flush()
    assert json.loads(proc.stdout.readline())["id"] == 0


def test_the_gateway_exits_when_the_server_does_with_the_client_still_there(gateway, tmp_path):
    proc = raw_gateway(gateway, tmp_path)
    handshake(proc)
    proc.stdin.write(json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                                 "params": {"name": "crash", "arguments": {}}}) + "\n")
    proc.stdin.flush()
    answer = json.loads(proc.stdout.readline())
    assert answer["result"]["isError"] is True
    # stdin stays open: the gateway ends because its server did, and says so in its status.
    assert proc.wait(timeout=15) == 2
    proc.stdin.close()


def test_a_message_read_two_ways_never_reaches_the_server(gateway, tmp_path):
    proc = raw_gateway(gateway, tmp_path)
    handshake(proc)

    def ask(message):
        proc.stdin.write(message + "\n")
        proc.stdin.flush()
        return json.loads(proc.stdout.readline())

    try:
        note = lambda name: json.dumps({"name": "write_note", "arguments": {"name": name, "text": "x"}})
        # A member in another case: a decoder that ignores case would see a call.
        sneaky = ask('{"jsonrpc": "2.0", "ID": 5, "method": "tools/call", "params": %s}' % note("case"))
        assert sneaky["error"]["code"] == -32600
        # A call without an id is a call no one answers: refused too.
        nameless = ask('{"jsonrpc": "2.0", "method": "tools/call", "params": %s}' % note("no-id"))
        assert nameless["error"]["code"] == -32600
        # A duplicate key: the server gets the message as the gateway read it, a ping.
        duplicate = ask('{"jsonrpc": "2.0", "id": 6, "method": "tools/call", "params": %s, "method": "ping"}' % note("dup"))
        assert duplicate == {"jsonrpc": "2.0", "id": 6, "result": {}}
        # An id still in use by a call in flight.
        proc.stdin.write(json.dumps({"jsonrpc": "2.0", "id": 7, "method": "tools/call",
                                     "params": {"name": "slow", "arguments": {"seconds": 3}}}) + "\n")
        in_use = ask('{"jsonrpc": "2.0", "id": 7, "method": "ping"}')
        assert in_use["id"] == 7 and "in use" in in_use["error"]["message"]
        assert json.loads(proc.stdout.readline())["result"]["content"][0]["text"] == "done"
    finally:
        proc.stdin.close()
        proc.wait(timeout=30)
    markers = tmp_path / "markers"
    assert not any((markers / n).exists() for n in ("case", "no-id", "dup"))


def test_bad_input_from_the_client_gets_a_clear_error_and_a_nameless_call_is_recorded(gateway, tmp_path):
    proc = raw_gateway(gateway, tmp_path)

    def ask(line):
        proc.stdin.write(line + "\n")
        proc.stdin.flush()
        return json.loads(proc.stdout.readline())

    try:
        parse = ask("this is not json")
        assert parse["id"] is None and parse["error"]["code"] == -32700
        batch = ask('[{"jsonrpc": "2.0", "id": 1, "method": "ping"}]')
        assert batch["error"]["code"] == -32600 and "batch" in batch["error"]["message"]
        nameless = ask('{"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"arguments": {}}}')
        assert nameless["id"] == 2 and nameless["result"]["isError"] is True
        assert nameless["result"]["content"][0]["text"].startswith("toolgate refused this call: tool")
        not_an_object = ask('{"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "slow", "arguments": [1]}}')
        assert not_an_object["result"]["isError"] is True
        assert "args_json" in not_an_object["result"]["content"][0]["text"]
    finally:
        proc.stdin.close()
        assert proc.wait(timeout=30) == 0
    invalid = gateway.events("--kind", "invalid_request")
    assert len(invalid) == 2
    gateway.verify()


def test_gateways_share_a_running_sidecars_trail(gateway, tmp_path):
    db = tmp_path / "shared.db"
    socket = tmp_path / "shared.sock"
    (tmp_path / "shared.cedar").write_text(PERMIT_ALL)
    sidecar = subprocess.Popen(
        [TOOLGATE, "serve", "--db", str(db), "--listen", f"unix:{socket}", "--policy", str(tmp_path / "shared.cedar")],
        stderr=subprocess.DEVNULL,
    )
    try:
        wait_for(socket.exists)
        one = gateway.params("everything", everything(), extra=["--server", f"unix:{socket}"])
        two = gateway.params("everything", everything(), extra=["--server", f"unix:{socket}", "--session", "second"])

        async def both():
            async def call(params, message):
                async with connected(params) as s:
                    # As clients do: a call to a pinned tool the gateway has not seen listed
                    # waits for an approver.
                    await s.list_tools()
                    return await s.call_tool("echo", {"message": message})

            return await asyncio.gather(call(one, "one"), call(two, "two"))

        results = run(both())
        assert [text(r) for r in results] == ["Echo: one", "Echo: two"]
    finally:
        sidecar.terminate()
        sidecar.wait(timeout=30)
    events = gateway.events(db=db)
    sessions = {e["session_id"] for e in events if e["kind"] == "execution"}
    assert len(sessions) == 2 and "second" in sessions
    assert not gateway.db.exists(), "no embedded trail when a sidecar is given"
    gateway.verify(db=db)


def test_tools_the_policy_never_allows_can_be_hidden_from_the_list(gateway, tmp_path):
    root = tmp_path / "files"
    root.mkdir()
    config = """
[mcp]
hide_never_allowed = true

[tools.mcp__fs__read_text_file]
safety = "read_only"
action = "fs.read"

[tools.mcp__fs__write_file]
safety = "write"
action = "fs.write"
"""
    # The default policy: unregistered tools are unknown and denied; writes need allow_write,
    # which [mcp] does not grant, so write_file is never allowed either.
    params = gateway.params("fs", filesystem(root), config=config)

    async def session():
        async with connected(params) as s:
            listed = await s.list_tools()
            hidden = await s.call_tool("list_directory", {"path": str(root)})
            return listed, hidden

    listed, hidden = run(session())
    assert [t.name for t in listed.tools] == ["read_text_file"]
    # Hiding spares the model a tool; the decision at the call is what stops it.
    assert hidden.is_error and text(hidden) == "toolgate denied this call: unknown tool: mcp__fs__list_directory"


def test_arguments_that_break_a_listed_input_schema_are_denied_before_the_server_sees_them(gateway):
    params = gateway.params("everything", everything(), policy=PERMIT_ALL)

    async def session():
        async with connected(params) as s:
            await s.list_tools()
            wrong = await s.call_tool("echo", {"message": 5})
            right = await s.call_tool("echo", {"message": "five"})
            return wrong, right

    wrong, right = run(session())
    assert wrong.is_error
    assert text(wrong) == (
        "toolgate denied this call: the arguments do not match the input_schema of "
        '`mcp__everything__echo`: args.message: the value is not of type "string"'
    )
    assert text(right) == "Echo: five"
    decisions, executions = decisions_and_executions(gateway)
    assert [d["outcome"] for d in decisions.values()] == ["deny", "allow"]
    assert [decisions[e["decision_id"]]["outcome"] for e in executions] == ["allow"], "the server never saw it"


def test_a_tool_whose_definition_changed_is_held_until_an_approver_accepts_it(gateway):
    shifty = [sys.executable, str(SERVERS / "shifty.py")]
    params = gateway.params("shifty", shifty, config="[mcp]\napproval_wait_seconds = 30\n", policy=PERMIT_ALL)

    def verdict(*args):
        requested = wait_for(lambda: gateway.events("--kind", "approval_requested"))
        decision_id = requested[-1]["decision_id"]
        toolgate("approvals", args[0], "--server", gateway.socket, "--as", "alice", *args[1:], decision_id)
        return decision_id

    async def session():
        async with connected(params) as s:
            await s.list_tools()
            before = await s.call_tool("read_page", {"url": "https://example.com"})
            await s.call_tool("upgrade", {})
            await s.list_tools()
            # Refused while no approver accepted the new description, then accepted.
            call = asyncio.create_task(s.call_tool("read_page", {"url": "https://example.com"}))
            await asyncio.to_thread(verdict, "reject", "--comment", "that description asks for a key")
            rejected = await call
            call = asyncio.create_task(s.call_tool("read_page", {"url": "https://example.org"}))
            await asyncio.sleep(0.2)
            assert not call.done(), "held again: the change is still not in force"
            await asyncio.to_thread(
                lambda: wait_for(lambda: len(gateway.events("--kind", "approval_requested")) == 2)
                and verdict("approve")
            )
            accepted = await call
            after = await s.call_tool("read_page", {"url": "https://example.net"})
            return before, rejected, accepted, after

    before, rejected, accepted, after = run(session())
    assert not before.is_error
    assert rejected.is_error
    assert text(rejected) == (
        "toolgate: this call needed approval (the definition of `mcp__shifty__read_page` changed "
        "since it was pinned (description): an approver must accept it): rejected by alice: "
        "that description asks for a key"
    )
    assert text(accepted) == "the page at https://example.org"
    assert text(after) == "the page at https://example.net", "accepted once, in force after"

    defined = [e for e in gateway.events("--kind", "tool_defined") if e["tool"] == "mcp__shifty__read_page"]
    assert [(e["status"], e["actor_id"]) for e in defined] == [
        ("pinned", "mcp-client"),
        ("changed", "mcp-client"),
        ("pinned", "alice"),
    ]
    assert defined[1]["args_hash"] == defined[2]["args_hash"] != defined[0]["args_hash"]
    gateway.verify()
