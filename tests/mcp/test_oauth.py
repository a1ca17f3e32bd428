"""The gateway over Streamable HTTP as an OAuth 2.1 resource server, per MCP's authorization
specification: the official SDK's OAuth client finds the authorization server through the
gateway's protected resource metadata, gets a token for the gateway (client credentials, from a
real OpenID provider: oidc-provider, which scripts/test installs into target/identity-node), and
calls through; the token never reaches the server behind the gateway."""

import json
import os
import subprocess
import threading
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import httpx2
from mcp import ClientSession
from mcp.client.auth.extensions.client_credentials import ClientCredentialsOAuthProvider
from mcp.client.streamable_http import streamable_http_client

from conftest import PERMIT_ALL, run, text, toolgate
from test_http import http_gateway

PROVIDER = os.environ.get("TOOLGATE_TEST_OIDC_PROVIDER")
assert PROVIDER, "TOOLGATE_TEST_OIDC_PROVIDER is not set: run scripts/test, which installs oidc-provider"


@contextmanager
def oidc_provider():
    proc = subprocess.Popen(["node", PROVIDER], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        yield json.loads(proc.stdout.readline())["issuer"]
    finally:
        proc.kill()
        proc.wait()


@contextmanager
def recording_server():
    """A minimal MCP server over Streamable HTTP (JSON responses) that keeps every request's
    headers: what the gateway sends upstream."""
    seen = []

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def do_POST(self):
            seen.append(dict(self.headers))
            message = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            if "id" not in message:
                self.send_response(202)
                self.end_headers()
                return
            results = {
                "initialize": {"protocolVersion": message.get("params", {}).get("protocolVersion", "2025-11-25"),
                               "capabilities": {"tools": {}}, "serverInfo": {"name": "recorder", "version": "0"}},
                "tools/list": {"tools": [{"name": "echo", "inputSchema": {"type": "object"}}]},
                "tools/call": {"content": [{"type": "text", "text": "echoed"}]},
            }
            body = json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": results.get(message["method"], {})})
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Mcp-Session-Id", "recorded-session")
            self.end_headers()
            self.wfile.write(body.encode())

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/mcp", seen
    finally:
        server.shutdown()


class Memory:
    def __init__(self):
        self.tokens, self.client = None, None

    async def get_tokens(self):
        return self.tokens

    async def set_tokens(self, tokens):
        self.tokens = tokens

    async def get_client_info(self):
        return self.client

    async def set_client_info(self, info):
        self.client = info


def test_an_sdk_oauth_client_gets_a_token_for_the_gateway_which_never_goes_upstream(gateway):
    with oidc_provider() as issuer, recording_server() as (upstream, seen):
        config = f"""
[[auth.issuers]]
issuer = "{issuer}"
audiences = ["urn:toolgate"]
"""
        with http_gateway(gateway, "recorder", upstream, config=config, policy=PERMIT_ALL) as url:
            metadata_url = url.replace("/mcp", "/.well-known/oauth-protected-resource/mcp")
            metadata = httpx2.get(metadata_url).json()
            anonymous = httpx2.post(url, json={"jsonrpc": "2.0", "id": 1, "method": "ping"})
            # A token of the right issuer for another audience (the sidecar's) is not the gateway's.
            other = httpx2.post(f"{issuer}/token", auth=("agent-1", "agent-1-secret"),
                                data={"grant_type": "client_credentials"}).json()["access_token"]
            misdirected = httpx2.post(url, headers={"Authorization": f"Bearer {other}"},
                                      json={"jsonrpc": "2.0", "id": 2, "method": "ping"})
            auth = ClientCredentialsOAuthProvider(server_url=url, storage=Memory(), client_id="agent-1",
                                                  client_secret="agent-1-secret", issuer=issuer)

            async def session():
                async with httpx2.AsyncClient(auth=auth, timeout=30) as http:
                    async with streamable_http_client(url, http_client=http) as (read, write):
                        async with ClientSession(read, write) as s:
                            await s.initialize()
                            return await s.call_tool("echo", {"message": "with a token"})

            result = run(session())
    assert metadata == {"resource": url, "authorization_servers": [issuer], "bearer_methods_supported": ["header"],
                        "resource_name": "toolgate MCP gateway"}
    assert anonymous.status_code == 401
    assert anonymous.headers["www-authenticate"] == f'Bearer resource_metadata="{metadata_url}"'
    assert misdirected.status_code == 401 and 'error="invalid_token"' in misdirected.headers["www-authenticate"]
    assert text(result) == "echoed"
    assert seen and not any(k.lower() == "authorization" for headers in seen for k in headers), seen
    [decision] = gateway.events("--kind", "decision")
    assert decision["actor_id"] == "agent-1"
    assert json.loads(decision["request"])["identity"] == f"jwt:{issuer}#agent-1"


def test_provider_tokens_are_not_passed_to_a_sidecar_elsewhere_nor_served_under_an_unknown_url(gateway):
    config = gateway.dir / "issuers.toml"
    config.write_text('[[auth.issuers]]\nissuer = "https://idp.example.com"\naudiences = ["urn:toolgate"]\n')
    common = ["mcp", "--config", str(config), "--upstream", "http://127.0.0.1:9/mcp"]
    remote = toolgate(*common, "--listen", "127.0.0.1:0", "--server", "http://127.0.0.1:9", check=False)
    assert remote.returncode != 0 and "needs the embedded sidecar" in remote.stderr, remote.stderr
    exposed = toolgate(*common, "--db", str(gateway.db), "--listen", "0.0.0.0:0", check=False)
    assert exposed.returncode != 0 and "needs [mcp] resource" in exposed.stderr, exposed.stderr
