"""`toolgate mcp --listen ADDR --upstream URL`: the gateway over Streamable HTTP, in front of a
remote server (the reference server, and one built with the Python SDK)."""

import asyncio
import concurrent.futures
import os
import socket
import subprocess
import sys
import time
from contextlib import asynccontextmanager, contextmanager

import httpx2
import pytest
from mcp import Client, ClientSession, types
from mcp.client.streamable_http import streamable_http_client

from conftest import NODE_BIN, PERMIT_ALL, ROOT, SERVERS, TOOLGATE, run, text, toolgate, wait_for

# The embedded default policy, as the sidecar ships it.
DEFAULT_POLICY = (ROOT / "src/policy/default.cedar").read_text()


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for_port(port, seconds=20.0):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return
        except OSError:
            time.sleep(0.05)
    raise AssertionError(f"nothing listens on {port}")


@contextmanager
def process(args, env=None):
    proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=env)
    try:
        yield proc
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            raise


@pytest.fixture
def everything_http():
    port = free_port()
    env = {**os.environ, "PORT": str(port)}
    with process([str(NODE_BIN / "mcp-server-everything"), "streamableHttp"], env=env):
        wait_for_port(port)
        yield f"http://127.0.0.1:{port}/mcp"


@pytest.fixture
def misbehaving_http(tmp_path):
    port = free_port()
    markers = tmp_path / "markers"
    with process([sys.executable, str(SERVERS / "misbehaving.py"), str(markers), str(port)]):
        wait_for_port(port)
        yield f"http://127.0.0.1:{port}/mcp", markers


@contextmanager
def http_gateway(gateway, name, upstream, config="", policy=PERMIT_ALL, listen="127.0.0.1:0"):
    (gateway.dir / "toolgate.toml").write_text(config)
    (gateway.dir / "policy.cedar").write_text(policy)
    args = [TOOLGATE, "mcp", "--name", name, "--config", str(gateway.dir / "toolgate.toml"),
            "--policy", str(gateway.dir / "policy.cedar"), "--db", str(gateway.db),
            "--listen", listen, "--upstream", upstream]
    with process(args) as proc:
        url = proc.stdout.readline().strip()
        assert url.startswith("http://"), f"the gateway printed {url!r}"
        yield url.replace("0.0.0.0", "127.0.0.1")


@asynccontextmanager
async def connected(url, headers=None):
    async with httpx2.AsyncClient(headers=headers or {}, timeout=30) as http:
        async with streamable_http_client(url, http_client=http) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                yield session


def test_calls_over_http_are_decided_relayed_and_recorded_under_the_mcp_session(gateway, everything_http):
    policy = PERMIT_ALL + """
@id("test.no_sums")
@reason("no sums over HTTP")
forbid (principal, action, resource) when { context.tool.name == "mcp__everything__get-sum" };
"""
    with http_gateway(gateway, "everything", everything_http, policy=policy) as url:

        async def session():
            async with connected(url) as s:
                tools = await s.list_tools()
                resources = await s.list_resources()
                echo = await s.call_tool("echo", {"message": "over http"})
                denied = await s.call_tool("get-sum", {"a": 1, "b": 2})
                return tools, resources, echo, denied

        tools, resources, echo, denied = run(session())
    assert "echo" in {t.name for t in tools.tools} and resources.resources
    assert text(echo) == "Echo: over http"
    assert denied.is_error and text(denied) == "toolgate denied this call: no sums over HTTP"
    events = gateway.events()
    decisions = [e for e in events if e["kind"] == "decision"]
    assert [(d["tool"], d["outcome"]) for d in decisions] == [
        ("mcp__everything__echo", "allow"),
        ("mcp__everything__get-sum", "deny"),
    ]
    [execution] = [e for e in events if e["kind"] == "execution"]
    assert execution["decision_id"] == decisions[0]["decision_id"] and execution["status"] == "ok"
    # The trail's session is the MCP session the server gave (its Mcp-Session-Id).
    assert len({d["session_id"] for d in decisions}) == 1
    assert decisions[0]["session_id"].startswith("mcp-") and len(decisions[0]["session_id"]) > 20
    gateway.verify()


def test_a_hung_call_over_http_is_cut_by_its_timeout_and_cancelled_upstream(gateway, misbehaving_http):
    upstream, markers = misbehaving_http
    config = "[defaults]\nbash_timeout_ms = 500\n"
    with http_gateway(gateway, "odd", upstream, config=config) as url:

        async def session():
            async with connected(url) as s:
                hung = await s.call_tool("slow", {"seconds": 30})
                after = await s.call_tool("write_note", {"name": "after", "text": "ok"})
                return hung, after

        hung, after = run(session())
        deadline = time.monotonic() + 10
        while not (markers / "cancelled").exists() and time.monotonic() < deadline:
            time.sleep(0.05)
    assert hung.is_error and "did not answer within its 500 ms timeout" in text(hung)
    assert (markers / "cancelled").exists(), "the server was told to stop"
    assert text(after) == "wrote after"
    statuses = [e["status"] for e in gateway.events("--kind", "execution")]
    assert statuses == ["timeout", "ok"]
    gateway.verify()


def test_a_client_of_the_stateless_revision_goes_through_too(gateway, misbehaving_http):
    upstream, markers = misbehaving_http
    with http_gateway(gateway, "odd", upstream) as url:

        async def session():
            async with Client(url, mode="2026-07-28") as client:
                return await client.call_tool("write_note", {"name": "modern", "text": "yes"})

        result = run(session())
    assert not result.is_error and (markers / "modern").read_text() == "yes"
    [decision] = gateway.events("--kind", "decision")
    assert decision["tool"] == "mcp__odd__write_note" and decision["outcome"] == "allow"


HOLD_NOTES = PERMIT_ALL + """
@id("test.notes_wait")
@reason("notes wait for a person")
@outcome("require_approval")
forbid (principal, action, resource) when { context.tool.name == "mcp__odd__write_note" }
unless { context.approval.state == "approved" };
"""


def judge(gateway, verdict, after=None):
    """Gives `verdict` on the newest pending approval (after `after` has happened); its id."""
    if after is not None:
        wait_for(after)
    requested = wait_for(lambda: gateway.events("--kind", "approval_requested"))
    decision_id = requested[-1]["decision_id"]
    toolgate("approvals", verdict, "--server", gateway.socket, "--as", "bob", decision_id)
    return decision_id


def test_a_held_call_is_surfaced_to_a_stateless_client_and_runs_once_approved(gateway, misbehaving_http):
    upstream, markers = misbehaving_http
    asked = []

    async def elicitation(context, params):
        asked.append(params.message)
        return types.ElicitResult(action="accept", content={})

    with http_gateway(gateway, "odd", upstream, policy=HOLD_NOTES) as url:

        async def session():
            async with Client(url, mode="2026-07-28", elicitation_callback=elicitation) as client:
                approve = asyncio.to_thread(judge, gateway, "approve", lambda: asked)
                result, _ = await asyncio.gather(
                    client.call_tool("write_note", {"name": "held", "text": "ok"}), approve)
                return result

        result = run(session())
    assert not result.is_error and (markers / "held").read_text() == "ok"
    # The person was asked through the client's elicitation, told why and which decision.
    [decision] = gateway.events("--kind", "decision")
    assert len(asked) == 1 and "notes wait for a person" in asked[0], asked
    assert decision["decision_id"] in asked[0] and decision["outcome"] == "require_approval"
    call = [e["kind"] for e in gateway.events() if e.get("decision_id") == decision["decision_id"]]
    assert call == ["decision", "approval_requested", "approval_approved", "execution"], call
    gateway.verify()


def test_a_person_who_stops_waiting_withdraws_the_held_call(gateway, misbehaving_http):
    upstream, markers = misbehaving_http

    async def elicitation(context, params):
        return types.ElicitResult(action="decline")

    with http_gateway(gateway, "odd", upstream, policy=HOLD_NOTES) as url:

        async def session():
            async with Client(url, mode="2026-07-28", elicitation_callback=elicitation) as client:
                return await client.call_tool("write_note", {"name": "never", "text": "x"})

        result = run(session())
    assert result.is_error and "withdrawn at the client" in text(result), text(result)
    assert not (markers / "never").exists()
    assert [e["kind"] for e in gateway.events("--kind", "approval_withdrawn")] == ["approval_withdrawn"]


def test_a_forged_moved_or_replayed_request_state_runs_nothing(gateway, misbehaving_http):
    upstream, markers = misbehaving_http
    modern = {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
              "io.modelcontextprotocol/clientCapabilities": {}}
    headers = {"Accept": "application/json, text/event-stream", "MCP-Protocol-Version": "2026-07-28",
               "Mcp-Method": "tools/call", "Mcp-Name": "write_note"}

    def call(arguments, **extra):
        body = {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                "params": {"name": "write_note", "arguments": arguments, "_meta": modern, **extra}}
        answer = httpx2.post(url, json=body, headers=headers, timeout=60)
        assert answer.status_code == 200, answer.text
        return answer.json()["result"]

    with http_gateway(gateway, "odd", upstream, policy=HOLD_NOTES) as url:
        first = call({"name": "mine", "text": "x"})
        assert first["resultType"] == "input_required" and "inputRequests" not in first, first
        state = first["requestState"]
        payload, tag = state.split(".")
        forged = call({"name": "mine", "text": "x"}, requestState=payload + "." + tag[::-1])
        moved = call({"name": "other", "text": "x"}, requestState=state)
        # Two retries with one state at once: one waits for the verdict, the other is told to
        # come back at once; the approved call runs once.
        with concurrent.futures.ThreadPoolExecutor(2) as pool:
            waiting = pool.submit(call, {"name": "mine", "text": "x"}, requestState=state)
            time.sleep(0.5)
            started = time.monotonic()
            second = call({"name": "mine", "text": "x"}, requestState=state)
            second_took = time.monotonic() - started
            judge(gateway, "approve")
            ran = waiting.result(timeout=30)
        again = call({"name": "mine", "text": "x"}, requestState=state)
    assert forged["isError"] and "not one this gateway issued" in forged["content"][0]["text"]
    assert forged["resultType"] == "complete", "the gateway's own answers say their type"
    assert moved["isError"] and "issued for another call" in moved["content"][0]["text"]
    assert second["resultType"] == "input_required" and second_took < 5, (second, second_took)
    assert not ran.get("isError") and (markers / "mine").read_text() == "x"
    assert again["isError"] and "ran already" in again["content"][0]["text"], again
    refused = [e["reason"] for e in gateway.events("--kind", "peer_refused")]
    assert refused and all("request state" in r for r in refused), refused
    assert not (markers / "other").exists()
    assert len(gateway.events("--kind", "execution")) == 1
    assert len(gateway.events("--kind", "decision")) == 1, "retries are not new decisions"


def test_a_header_that_does_not_mirror_the_body_is_refused(gateway, misbehaving_http):
    upstream, markers = misbehaving_http
    with http_gateway(gateway, "odd", upstream) as url:
        body = {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                "params": {"name": "write_note", "arguments": {"name": "sneaky", "text": "x"}}}
        answer = httpx2.post(url, json=body, headers={
            "Mcp-Method": "tools/call", "Mcp-Name": "something_else",
            "Accept": "application/json, text/event-stream",
        })
    assert answer.status_code == 400 and answer.json()["error"]["code"] == -32020
    assert not (markers / "sneaky").exists()
    assert not gateway.events("--kind", "decision")


TOKEN = "a-test-token-for-alice"


def test_beyond_loopback_the_endpoint_needs_a_token_and_the_token_names_the_actor(gateway, everything_http):
    refused = toolgate("mcp", "--db", str(gateway.db), "--listen", "0.0.0.0:0", "--upstream", everything_http, check=False)
    assert refused.returncode != 0 and "without auth" in refused.stderr
    digest = toolgate("hash-token", input=TOKEN).stdout.strip()
    config = f"""
[[auth.tokens]]
id = "alice-token"
sha256 = "{digest}"
roles = ["agent"]
actors = ["alice"]
"""
    with http_gateway(gateway, "everything", everything_http, config=config, listen="0.0.0.0:0") as url:
        anonymous = httpx2.post(url, json={"jsonrpc": "2.0", "id": 1, "method": "ping"})

        async def session():
            async with connected(url, headers={"Authorization": f"Bearer {TOKEN}"}) as s:
                return await s.call_tool("echo", {"message": "as alice"})

        result = run(session())
    assert anonymous.status_code == 401
    assert text(result) == "Echo: as alice"
    [decision] = gateway.events("--kind", "decision")
    assert decision["actor_id"] == "alice"


def test_tools_the_policy_never_allows_can_be_hidden_over_http_too(gateway, everything_http):
    config = """
[mcp]
hide_never_allowed = true

[tools.mcp__everything__echo]
safety = "read_only"
action = "demo.echo"
"""
    with http_gateway(gateway, "everything", everything_http, config=config, policy=DEFAULT_POLICY) as url:

        async def session():
            async with connected(url) as s:
                return await s.list_tools()

        listed = run(session())
    assert [t.name for t in listed.tools] == ["echo"]


def raw_session(url):
    """Initializes a legacy session by hand; the server's session id."""
    answer = httpx2.post(url, headers=ACCEPT, json={"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}}})
    assert answer.status_code == 200, answer.text
    session = answer.headers["mcp-session-id"]
    headers = {**ACCEPT, "Mcp-Session-Id": session, "MCP-Protocol-Version": "2025-11-25"}
    httpx2.post(url, headers=headers, json={"jsonrpc": "2.0", "method": "notifications/initialized"})
    return headers


ACCEPT = {"Accept": "application/json, text/event-stream"}


def test_a_clients_cancellation_over_http_reaches_the_server_and_the_trail(gateway, misbehaving_http):
    upstream, markers = misbehaving_http
    with http_gateway(gateway, "odd", upstream) as url:
        headers = raw_session(url)
        slow = {"jsonrpc": "2.0", "id": 9, "method": "tools/call", "params": {"name": "slow", "arguments": {"seconds": 30}}}

        async def session():
            async with httpx2.AsyncClient(timeout=30) as http:
                call = asyncio.create_task(http.post(url, headers=headers, json=slow))
                await asyncio.sleep(1.0)
                cancel = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 9}}
                accepted = await http.post(url, headers=headers, json=cancel)
                return accepted, await call

        accepted, _ = run(session())
        deadline = time.monotonic() + 10
        while not (markers / "cancelled").exists() and time.monotonic() < deadline:
            time.sleep(0.05)
    assert accepted.status_code == 202
    assert (markers / "cancelled").exists(), "the server was told to stop"
    [execution] = gateway.events("--kind", "execution")
    assert (execution["status"], execution["error"]) == ("error", "cancelled by the client")
    assert execution["session_id"] == "mcp-" + headers["Mcp-Session-Id"]


def test_the_http_front_refuses_other_origins_media_types_methods_and_made_up_sessions(gateway, misbehaving_http):
    upstream, markers = misbehaving_http
    with http_gateway(gateway, "odd", upstream) as url:
        ping = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
        assert httpx2.post(url, headers={**ACCEPT, "Origin": "https://evil.example"}, json=ping).status_code == 403
        assert httpx2.post(url, headers={**ACCEPT, "Content-Type": "text/plain"}, content=b'{}').status_code == 415
        assert httpx2.put(url, headers=ACCEPT, json=ping).status_code == 405
        headers = raw_session(url)
        note = {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                "params": {"name": "write_note", "arguments": {"name": "n", "text": "t"}}}
        made_up = {**headers, "Mcp-Session-Id": headers["Mcp-Session-Id"] + "-made-up"}
        httpx2.post(url, headers=made_up, json=note)
    [decision] = gateway.events("--kind", "decision")
    assert decision["session_id"] != "mcp-" + made_up["Mcp-Session-Id"], "only the server's sessions name one"


def test_without_auth_a_foreign_host_or_origin_is_refused_and_nothing_is_relayed(gateway, misbehaving_http):
    """DNS rebinding: a page that made `evil.example` resolve to 127.0.0.1 names its own host;
    another local site sends its own origin. Without auth neither reaches the server."""
    upstream, markers = misbehaving_http
    with http_gateway(gateway, "odd", upstream) as url:
        ping = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
        port = url.split(":")[2].split("/")[0]
        for host in ("evil.example", f"evil.example:{port}", "127.0.0.1.nip.io"):
            headers = {**ACCEPT, "Host": host}
            for answer in (httpx2.get(url, headers=headers), httpx2.delete(url, headers=headers),
                           httpx2.post(url, headers=headers, json=ping)):
                assert answer.status_code == 403, (host, answer.status_code)
                assert "loopback host name" in answer.text
        other_site = {**ACCEPT, "Origin": "http://localhost:3000"}
        assert httpx2.post(url, headers=other_site, json=ping).status_code == 403
        # The gateway's own names, from its own origin, pass (to the session check).
        own = {**ACCEPT, "Origin": f"http://127.0.0.1:{port}"}
        assert httpx2.post(url, headers=own, json=ping).status_code != 403


OTHER_TOKEN = "a-test-token-for-mallory"


def test_a_session_belongs_to_the_token_that_opened_it_and_refusals_are_recorded(gateway, everything_http):
    tokens = []
    for who, secret in (("alice", TOKEN), ("mallory", OTHER_TOKEN)):
        digest = toolgate("hash-token", input=secret).stdout.strip()
        tokens.append(f'[[auth.tokens]]\nid = "{who}-token"\nsha256 = "{digest}"\nroles = ["agent"]\nactors = ["{who}"]\n')
    with http_gateway(gateway, "everything", everything_http, config="\n".join(tokens)) as url:
        alice = {**ACCEPT, "Authorization": f"Bearer {TOKEN}"}
        opened = httpx2.post(url, headers=alice, json={"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}}})
        session = opened.headers["mcp-session-id"]
        mallory = {**ACCEPT, "Authorization": f"Bearer {OTHER_TOKEN}", "Mcp-Session-Id": session,
                   "MCP-Protocol-Version": "2025-11-25"}
        taken = httpx2.post(url, headers=mallory, json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
        ended = httpx2.delete(url, headers=mallory)
        own = httpx2.post(url, headers={**alice, "Mcp-Session-Id": session, "MCP-Protocol-Version": "2025-11-25"},
                          json={"jsonrpc": "2.0", "id": 2, "method": "ping"})
        anonymous = httpx2.post(url, headers=ACCEPT, json={"jsonrpc": "2.0", "id": 3, "method": "ping"})
        time.sleep(0.5)
    assert opened.status_code == 200
    assert (taken.status_code, ended.status_code) == (404, 404), "another token may not use or end it"
    assert own.status_code == 200
    assert anonymous.status_code == 401
    refused = [e for e in gateway.events("--kind", "peer_refused")]
    assert any("refused for who made it" in e["reason"] for e in refused), refused
