// Starts the real toolgate server for the tests: the binary cargo built ($TOOLGATE_BIN), on
// free ports, over a fresh SQLite file, with the Python client's test configuration and policy
// (clients/python/tests), so that both clients are held to the same server.

import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { appendFileSync, copyFileSync, existsSync, mkdtempSync, openSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { after, before } from "node:test";

import { Toolgate } from "../src/index.js";

const here = path.dirname(fileURLToPath(import.meta.url));
/** The repository: $TOOLGATE_ROOT, or two folders above this package. */
export const ROOT = process.env.TOOLGATE_ROOT ?? path.resolve(here, "../../../..");
export const BIN = process.env.TOOLGATE_BIN ?? path.join(ROOT, "target/debug/toolgate");
const FIXTURES = path.join(ROOT, "clients/python/tests");

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

export interface Server {
  target: string;
  dir: string;
  db: string;
  process: ChildProcess;
  stop(): Promise<void>;
  /** `toolgate query --db … --json`, parsed. */
  trail(): Array<Record<string, any>>;
}

// The folders the tests made, removed when the test process exits.
const made: string[] = [];
process.once("exit", () => made.forEach((dir) => rmSync(dir, { recursive: true, force: true })));

/** A fresh folder, removed when the test process exits. */
export function tempDir(): string {
  const dir = mkdtempSync(path.join(tmpdir(), "toolgate-ts-"));
  made.push(dir);
  return dir;
}

/** A configuration file: the tests' own, with `extra` TOML appended. */
export function configWith(dir: string, extra: string): string {
  const file = path.join(dir, "extended.toml");
  copyFileSync(path.join(FIXTURES, "toolgate.toml"), file);
  appendFileSync(file, extra);
  return file;
}

/** An `[[auth.tokens]]` entry with role agent. */
export function tokenToml(id: string, token: string, actors: string[]): string {
  const digest = createHash("sha256").update(token).digest("hex");
  return `\n[[auth.tokens]]\nid = "${id}"\nsha256 = "${digest}"\nroles = ["agent"]\nactors = ${JSON.stringify(actors)}\n`;
}

export async function start(options: { dir?: string; config?: string; policy?: string; unixSocket?: boolean } = {}): Promise<Server> {
  if (!existsSync(BIN)) throw new Error(`no toolgate binary at ${BIN}: run cargo build or set TOOLGATE_BIN`);
  const dir = options.dir ?? tempDir();
  const db = path.join(dir, "trail.db");
  const [grpcPort, httpPort] = [await freePort(), await freePort()];
  const target = options.unixSocket ? `unix:${path.join(dir, "toolgate.sock")}` : `127.0.0.1:${grpcPort}`;
  const log = openSync(path.join(dir, "server.log"), "a");
  const child = spawn(BIN, [
    "serve", "--config", options.config ?? path.join(FIXTURES, "toolgate.toml"), "--db", db,
    "--policy", options.policy ?? path.join(FIXTURES, "policy.cedar"), "--listen", target,
    "--http-listen", `127.0.0.1:${httpPort}`,
  ], { stdio: ["ignore", "ignore", log] });
  const deadline = Date.now() + 30_000;
  for (;;) {
    try {
      const ready = await fetch(`http://127.0.0.1:${httpPort}/readyz`);
      if (ready.status === 200) break;
    } catch {
      // not yet listening
    }
    if (child.exitCode !== null || Date.now() > deadline) {
      child.kill();
      throw new Error(`the server did not start; see ${path.join(dir, "server.log")}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  return {
    target, dir, db, process: child,
    stop: () => new Promise((resolve) => {
      if (child.exitCode !== null) return resolve();
      child.once("exit", () => resolve());
      child.kill("SIGTERM");
    }),
    trail: () => {
      const out = spawnSync(BIN, ["query", "--db", db, "--json"], { encoding: "utf8" });
      return out.stdout.split("\n").filter(Boolean).map((line) => JSON.parse(line));
    },
  };
}

/** A person refuses, in toolgate itself, the first call that waits for approval. */
export async function rejectPending(server: Server, approver = "bob"): Promise<void> {
  const { default: grpc } = await import("@grpc/grpc-js");
  const protoLoader = await import("@grpc/proto-loader");
  const { descriptor } = await import("../src/generated/descriptor.js");
  const definition = protoLoader.fromJSON(descriptor as object, { keepCase: true, longs: Number, enums: String, defaults: true });
  const loaded = grpc.loadPackageDefinition(definition) as any;
  const approvals = new loaded.toolgate.v1.Approvals(server.target, grpc.credentials.createInsecure());
  const call = <T>(method: string, request: object) => new Promise<T>((resolve, reject) =>
    approvals[method](request, (e: Error | null, r: T) => (e ? reject(e) : resolve(r))));
  try {
    const { approvals: [pending] } = await call<{ approvals: Array<{ decision_id: string }> }>("ListPending", {});
    await call("Reject", { decision_id: pending.decision_id, approver, comment: "no" });
  } finally {
    approvals.close();
  }
}

/** One server for a suite's tests (started before them, stopped after), a client of it made per
 * test in `sessionId`, and the trail's events after a point in it. */
export function sharedServer(sessionId = "unused") {
  let server: Server;
  before(async () => {
    server = await start();
  });
  after(async () => {
    await server.stop();
  });
  return {
    get server(): Server {
      return server;
    },
    client: (target?: string) =>
      new Toolgate({ target: target ?? server.target, sessionId, actorId: "agent-1", rpcTimeoutMs: 3_000 }),
    /** The last event's seq: what a test's `since` starts after. */
    last: () => server.trail().at(-1)?.seq ?? 0,
    since: (seq: number) => server.trail().filter((e) => e.seq > seq),
  };
}
