// examples/frameworks/vercel_ai_agent.mjs, run against a server with the example agent's
// configuration: its trail holds a denial, an approval and an allowed call. The example is run
// from inside this package (copied into build/), where it imports the package by its own name
// and finds `ai` and `zod` among the package's dev dependencies.

import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { copyFileSync, mkdirSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { after, before, test } from "node:test";

import { ROOT, type Server, start } from "./server.js";

const here = path.dirname(fileURLToPath(import.meta.url));
const example = path.join(ROOT, "examples/frameworks/vercel_ai_agent.mjs");

let server: Server;
before(async () => {
  server = await start({
    config: path.join(ROOT, "examples/agent/toolgate.toml"),
    policy: path.join(ROOT, "examples/agent/policy.cedar"),
  });
});
after(async () => {
  await server.stop();
});

test("the Vercel AI SDK example runs offline and leaves a denial, an approval and an allowed call", async () => {
  const copy = path.join(here, "../examples/vercel_ai_agent.mjs");
  mkdirSync(path.dirname(copy), { recursive: true });
  copyFileSync(example, copy);
  const { stdout } = await promisify(execFile)(process.execPath,
    [copy, "--target", server.target, "--file", path.join(ROOT, "README.md")], { timeout: 60_000 });
  assert.match(stdout, /waiting for a person: deploy/);
  assert.match(stdout, /model: done\./);
  const trail = server.trail();
  const decided = trail.filter((e) => e.kind === "decision").map((e) => [e.tool, e.outcome]);
  assert.deepEqual(decided, [["read", "allow"], ["shred", "deny"], ["deploy", "require_approval"]]);
  assert.deepEqual(trail.filter((e) => e.kind === "approval_approved").map((e) => [e.tool, e.actor_id]), [["deploy", "reviewer"]]);
  assert.deepEqual(trail.filter((e) => e.kind === "execution").map((e) => e.tool), ["read", "deploy"]);
});
