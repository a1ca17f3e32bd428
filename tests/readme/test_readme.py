"""Every command block of README.md, run as a newcomer would run it, against the built binary.

Each ```sh block runs in order, in one scratch directory holding a copy of what the commands
name (examples/, clients/python), so that state carries from block to block as it does for a
reader (the trail the agent leaves is the one `query` then reads). `cargo run --release --` and
`toolgate` both run $TOOLGATE_BIN. A `serve` starts in the background on the README's own
addresses and is stopped with SIGTERM at the end of its block, as a reader would press Ctrl-C.
The README makes its own virtual environment (`.venv`) and installs the client into it from
the registry, as it would on a new machine. The README's addresses (127.0.0.1:50051 and
:9464) are moved to free ports, so that the test runs beside a server a reader left running on
them: each command's text has them replaced, a `serve` without `--listen` is given the free one
(`TOOLGATE_LISTEN`, `TOOLGATE_HTTP_LISTEN`), and the example agent its `--target`. Each command must exit as EXPECTED says (0
unless listed); the commands in SKIPPED are not run, and the test says which and why; grpcurl, in no registry here, is replaced by the same call made
the way it makes it (server reflection, then the request from the same JSON). What a command
shows is checked where the README says what it shows (SHOWS).
"""

import json
import os
import pathlib
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import time

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
BIN = os.environ.get("TOOLGATE_BIN", str(ROOT / "target" / "debug" / "toolgate"))

# Commands not run here, by a word they contain, and why.
SKIPPED = {
    "./scripts/test": "the test command itself, which runs this test",
}

# Commands run another way, by a word they contain: why, and what runs instead.
REPLACED = {
    "grpcurl": "grpcurl is in neither Debian's archive nor the language registries: the same "
    "Decide, discovered over server reflection and sent from the same JSON, with grpcio-reflection",
}

# Commands that end with another exit code by design, by their start.
EXPECTED = {
    "toolgate decide --tool write": 1,  # the default policy denies a write without allow_write
}

# What a command's output must hold, by its start: what the README says it shows.
SHOWS = {
    "toolgate query --db toolgate.db --since 1h": ["seq  ts", "decision", "execution", "approval_approved",
                                                   "loop detected"],
    "toolgate export --db toolgate.db -o trail.csv": ["exported "],
    "toolgate verify --csv": ["intact:"],
    "toolgate query --db toolgate.db --since 24h --outcome deny": ["tool requires allow_write=true: write"],
    "toolgate export --db toolgate.db --session s1": ["exported 1 events"],
    "toolgate verify --db toolgate.db": ["intact:"],
    "toolgate stats": ["by outcome (decisions):"],
    "toolgate policy check": ["ok examples/policies/coding/policy.cedar"],
    "toolgate policy test": [", 0 failed"],
    "toolgate decide --tool write": ["outcome: deny"],
    "toolgate hook install --agent claude": ["wrote ", ".claude/settings.json"],
}


def promised(block: str) -> str:
    """The fields a block's `# →` comment says come back, as JSON members: its lines joined,
    the trailing `…` (more fields) left out."""
    lines = block.split("# →", 1)[1].splitlines()
    text = " ".join(line.lstrip("# ").strip() for line in lines if line.strip())
    return text.rstrip(", …").rstrip(",")


def decide_as_grpcurl_would(command: str) -> dict:
    """The README's grpcurl call: its JSON and address from the command, the method found over
    server reflection, the request built from the JSON with the discovered types alone."""
    import grpc
    from google.protobuf import descriptor_pool, json_format, message_factory
    from grpc_reflection.v1alpha.proto_reflection_descriptor_database import (
        ProtoReflectionDescriptorDatabase,
    )

    words = shlex.split(command, comments=True)
    body, address, method = words[words.index("-d") + 1], words[-2], words[-1]
    service, name = method.rsplit("/", 1)
    with grpc.insecure_channel(address) as channel:
        pool = descriptor_pool.DescriptorPool(ProtoReflectionDescriptorDatabase(channel))
        found = pool.FindServiceByName(service).FindMethodByName(name)
        request = json_format.Parse(body, message_factory.GetMessageClass(found.input_type)())
        call = channel.unary_unary(
            f"/{method}", request_serializer=lambda m: m.SerializeToString(),
            response_deserializer=message_factory.GetMessageClass(found.output_type).FromString,
        )
        return json_format.MessageToDict(call(request, timeout=10))

# The addresses the README's commands use, and the free ones the test gives them.
README_GRPC, README_HTTP = "127.0.0.1:50051", "127.0.0.1:9464"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


GRPC = ("127.0.0.1", free_port())
HTTP = ("127.0.0.1", free_port())


def localized(command: str) -> str:
    """The command on the test's free ports: the README's addresses replaced, and the example
    agent pointed at the server's."""
    command = command.replace(README_GRPC, f"{GRPC[0]}:{GRPC[1]}")
    command = command.replace(README_HTTP, f"{HTTP[0]}:{HTTP[1]}")
    words = command.split("#")[0].split()
    if words[1:2] == ["examples/agent/agent.py"] and "--target" not in words:
        head, _, comment = command.partition("#")
        command = f"{head.rstrip()} --target {GRPC[0]}:{GRPC[1]}" + (f"  #{comment}" if comment else "")
    return command


def commands(block: str) -> list[str]:
    """The commands of a shell block: continuation lines (and a quote across lines) joined,
    comment lines left out."""
    joined, pending = [], ""
    for line in block.splitlines():
        if line.rstrip().endswith("\\"):
            pending += line.rstrip()[:-1] + " "
            continue
        try:
            shlex.split(pending + line, comments=True)
        except ValueError:  # a quote still open: the command goes on on the next line
            pending += line + "\n"
            continue
        line = pending + line
        pending = ""
        if line.strip() and not line.lstrip().startswith("#"):
            joined.append(line.strip())
    return joined


def blocks(text: str) -> list[tuple[int, str]]:
    """The ```sh blocks of a Markdown text, each with its first line's number."""
    found, current, start = [], None, 0
    for n, line in enumerate(text.splitlines(), 1):
        if current is None and line.strip() == "```sh":
            current, start = [], n + 1
        elif current is not None and line.strip() == "```":
            found.append((start, "\n".join(current)))
            current = None
        elif current is not None:
            current.append(line)
    return found


def free(address: tuple[str, int]) -> bool:
    with socket.socket() as s:
        return s.connect_ex(address) != 0


def wait_until_listening(address: tuple[str, int], server: subprocess.Popen, log: pathlib.Path):
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if server.poll() is not None:
            pytest.fail(f"the server exited with {server.returncode}:\n{log.read_text()}")
        if not free(address):
            return
        time.sleep(0.1)
    pytest.fail(f"the server did not listen on {address} within 60 s:\n{log.read_text()}")


@pytest.fixture(scope="module")
def scratch(tmp_path_factory):
    """A scratch checkout: the files the commands name, and a fresh virtual environment."""
    where = tmp_path_factory.mktemp("readme")
    ignore = shutil.ignore_patterns("build", "*.egg-info", "__pycache__", ".pytest_cache")
    shutil.copytree(ROOT / "examples", where / "examples", ignore=ignore)
    shutil.copytree(ROOT / "clients" / "python", where / "clients" / "python", ignore=ignore)
    return where


def test_every_shell_block_of_the_readme_is_one_this_test_runs():
    fences = {line.strip() for line in (ROOT / "README.md").read_text().splitlines()
              if line.strip().startswith("```") and line.strip() != "```"}
    assert fences <= {"```sh"}, f"blocks this test would not run: {fences - {'```sh'}}"


def test_every_command_block_of_the_readme_runs(scratch):
    for address in (GRPC, HTTP):
        assert free(address), f"{address} is taken: the README's commands need it"
    shims = scratch / ".shims"
    shims.mkdir()
    (shims / "toolgate").write_text(f'#!/bin/sh\nexec "{BIN}" "$@"\n')
    # `cargo install --path . --locked` runs for real, from the repository, as a debug build
    # into the scratch directory (the release build's time is what BENCHMARKS.md measures);
    # `cargo run --release --` is the built binary.
    cargo = shutil.which("cargo")
    installed = scratch / ".cargo-root"
    (shims / "cargo").write_text(
        "#!/bin/sh\n"
        'if [ "$*" = "install --path . --locked" ]; then\n'
        f'  exec "{cargo}" install --path "{ROOT}" --locked --debug --target-dir "{ROOT}/target" '
        f'--root "{installed}"\n'
        "fi\n"
        '[ "$1 $2 $3" = "run --release --" ] || { echo "cargo $*: not a README command" >&2; exit 99; }\n'
        f'shift 3\nexec "{BIN}" "$@"\n'
    )
    for shim in shims.iterdir():
        shim.chmod(0o755)
    env = dict(os.environ)
    env["PATH"] = f"{shims}:{env['PATH']}"
    env.pop("TOOLGATE_TOKEN", None)
    env.pop("TOOLGATE_SERVER", None)
    env["TOOLGATE_LISTEN"] = f"{GRPC[0]}:{GRPC[1]}"
    env["TOOLGATE_HTTP_LISTEN"] = f"{HTTP[0]}:{HTTP[1]}"
    env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"

    ran, skipped, replaced = [], [], []
    text = (ROOT / "README.md").read_text()
    # A server started by one block serves the blocks after it, as in a reader's other terminal,
    # until a block starts another (the reader stopped the first) or the README ends.
    servers: list[subprocess.Popen] = []

    def stop(servers, line):
        for server in servers:
            os.killpg(server.pid, signal.SIGTERM)
        for server in servers:
            assert server.wait(timeout=30) == 0, f"README.md:{line}: the server did not stop cleanly"
        for address in (GRPC, HTTP):
            deadline = time.monotonic() + 10
            while not free(address) and time.monotonic() < deadline:
                time.sleep(0.1)
        servers.clear()

    try:
        for line, block in blocks(text):
            for command in map(localized, commands(block)):
                why = next((why for word, why in SKIPPED.items() if word in command), None)
                if why:
                    skipped.append(f"README.md:{line}: {command[:60]}: {why}")
                    continue
                if "grpcurl" in command:
                    answer = decide_as_grpcurl_would(command)
                    # What the README's `# →` comment says comes back, field by field (a "…"
                    # stands for any value).
                    said = json.loads("{" + promised(block) + "}")
                    for field, value in said.items():
                        if value != "…":
                            assert answer.get(field) == value, (field, answer)
                    replaced.append(f"README.md:{line}: {command[:60]}: {REPLACED['grpcurl']}")
                    continue
                words = command.split("#")[0].split()
                if "serve" in words[:5]:
                    stop(servers, line)
                    log = scratch / f"serve-{line}.log"
                    server = subprocess.Popen(
                        ["bash", "-c", command], cwd=scratch, env=env,
                        stdout=subprocess.DEVNULL, stderr=log.open("w"), start_new_session=True,
                    )
                    servers.append(server)
                    wait_until_listening(GRPC, server, log)
                    ran.append(command)
                    continue
                done = subprocess.run(
                    ["bash", "-c", command], cwd=scratch, env=env,
                    capture_output=True, text=True, timeout=600,
                )
                normalized = " ".join(words).replace("cargo run --release --", "toolgate")
                expected = next((code for start, code in EXPECTED.items()
                                 if normalized.startswith(start)), 0)
                assert done.returncode == expected, (
                    f"README.md:{line}: `{command}` exited {done.returncode}, "
                    f"not {expected}:\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}"
                )
                for start, shown in SHOWS.items():
                    if normalized.startswith(start):
                        for needle in shown:
                            assert needle in done.stdout + done.stderr, (
                                f"README.md:{line}: `{command}` does not show {needle!r}:\n"
                                f"{done.stdout[-3000:]}\n{done.stderr[-2000:]}"
                            )
                ran.append(command)
    finally:
        stop(servers, "end")
    # Every expectation met a command, and every command ran: none was dropped by a change.
    matched = {start for start in [*SHOWS, *EXPECTED]
               if any(" ".join(c.split("#")[0].split()).replace("cargo run --release --", "toolgate")
                      .startswith(start) for c in ran)}
    assert matched == {*SHOWS, *EXPECTED}, {*SHOWS, *EXPECTED} - matched
    # What `cargo install` put on the PATH runs.
    version = subprocess.run([installed / "bin" / "toolgate", "--version"], capture_output=True, text=True)
    assert version.returncode == 0 and version.stdout.startswith("toolgate "), version
    every = [c for _, block in blocks(text) for c in commands(block)]
    assert len(ran) + len(skipped) + len(replaced) == len(every), (ran, skipped, replaced)
    print("ran:", *ran, sep="\n  ", file=sys.stderr)
    print("skipped:", *skipped, sep="\n  ", file=sys.stderr)
    print("run another way:", *replaced, sep="\n  ", file=sys.stderr)
    assert len(ran) >= 15, ran
    # The trail the agent and the other commands left verifies.
    verified = subprocess.run([BIN, "verify", "--db", "toolgate.db"], cwd=scratch,
                              capture_output=True, text=True)
    assert verified.returncode == 0, verified.stdout + verified.stderr
