"""Starts the real toolgate server for the tests: the binary cargo built (or $TOOLGATE_BIN), on
free ports, over a fresh SQLite file."""

from __future__ import annotations

import importlib.util
import json
import os
import pathlib
import socket
import ssl
import subprocess
import time
import urllib.request
from dataclasses import dataclass

import pytest

HERE = pathlib.Path(__file__).resolve().parent

# CrewAI and the OpenAI Agents SDK pin openai versions apart, so they cannot share one venv:
# scripts/test runs test_crewai.py in CrewAI's own (target/python-venv-crewai), by name, and a
# venv without CrewAI leaves it out here.
collect_ignore = [] if importlib.util.find_spec("crewai") else ["test_crewai.py"]
ROOT = HERE.parent.parent.parent


def binary() -> str:
    path = os.environ.get("TOOLGATE_BIN") or str(ROOT / "target" / "debug" / "toolgate")
    if not pathlib.Path(path).exists():
        pytest.exit(f"no toolgate binary at {path}: run `cargo build` or set TOOLGATE_BIN", 2)
    return path


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass
class Server:
    target: str
    http: str
    db: pathlib.Path
    process: subprocess.Popen

    def query(self, *args: str) -> str:
        out = subprocess.run(
            [binary(), "query", "--db", str(self.db), *args], capture_output=True, text=True, check=True
        )
        return out.stdout


def start(tmp: pathlib.Path, policy: pathlib.Path = HERE / "policy.cedar",
          config: pathlib.Path = HERE / "toolgate.toml", unix_socket: bool = False,
          side_tls: ssl.SSLContext | None = None) -> Server:
    """The server, once ready. `side_tls`: the side port serves TLS, trusted through it."""
    grpc_port, http_port = free_port(), free_port()
    db = tmp / "trail.db"
    listen = f"unix:{tmp / 'toolgate.sock'}" if unix_socket else f"127.0.0.1:{grpc_port}"
    process = subprocess.Popen(
        [binary(), "serve", "--config", str(config), "--db", str(db), "--policy", str(policy),
         "--listen", listen, "--http-listen", f"127.0.0.1:{http_port}"],
        stdout=subprocess.DEVNULL, stderr=open(tmp / "server.log", "w"),
    )
    http = f"{'https' if side_tls else 'http'}://127.0.0.1:{http_port}"
    deadline = time.monotonic() + 30
    while True:
        try:
            with urllib.request.urlopen(f"{http}/readyz", timeout=1, context=side_tls) as answer:
                if answer.status == 200:
                    break
        except OSError:
            pass
        if process.poll() is not None or time.monotonic() > deadline:
            process.kill()
            raise RuntimeError((tmp / "server.log").read_text())
        time.sleep(0.05)
    return Server(target=listen, http=http, db=db, process=process)


def config_with(tmp: pathlib.Path, extra: str) -> pathlib.Path:
    """The tests' configuration with `extra` TOML appended, written into `tmp`."""
    path = tmp / "extended.toml"
    path.write_text((HERE / "toolgate.toml").read_text() + extra)
    return path


def token_toml(id: str, token: str, actors: list[str]) -> str:
    """An `[[auth.tokens]]` entry with role agent for `token`."""
    import hashlib
    import json

    digest = hashlib.sha256(token.encode()).hexdigest()
    return f"""
[[auth.tokens]]
id = "{id}"
sha256 = "{digest}"
roles = ["agent"]
actors = {json.dumps(actors)}
"""


@dataclass
class MutualTls:
    """A server certificate and a client CA in `tmp`, made at run time, and the `[tls]` table
    that serves them."""

    server_ca: object
    client_ca: object
    toml: str


def mutual_tls(tmp: pathlib.Path) -> MutualTls:
    import trustme

    server_ca, client_ca = trustme.CA(), trustme.CA()
    served = server_ca.issue_cert("127.0.0.1", "localhost")
    served.private_key_and_cert_chain_pem.write_to_path(str(tmp / "server.pem"))
    client_ca.cert_pem.write_to_path(str(tmp / "clients.pem"))
    toml = f"""
[tls]
cert_file = "{tmp / 'server.pem'}"
key_file = "{tmp / 'server.pem'}"
client_ca_file = "{tmp / 'clients.pem'}"
"""
    return MutualTls(server_ca=server_ca, client_ca=client_ca, toml=toml)


@pytest.fixture
def server(tmp_path: pathlib.Path):
    running = start(tmp_path)
    yield running
    running.process.terminate()
    assert running.process.wait(timeout=30) == 0, "the server stops cleanly on SIGTERM"


def reject_pending(server: Server, approver: str = "bob") -> None:
    """A person refuses, in toolgate itself, the first call that waits for approval."""
    import grpc
    from toolgate_client.v1 import approvals_pb2, approvals_pb2_grpc

    with grpc.insecure_channel(server.target) as channel:
        approvals = approvals_pb2_grpc.ApprovalsStub(channel)
        [pending, *_] = approvals.ListPending(approvals_pb2.ListPendingRequest()).approvals
        approvals.Reject(approvals_pb2.VerdictRequest(decision_id=pending.decision_id,
                                                      approver=approver, comment="no"))


def events(server: Server, *filters: str) -> list[dict]:
    """The trail's events (`toolgate query --json`, with `filters`), parsed."""
    return [json.loads(line) for line in server.query("--json", *filters).splitlines()]
