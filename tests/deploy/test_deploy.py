"""The deployment examples against the tools that judge them: the Kubernetes sidecar against
Kubernetes' published schema (kubernetes-validate, strict), its toolgate configuration against
the real binary, and the systemd unit against systemd-analyze. The container image has its own
smoke test (scripts/container smoke), run by scripts/test."""

import hashlib
import os
import pathlib
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request

import yaml

ROOT = pathlib.Path(__file__).resolve().parents[2]
BIN = os.environ.get("TOOLGATE_BIN", str(ROOT / "target" / "debug" / "toolgate"))
SIDECAR = ROOT / "deploy" / "kubernetes" / "sidecar.yaml"
UNIT = ROOT / "deploy" / "systemd" / "toolgate.service"
SYSTEMD = ROOT / "deploy" / "systemd"
KUBERNETES = "1.31"


def validate(path: pathlib.Path) -> subprocess.CompletedProcess:
    tool = pathlib.Path(sys.executable).parent / "kubernetes-validate"
    return subprocess.run([str(tool), "--strict", "-k", KUBERNETES, str(path)],
                          capture_output=True, text=True)


def test_the_sidecar_example_matches_the_kubernetes_schema(tmp_path):
    checked = validate(SIDECAR)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    kinds = [doc["kind"] for doc in yaml.safe_load_all(SIDECAR.read_text())]
    assert kinds == ["ConfigMap", "Secret", "PersistentVolumeClaim", "Deployment"], kinds
    # The check is strict: a misspelt field fails it.
    broken = tmp_path / "broken.yaml"
    broken.write_text(SIDECAR.read_text().replace("containerPort: 9464", "containerPortz: 9464"))
    assert validate(broken).returncode != 0


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_the_sidecars_configuration_serves_with_its_secrets(tmp_path):
    docs = {doc["kind"]: doc for doc in yaml.safe_load_all(SIDECAR.read_text())}
    port = free_port()
    # The ConfigMap's own settings, its side port beyond loopback (which needs its auth) among
    # them; only the paths the Pod mounts move into the scratch directory, and the port is free.
    text = docs["ConfigMap"]["data"]["toolgate.toml"]
    assert 'http_listen = "0.0.0.0:9464"' in text
    text = (text.replace("/var/lib/toolgate/", f"{tmp_path}/")
                .replace("/run/toolgate/", f"{tmp_path}/")
                .replace("0.0.0.0:9464", f"0.0.0.0:{port}"))
    config = tmp_path / "toolgate.toml"
    config.write_text(text)
    secret = docs["Secret"]["stringData"]
    # The token's digest in the configuration is the Secret's token's.
    digest = hashlib.sha256(secret["agent-token"].encode()).hexdigest()
    assert digest in config.read_text()
    key = subprocess.run([BIN, "keygen", "--name", "toolgate/agent", "--out", str(tmp_path / "k")],
                         capture_output=True, text=True, check=True)
    assert key.returncode == 0
    # A key of the form the Secret holds (its value there is a placeholder to replace).
    env = dict(os.environ, TOOLGATE_CHECKPOINT_KEY=(tmp_path / "k").read_text())
    env.pop("TOOLGATE_LISTEN", None)
    env.pop("TOOLGATE_HTTP_LISTEN", None)
    env.pop("TOOLGATE_DB", None)
    server = subprocess.Popen(
        [BIN, "serve", "--config", str(config)],
        env=env, stdout=subprocess.DEVNULL, stderr=open(tmp_path / "server.log", "w"),
    )
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/readyz", timeout=2) as answer:
                    assert answer.status == 200
                    break
            except OSError:
                assert server.poll() is None, (tmp_path / "server.log").read_text()
                assert time.monotonic() < deadline, (tmp_path / "server.log").read_text()
                time.sleep(0.1)
    finally:
        server.send_signal(signal.SIGTERM)
        assert server.wait(timeout=30) == 0, (tmp_path / "server.log").read_text()
    # Its log, written to a file, says where it serves, and holds no terminal colour codes.
    log = (tmp_path / "server.log").read_text()
    assert " serving grpc=unix:" in log and f'http="0.0.0.0:{port}"' in log and 'auth="on"' in log, log
    assert "\x1b[" not in log, log
    # It signed its last checkpoint with the Secret's key at shutdown.
    printed = subprocess.run([BIN, "checkpoint", "--db", str(tmp_path / "toolgate.db")],
                             capture_output=True, text=True)
    assert printed.returncode == 0 and printed.stdout.startswith("toolgate/agent\n"), printed


def systemd_analyze() -> str:
    tool = shutil.which("systemd-analyze")
    assert tool, "the unit's tests need systemd-analyze (Debian: apt-get install systemd)"
    return tool


def test_the_systemd_unit_verifies_and_is_hardened(tmp_path):
    # systemd-analyze verify checks that ExecStart's program exists: point it at the build.
    unit = tmp_path / "toolgate.service"
    unit.write_text(UNIT.read_text().replace("/usr/local/bin/toolgate", BIN))
    verified = subprocess.run([systemd_analyze(), "verify", str(unit)], capture_output=True, text=True)
    said = verified.stdout + verified.stderr
    assert verified.returncode == 0, said
    # Unknown or misspelt settings are only warnings to systemd: here they fail.
    assert "Unknown key" not in said and "Failed to parse" not in said, said
    exposure = subprocess.run(
        # The threshold is on systemd's 0–100 scale: 20 is an exposure of 2.0 ("OK").
        [systemd_analyze(), "security", "--offline=true", "--threshold=20", str(unit)],
        capture_output=True, text=True,
    )
    assert exposure.returncode == 0, exposure.stdout[-3000:]


def test_the_systemd_configuration_and_user_are_what_the_unit_needs(tmp_path):
    # The user and group the unit runs as, made by systemd-sysusers in a scratch root.
    (tmp_path / "root" / "etc").mkdir(parents=True)
    made = subprocess.run(
        [shutil.which("systemd-sysusers") or "systemd-sysusers", f"--root={tmp_path / 'root'}",
         str(SYSTEMD / "toolgate.sysusers")], capture_output=True, text=True)
    assert made.returncode == 0, made.stderr
    assert (tmp_path / "root" / "etc" / "passwd").read_text().startswith("toolgate:")
    assert "\nUser=toolgate\nGroup=toolgate\n" in UNIT.read_text()
    # The configuration serves with the unit's command line, its socket open to the group.
    text = (SYSTEMD / "toolgate.toml").read_text().replace("/run/toolgate/", f"{tmp_path}/")
    config = tmp_path / "toolgate.toml"
    config.write_text(text)
    server = subprocess.Popen(
        [BIN, "serve", "--config", str(config), "--db", str(tmp_path / "toolgate.db")],
        stdout=subprocess.DEVNULL, stderr=open(tmp_path / "server.log", "w"),
    )
    try:
        socket_path = tmp_path / "toolgate.sock"
        deadline = time.monotonic() + 30
        # The mode is set just after the bind: wait for it.
        while not (socket_path.exists() and socket_path.stat().st_mode & 0o777 == 0o660):
            assert server.poll() is None and time.monotonic() < deadline, (tmp_path / "server.log").read_text()
            time.sleep(0.05)
        decide = [BIN, "decide", "--server", f"unix:{socket_path}", "--tool", "read", "--actor", "agent/a"]
        # Reaching the socket is not a role: auth is on.
        anonymous = subprocess.run(decide, capture_output=True, text=True,
                                   env={k: v for k, v in os.environ.items() if k != "TOOLGATE_TOKEN"})
        assert anonymous.returncode == 2 and "set TOOLGATE_TOKEN" in anonymous.stderr, anonymous
        decided = subprocess.run(decide, capture_output=True, text=True,
                                 env=dict(os.environ, TOOLGATE_TOKEN="replace-me-agent"))
        assert decided.returncode == 0, decided.stdout + decided.stderr
    finally:
        server.send_signal(signal.SIGTERM)
        assert server.wait(timeout=30) == 0, (tmp_path / "server.log").read_text()
