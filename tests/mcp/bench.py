"""The MCP gateway's added latency per tools/call: the same server called directly and through
`toolgate mcp`, side by side in one run, over raw stdio JSON-RPC (no SDK, so that the client
adds as little as it can, and the same to both arms).

    target/python-venv/bin/python tests/mcp/bench.py [--calls 1000] [--durability full|normal]

Prints p50, p90, p99 and p99.9 of each arm and the differences. The calls alternate between the
arms in rounds, so that a noisy neighbour touches both alike. The gateway runs its embedded
sidecar with `--durability` (full, by default: every decision and every execution fsynced
before the answer)."""

import argparse
import json
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SERVER = [str(ROOT / "target/mcp-node/node_modules/.bin/mcp-server-everything")]


class Peer:
    def __init__(self, args, cwd):
        self.proc = subprocess.Popen(args, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.DEVNULL, cwd=cwd, bufsize=0)
        self.next_id = 0
        self.request("initialize", {"protocolVersion": "2025-11-25", "capabilities": {},
                                    "clientInfo": {"name": "bench", "version": "0"}})
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def send(self, message):
        self.proc.stdin.write((json.dumps(message) + "\n").encode())

    def request(self, method, params):
        self.next_id += 1
        self.send({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params})
        while True:
            message = json.loads(self.proc.stdout.readline())
            if message.get("id") == self.next_id and "method" not in message:
                return message

    def close(self):
        self.proc.stdin.close()
        self.proc.wait(timeout=30)


def timed_call(peer, n):
    started = time.perf_counter_ns()
    answer = peer.request("tools/call", {"name": "echo", "arguments": {"message": f"call {n}"}})
    elapsed = (time.perf_counter_ns() - started) / 1000
    assert answer["result"]["content"][0]["text"] == f"Echo: call {n}", answer
    return elapsed


def quantile(values, q):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--calls", type=int, default=1000)
    parser.add_argument("--round", type=int, default=50)
    parser.add_argument("--toolgate", default=str(ROOT / "target/release/toolgate"))
    parser.add_argument("--durability", default="full", choices=["full", "normal"])
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as dir:
        policy = Path(dir) / "policy.cedar"
        policy.write_text('@id("bench.permit")\npermit (principal, action, resource);\n')
        config = Path(dir) / "toolgate.toml"
        # The default loop guard would deny the sixth identical call: the calls differ anyway.
        config.write_text(f'durability = "{args.durability}"\n')
        direct = Peer(SERVER, dir)
        gated = Peer([args.toolgate, "mcp", "--name", "everything", "--db", "bench.db",
                      "--config", str(config), "--policy", str(policy), "--", *SERVER], dir)
        for n in range(20):  # warm both up
            timed_call(direct, n), timed_call(gated, n)
        times = {"direct": [], "gateway": []}
        n = 0
        while len(times["gateway"]) < args.calls:
            for name, peer in (("direct", direct), ("gateway", gated)):
                for _ in range(args.round):
                    n += 1
                    times[name].append(timed_call(peer, n))
        direct.close()
        gated.close()
    print(f"{args.calls} echo calls per arm, in alternating rounds of {args.round}; "
          f"durability = {args.durability!r}; microseconds")
    print(f"{'':10}{'p50':>10}{'p90':>10}{'p99':>10}{'p99.9':>10}{'mean':>10}")
    for name, values in times.items():
        row = [quantile(values, q) for q in (0.5, 0.9, 0.99, 0.999)] + [statistics.mean(values)]
        print(f"{name:10}" + "".join(f"{v:10.0f}" for v in row))
    added = [quantile(times["gateway"], q) - quantile(times["direct"], q) for q in (0.5, 0.9, 0.99, 0.999)]
    added.append(statistics.mean(times["gateway"]) - statistics.mean(times["direct"]))
    print(f"{'added':10}" + "".join(f"{v:10.0f}" for v in added))


if __name__ == "__main__":
    main()
