"""The coding agents' hooks, end to end: each real agent CLI, headless, against a scripted model
(model.py), with toolgate's hooks installed by `toolgate hook install` and the real server
deciding by the coding policy (examples/policies/coding).

scripts/test installs the CLIs (tests/agents/package.json, by its lock) into target/agents-node.
Every test gets its own project, HOME and agent configuration under a temporary folder, and the
agents are told to reach nothing but 127.0.0.1 (telemetry, update checks and downloads off).
A missing CLI or binary fails the tests; nothing is skipped."""

from __future__ import annotations

import getpass
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import pytest

from model import Model

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
TOOLGATE = os.environ.get("TOOLGATE_BIN") or str(ROOT / "target/debug/toolgate")
NODE = ROOT / "target/agents-node/node_modules"
# Copilot CLI unpacks itself (235 MB) into $XDG_CACHE_HOME on its first start: one cache for
# every test, not one per fresh HOME.
SHARED_CACHE = ROOT / "target/agents-cache"
CODING = ROOT / "examples/policies/coding"
# The Node.js the JavaScript CLIs (Gemini CLI, Qwen Code) run on.
NODE_DIR = Path(shutil.which("node") or "/usr/bin/node").parent

assert Path(TOOLGATE).exists(), f"no toolgate binary at {TOOLGATE}: run `cargo build` or set TOOLGATE_BIN"

# How long one agent run may take (two model turns and a shell call take 2–15 s on a loaded
# two-core machine; a held call waits for its approval on top).
RUN_TIMEOUT = 240


def toolgate(*args: str, env: dict | None = None, check: bool = True, timeout: float = 60):
    done = subprocess.run([TOOLGATE, *args], capture_output=True, text=True, timeout=timeout, env=env)
    if check and done.returncode != 0:
        raise AssertionError(
            f"toolgate {' '.join(args)} exited {done.returncode}:\n{done.stdout}\n{done.stderr}"
        )
    return done


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def needed(path: Path) -> str:
    assert path.exists(), f"{path} is missing: run scripts/test agents, which installs the agents' CLIs"
    return str(path)


# The server.


@dataclass
class Server:
    url: str
    # The side port (`--http-listen`), where the http hooks are.
    side: str
    db: Path
    process: subprocess.Popen
    log: Path

    def events(self, *filters: str) -> list[dict]:
        out = toolgate("query", "--db", str(self.db), "--json", *filters).stdout
        return [json.loads(line) for line in out.splitlines() if line.strip()]

    def pending(self, actor: str) -> list[str]:
        """The decision ids of the approvals pending for `actor`."""
        out = toolgate("approvals", "list", "--server", self.url, "--actor", actor).stdout
        return re.findall(r"^decision (\S+)", out, re.MULTILINE)


def start_server(dir: Path) -> Server:
    """`toolgate serve` with the coding policy and its registry, on free ports, once ready."""
    dir.mkdir(parents=True, exist_ok=True)
    grpc, http = free_port(), free_port()
    db, log = dir / "trail.db", dir / "server.log"
    process = subprocess.Popen(
        [TOOLGATE, "serve", "--db", str(db), "--policy", str(CODING / "policy.cedar"),
         "--config", str(CODING / "toolgate.toml"), "--listen", f"127.0.0.1:{grpc}",
         "--http-listen", f"127.0.0.1:{http}"],
        stdout=subprocess.DEVNULL, stderr=open(log, "w"), start_new_session=True,
    )
    deadline = time.monotonic() + 60
    while True:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{http}/readyz", timeout=1) as answer:
                if answer.status == 200:
                    break
        except OSError:
            pass
        if process.poll() is not None or time.monotonic() > deadline:
            process.kill()
            raise AssertionError(f"toolgate serve did not start:\n{log.read_text()}")
        time.sleep(0.1)
    return Server(url=f"http://127.0.0.1:{grpc}", side=f"http://127.0.0.1:{http}", db=db,
                  process=process, log=log)


@pytest.fixture
def server(tmp_path):
    running = start_server(tmp_path / "server")
    yield running
    running.process.terminate()
    try:
        running.process.wait(timeout=30)
    except subprocess.TimeoutExpired:
        running.process.kill()
        running.process.wait()


# The agents.


@dataclass
class Workspace:
    """One test's folders: the project the agent works in (its cwd), an isolated HOME, and
    the agent's own configuration home."""

    root: Path
    model: Model
    home: Path = field(init=False)
    project: Path = field(init=False)
    config: Path = field(init=False)

    def __post_init__(self):
        self.home = self.root / "home"
        self.project = self.root / "project"
        self.config = self.root / "agent-config"
        for dir in (self.home, self.project, self.config):
            dir.mkdir(parents=True, exist_ok=True)
        # Something for `ls` to list.
        (self.project / "README.md").write_text("A project an agent works in.\n")

    def base_env(self) -> dict[str, str]:
        """What every agent runs with: no variable of the host's but PATH, nothing off-box."""
        return {
            "PATH": f"{NODE_DIR}:/usr/local/bin:/usr/bin:/bin",
            "HOME": str(self.home),
            "USER": getpass.getuser(),
            "LANG": "C.UTF-8",
            "TERM": "dumb",
            "NO_COLOR": "1",
            "CI": "1",
            "TMPDIR": str(self.root / "tmp"),
            "XDG_CONFIG_HOME": str(self.home / ".config"),
            "XDG_DATA_HOME": str(self.home / ".local/share"),
            "XDG_STATE_HOME": str(self.home / ".local/state"),
            "XDG_CACHE_HOME": str(self.home / ".cache"),
            "NO_PROXY": "127.0.0.1,localhost",
            "GIT_TERMINAL_PROMPT": "0",
            "GIT_CONFIG_NOSYSTEM": "1",
        }


def write_json(path: Path, value) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(value, indent=2) + "\n")


def read_json(path: Path):
    return json.loads(path.read_text())


@dataclass
class Agent:
    """One agent CLI: how it is set up, installed and run headless."""

    name: str  # `toolgate hook install --agent`
    harness: str  # its name on the trail, the actor of its calls
    # The variable naming its user configuration's home, set to the workspace's `config`.
    config_env: str | None
    binary: Callable[[], list[str]]
    env: Callable[[Workspace], dict[str, str]]
    # Writes its settings (model, auth, telemetry off, trust): before `hook install`, which
    # must merge into them.
    settings: Callable[[Workspace], None]
    # Checks that `hook install` kept those settings.
    settings_kept: Callable[[Workspace], None]
    argv: Callable[[str], list[str]]
    # Where `hook install --scope user` writes the hook.
    hook_file: Callable[[Workspace], Path]

    def environment(self, ws: Workspace) -> dict[str, str]:
        env = ws.base_env()
        if self.config_env:
            env[self.config_env] = str(ws.config)
        env.update(self.env(ws))
        (ws.root / "tmp").mkdir(exist_ok=True)
        return env


# Claude Code.


def claude_binary():
    # The native binary itself: bin/claude.exe is a placeholder when npm ran no install scripts.
    return [needed(NODE / "@anthropic-ai/claude-code-linux-x64/claude")]


def claude_env(ws):
    return {
        "ANTHROPIC_BASE_URL": ws.model.url,
        "ANTHROPIC_API_KEY": "scripted",
        # Nothing but the model: no metrics, no settings fetch, no update, no error reports.
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        "DISABLE_TELEMETRY": "1",
        "DISABLE_AUTOUPDATER": "1",
        "DISABLE_ERROR_REPORTING": "1",
        # bypassPermissions as root.
        "IS_SANDBOX": "1",
    }


def claude_settings(ws):
    write_json(ws.config / "settings.json", {"cleanupPeriodDays": 7, "env": {"DISABLE_AUTOUPDATER": "1"}})


def claude_kept(ws):
    settings = read_json(ws.config / "settings.json")
    assert settings.get("cleanupPeriodDays") == 7, settings
    assert settings.get("env") == {"DISABLE_AUTOUPDATER": "1"}, settings


# Codex CLI.


def codex_path():
    return NODE / "@openai/codex-linux-x64/vendor/x86_64-unknown-linux-musl/bin/codex"


def codex_binary():
    return [needed(codex_path())]


def codex_env(ws):
    return {"SCRIPTED_API_KEY": "scripted"}


CODEX_CONFIG = """\
model = "scripted"
model_provider = "scripted"
check_for_update_on_startup = false

[model_providers.scripted]
name = "Scripted"
base_url = "{url}/v1"
env_key = "SCRIPTED_API_KEY"
wire_api = "responses"

[features]
plugins = false

[analytics]
enabled = false
"""


def codex_settings(ws):
    (ws.config / "config.toml").write_text(CODEX_CONFIG.format(url=ws.model.url))


def codex_kept(ws):
    config = (ws.config / "config.toml").read_text()
    assert f'base_url = "{ws.model.url}/v1"' in config and 'model_provider = "scripted"' in config, config


# Gemini CLI.


def gemini_env(ws):
    return {
        "GEMINI_API_KEY": "scripted",
        "GOOGLE_GEMINI_BASE_URL": ws.model.url,
        "GEMINI_CLI_TRUST_WORKSPACE": "true",
    }


def gemini_settings(ws):
    write_json(ws.config / ".gemini/settings.json", {
        # The API key's auth: with GOOGLE_GEMINI_BASE_URL alone it picks "gateway" and refuses.
        "security": {"auth": {"selectedType": "gemini-api-key"}, "folderTrust": {"enabled": False}},
        "privacy": {"usageStatisticsEnabled": False},
        "telemetry": {"enabled": False},
        "general": {"enableAutoUpdate": False, "enableAutoUpdateNotification": False},
    })


def gemini_kept(ws):
    settings = read_json(ws.config / ".gemini/settings.json")
    assert settings["security"]["auth"] == {"selectedType": "gemini-api-key"}, settings
    assert settings["privacy"] == {"usageStatisticsEnabled": False}, settings


# Qwen Code.


def qwen_env(ws):
    return {
        "OPENAI_API_KEY": "scripted",
        "OPENAI_BASE_URL": f"{ws.model.url}/v1",
        "OPENAI_MODEL": "scripted",
        "QWEN_CODE_SUPPRESS_YOLO_WARNING": "1",
        "QWEN_USAGE_STATISTICS_ENABLED": "false",
    }


def qwen_settings(ws):
    write_json(ws.config / "settings.json", {
        "security": {"auth": {"selectedType": "openai"}},
        "privacy": {"usageStatisticsEnabled": False},
        "telemetry": {"enabled": False},
        "general": {"enableAutoUpdate": False},
    })


def qwen_kept(ws):
    settings = read_json(ws.config / "settings.json")
    assert settings["security"]["auth"] == {"selectedType": "openai"}, settings
    assert settings["privacy"] == {"usageStatisticsEnabled": False}, settings


# GitHub Copilot CLI: its configuration home is ~/.copilot.


def copilot_binary():
    return [needed(NODE / "@github/copilot-linux-x64/copilot")]


def copilot_env(ws):
    SHARED_CACHE.mkdir(parents=True, exist_ok=True)
    return {
        "XDG_CACHE_HOME": str(SHARED_CACHE),
        "COPILOT_OFFLINE": "true",
        "COPILOT_PROVIDER_BASE_URL": f"{ws.model.url}/v1",
        "COPILOT_MODEL": "gpt-4.1",
    }


def copilot_settings(ws):
    write_json(ws.home / ".copilot/settings.json", {"autoUpdate": False, "memory": False})


def copilot_kept(ws):
    settings = read_json(ws.home / ".copilot/settings.json")
    assert settings.get("autoUpdate") is False and settings.get("memory") is False, settings


# OpenCode: its user configuration is $XDG_CONFIG_HOME/opencode.

OPENCODE_PLUGIN = "1.18.33"


def opencode_binary():
    return [needed(NODE / "opencode-linux-x64/bin/opencode")]


def opencode_env(ws):
    return {
        "OPENCODE_DISABLE_MODELS_FETCH": "1",
        "OPENCODE_DISABLE_AUTOUPDATE": "1",
        "OPENCODE_DISABLE_LSP_DOWNLOAD": "1",
        "OPENCODE_DISABLE_SHARE": "1",
    }


def opencode_plugin_dependency(dir: Path) -> None:
    """OpenCode `npm install`s @opencode-ai/plugin into each of its configuration folders at
    start, and stalls for a minute offline: it skips that when node_modules is there and the
    lock names the package. The installed one is linked in."""
    dir.mkdir(parents=True, exist_ok=True)
    needed(NODE / "@opencode-ai/plugin/package.json")
    modules = dir / "node_modules"
    if not modules.exists():
        modules.symlink_to(NODE, target_is_directory=True)
    manifest = dir / "package.json"
    current = read_json(manifest) if manifest.exists() else {}
    current.setdefault("dependencies", {}).setdefault("@opencode-ai/plugin", OPENCODE_PLUGIN)
    write_json(manifest, current)
    write_json(dir / "package-lock.json", {
        "lockfileVersion": 3,
        "packages": {"": {"dependencies": current["dependencies"]}},
    })


def opencode_settings(ws):
    write_json(ws.config / "opencode/opencode.json", {
        "$schema": "https://opencode.ai/config.json",
        "model": "scripted/scripted",
        "small_model": "scripted/scripted",
        "autoupdate": False,
        "share": "disabled",
        "provider": {"scripted": {
            "npm": "@ai-sdk/openai-compatible",
            "name": "Scripted",
            "options": {"baseURL": f"{ws.model.url}/v1", "apiKey": "scripted"},
            "models": {"scripted": {"name": "Scripted", "tool_call": True}},
        }},
        "permission": {"external_directory": "allow"},
    })
    opencode_plugin_dependency(ws.config / "opencode")
    opencode_plugin_dependency(ws.project / ".opencode")


def opencode_kept(ws):
    config = read_json(ws.config / "opencode/opencode.json")
    assert config["provider"]["scripted"]["options"]["baseURL"] == f"{ws.model.url}/v1", config


def node_script(name: str) -> Callable[[], list[str]]:
    return lambda: [needed(NODE / ".bin" / name)]


AGENTS = {
    agent.name: agent
    for agent in [
        Agent(
            name="claude", harness="claude-code", config_env="CLAUDE_CONFIG_DIR",
            binary=claude_binary, env=claude_env, settings=claude_settings, settings_kept=claude_kept,
            argv=lambda prompt: ["-p", prompt, "--output-format", "json",
                                 "--permission-mode", "bypassPermissions"],
            hook_file=lambda ws: ws.config / "settings.json",
        ),
        Agent(
            name="codex", harness="codex", config_env="CODEX_HOME",
            binary=codex_binary, env=codex_env, settings=codex_settings, settings_kept=codex_kept,
            argv=lambda prompt: ["exec", "--skip-git-repo-check", "--json",
                                 "--dangerously-bypass-approvals-and-sandbox", prompt],
            hook_file=lambda ws: ws.config / "hooks.json",
        ),
        Agent(
            name="gemini", harness="gemini-cli", config_env="GEMINI_CLI_HOME",
            binary=node_script("gemini"), env=gemini_env, settings=gemini_settings,
            settings_kept=gemini_kept,
            argv=lambda prompt: ["-m", "gemini-2.5-flash", "-p", prompt, "--yolo", "-o", "json"],
            hook_file=lambda ws: ws.config / ".gemini/settings.json",
        ),
        Agent(
            name="copilot", harness="copilot-cli", config_env=None,
            binary=copilot_binary, env=copilot_env, settings=copilot_settings, settings_kept=copilot_kept,
            argv=lambda prompt: ["-p", prompt, "--allow-all-tools", "--no-auto-update"],
            hook_file=lambda ws: ws.home / ".copilot/hooks/toolgate.json",
        ),
        Agent(
            name="opencode", harness="opencode", config_env="XDG_CONFIG_HOME",
            binary=opencode_binary, env=opencode_env, settings=opencode_settings,
            settings_kept=opencode_kept,
            argv=lambda prompt: ["run", prompt],
            hook_file=lambda ws: ws.config / "opencode/plugins/toolgate.js",
        ),
        Agent(
            name="qwen", harness="qwen-code", config_env="QWEN_HOME",
            binary=node_script("qwen"), env=qwen_env, settings=qwen_settings, settings_kept=qwen_kept,
            argv=lambda prompt: ["-p", prompt, "--yolo", "--auth-type", "openai"],
            hook_file=lambda ws: ws.config / "settings.json",
        ),
    ]
}


@dataclass
class Run:
    argv: list[str]
    returncode: int | None
    stdout: str
    stderr: str
    seconds: float

    def describe(self) -> str:
        return (f"$ {' '.join(self.argv)}\nexit {self.returncode} after {self.seconds:.1f} s\n"
                f"--- stdout\n{self.stdout[-4000:]}\n--- stderr\n{self.stderr[-4000:]}")


@dataclass
class Started:
    process: subprocess.Popen
    argv: list[str]
    at: float
    stdout: Path
    stderr: Path


class Session:
    """One agent in one workspace: set up, hooked, and run."""

    def __init__(self, agent: Agent, ws: Workspace):
        agent.binary()  # there, or the test fails saying so before anything else
        self.agent = agent
        self.ws = ws
        self.env = agent.environment(ws)
        agent.settings(ws)

    def hook_args(self, command: str, server_url: str) -> list[str]:
        args = ["hook", command, "--agent", self.agent.name, "--scope", "user", "--server", server_url]
        if self.agent.name == "codex":
            # Codex runs only hooks it trusts: install has `codex app-server` trust them.
            args += ["--codex", needed(codex_path())]
        return args

    def install(self, server_url: str) -> None:
        """`toolgate hook install --scope user`, with the agent's configuration home set so
        that the user scope is this workspace's."""
        args = self.hook_args("install", server_url)
        done = toolgate(*args, env=self.env, check=False, timeout=120)
        assert done.returncode == 0, (
            f"toolgate {' '.join(args)} exited {done.returncode}:\n{done.stdout}\n{done.stderr}"
        )
        hook = self.agent.hook_file(self.ws)
        assert hook.exists(), f"`hook install` wrote no {hook}:\n{done.stdout}\n{done.stderr}"
        self.agent.settings_kept(self.ws)
        self.installed = done

    def doctor(self, server_url: str) -> subprocess.CompletedProcess:
        return toolgate(*self.hook_args("doctor", server_url), env=self.env, check=False, timeout=120)

    def start(self, prompt: str) -> Started:
        """The agent, running headless in the project on `prompt`."""
        argv = [*self.agent.binary(), *self.agent.argv(prompt)]
        out, err = self.ws.root / "agent.out", self.ws.root / "agent.err"
        with open(out, "w") as stdout, open(err, "w") as stderr:
            process = subprocess.Popen(
                argv, cwd=self.ws.project, env=self.env, stdin=subprocess.DEVNULL,
                stdout=stdout, stderr=stderr, start_new_session=True,
            )
        return Started(process, argv, time.monotonic(), out, err)

    def finish(self, started: Started, timeout: float = RUN_TIMEOUT) -> Run:
        """The run, once the agent ended, or killed after `timeout` s (`returncode` None)."""
        process = started.process
        timed_out = False
        try:
            process.wait(timeout=max(0.0, started.at + timeout - time.monotonic()))
        except subprocess.TimeoutExpired:
            timed_out = True
        finally:
            # The agent and whatever it left running (its shell, its hooks).
            try:
                os.killpg(process.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            process.wait()
        return Run(
            argv=started.argv,
            returncode=None if timed_out else process.returncode,
            stdout=started.stdout.read_text(errors="replace"),
            stderr=started.stderr.read_text(errors="replace"),
            seconds=time.monotonic() - started.at,
        )

    def run(self, prompt: str, timeout: float = RUN_TIMEOUT) -> Run:
        return self.finish(self.start(prompt), timeout)


@pytest.fixture(params=list(AGENTS))
def agent(request) -> Agent:
    return AGENTS[request.param]


@pytest.fixture
def make_session(tmp_path, agent):
    models: list[Model] = []

    def make(command: str) -> Session:
        """A session whose model runs `command` (`{project}` is the project's path)."""
        model = Model(command).start()
        models.append(model)
        ws = Workspace(tmp_path / "ws", model)
        model.command = command.format(project=ws.project)
        return Session(agent, ws)

    yield make
    for model in models:
        model.stop()
