"""An MCP server (the official Python SDK's) whose tools misbehave on purpose: one hangs, one
kills the server mid-call, one writes lines that are not JSON-RPC, and one writes a note.
Marker files in the directory given as its first argument tell the tests what it saw.

`misbehaving.py MARKERS` serves on stdio; `misbehaving.py MARKERS PORT` over Streamable HTTP
on 127.0.0.1:PORT, at /mcp."""

import asyncio
import os
import sys
from pathlib import Path

from mcp.server import MCPServer

markers = Path(sys.argv[1])
markers.mkdir(parents=True, exist_ok=True)
(markers / "pid").write_text(str(os.getpid()))

server = MCPServer("misbehaving")


@server.tool()
async def slow(seconds: float) -> str:
    """Sleeps, and notes a cancellation if one comes first."""
    try:
        await asyncio.sleep(seconds)
    except asyncio.CancelledError:
        (markers / "cancelled").write_text("cancelled")
        raise
    (markers / "finished").write_text("finished")
    return "done"


@server.tool()
def crash() -> str:
    """Ends the server in the middle of the call."""
    os._exit(3)


@server.tool()
def garble() -> str:
    """Writes two lines on stdout that are not JSON-RPC messages, then answers."""
    sys.stdout.buffer.write(b'this is not json\n{"jsonrpc": "2.0"}\n')
    sys.stdout.buffer.flush()
    return "still here"


@server.tool()
def write_note(name: str, text: str) -> str:
    """Writes a note file (so that a test can tell whether the call reached the server)."""
    (markers / name).write_text(text)
    return f"wrote {name}"


if len(sys.argv) > 2:
    server.run("streamable-http", host="127.0.0.1", port=int(sys.argv[2]))
else:
    server.run()
