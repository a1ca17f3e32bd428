"""The MCP gateway's tests: `toolgate mcp` between the official Python SDK's client and real
MCP servers (the reference servers from the npm registry, and one built with the Python SDK),
with the trail read back by `toolgate query` and checked by `toolgate verify`.

scripts/test installs what they need: the servers into target/mcp-node, `mcp` into the venv.
A missing piece fails the tests; nothing is skipped."""

import asyncio
import json
import os
import subprocess
import sys
import time
from contextlib import asynccontextmanager
from pathlib import Path

import pytest
from mcp import ClientSession, StdioServerParameters, stdio_client

ROOT = Path(__file__).resolve().parents[2]
TOOLGATE = os.environ.get("TOOLGATE_BIN") or str(ROOT / "target/debug/toolgate")
NODE_BIN = ROOT / "target/mcp-node/node_modules/.bin"
SERVERS = Path(__file__).parent / "servers"

for needed in (Path(TOOLGATE), NODE_BIN / "mcp-server-everything", NODE_BIN / "mcp-server-filesystem"):
    assert needed.exists(), f"{needed} is missing: run scripts/test, which installs it"


def everything():
    return [str(NODE_BIN / "mcp-server-everything")]


def filesystem(root):
    return [str(NODE_BIN / "mcp-server-filesystem"), str(root)]


def misbehaving(markers):
    return [sys.executable, str(SERVERS / "misbehaving.py"), str(markers)]


def toolgate(*args, check=True, input=None):
    """Runs the toolgate CLI."""
    done = subprocess.run([TOOLGATE, *args], capture_output=True, text=True, timeout=60, input=input)
    if check and done.returncode != 0:
        raise AssertionError(f"toolgate {' '.join(args)} exited {done.returncode}: {done.stderr}")
    return done


class Gateway:
    """One gateway's files: its configuration, its policy and its trail."""

    def __init__(self, dir: Path):
        self.dir = dir
        self.db = dir / "trail.db"
        self.socket = f"unix:{self.db}.sock"

    def params(self, name, command, config="", policy=None, extra=()):
        (self.dir / "toolgate.toml").write_text(config)
        args = ["mcp", "--name", name, "--config", str(self.dir / "toolgate.toml")]
        if policy is not None:
            (self.dir / "policy.cedar").write_text(policy)
            args += ["--policy", str(self.dir / "policy.cedar")]
        args += [*extra]
        if "--server" not in extra:
            args += ["--db", str(self.db)]
        return StdioServerParameters(command=TOOLGATE, args=[*args, "--", *command], cwd=str(self.dir))

    def events(self, *filters, db=None):
        out = toolgate("query", "--db", str(db or self.db), "--json", *filters).stdout
        return [json.loads(line) for line in out.splitlines()]

    def verify(self, db=None):
        return toolgate("verify", "--db", str(db or self.db)).stdout


@pytest.fixture
def gateway(tmp_path):
    return Gateway(tmp_path)


@asynccontextmanager
async def connected(params):
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            session.initialized = await session.initialize()
            yield session


def wait_for(predicate, seconds=15.0):
    """The predicate's first truthy value, polled until `seconds` have passed."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.05)
    raise AssertionError("timed out waiting")


def run(coroutine):
    return asyncio.run(asyncio.wait_for(coroutine, 120))


def text(result):
    return "".join(block.text for block in result.content if block.type == "text")


# Every tool of the servers permitted, unless a case's policy says otherwise.
PERMIT_ALL = """
@id("test.permit_all")
@reason("permitted: {tool}")
permit (principal, action, resource);
"""
