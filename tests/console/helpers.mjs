// What the console's browser tests share: a free port, waiting for a condition, and a
// `toolgate serve` started and waited for until its side port is ready.

import { spawn } from "node:child_process";
import { createServer } from "node:net";

export async function freePort() {
  return new Promise((resolve) => {
    const probe = createServer().listen(0, "127.0.0.1", () => {
      const { port } = probe.address();
      probe.close(() => resolve(port));
    });
  });
}

export async function until(what, check, seconds = 20) {
  const deadline = Date.now() + seconds * 1000;
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** `bin serve --config config` (with `env` added), once `side`/readyz answers; its log on failure. */
export async function serve(bin, config, side, env = {}) {
  const server = spawn(bin, ["serve", "--config", config], {
    stdio: ["ignore", "ignore", "pipe"],
    env: { ...process.env, ...env },
  });
  let log = "";
  server.stderr.on("data", (d) => (log += d));
  await until("the side port", async () => {
    try {
      return (await fetch(`${side}/readyz`)).ok;
    } catch {
      return false;
    }
  }).catch((e) => {
    throw new Error(`${e.message}\n${log}`);
  });
  return server;
}
