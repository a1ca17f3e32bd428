// The TypeScript client against the real server: each outcome through guard and tool, and
// each failure with what it means for whether the tool ran (README.md's table).

import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { after, before, describe, test } from "node:test";

import * as grpc from "@grpc/grpc-js";
import * as protoLoader from "@grpc/proto-loader";

import {
  Denied, InvalidRequest, NotRecorded, PermissionDenied, ToolTimedOut, Toolgate, Unavailable,
  Violation,
} from "../src/index.js";
import type { ProtoGrpcType as ApprovalsProto } from "../src/generated/approvals.js";
import { descriptor } from "../src/generated/descriptor.js";
import { type Server, configWith, start, tempDir, tokenToml } from "./server.js";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function client(server: Server, options: Partial<ConstructorParameters<typeof Toolgate>[0]> = {}) {
  return new Toolgate({ target: server.target, sessionId: "t1", actorId: "agent-1", ...options });
}

/** Approves the first pending approval once there is one, through the generated stubs. */
async function approveWhenAsked(server: Server, approver: string) {
  const definition = protoLoader.fromJSON(descriptor as object, {
    keepCase: true, longs: Number, enums: String, defaults: true,
  });
  const loaded = grpc.loadPackageDefinition(definition) as unknown as ApprovalsProto;
  const approvals = new loaded.toolgate.v1.Approvals(server.target, grpc.credentials.createInsecure());
  const call = <T>(method: "ListPending" | "Approve", request: object) => new Promise<T>((resolve, reject) =>
    (approvals[method] as Function).call(approvals, request, (e: Error | null, r: T) => (e ? reject(e) : resolve(r))));
  try {
    for (;;) {
      const { approvals: pending } = await call<{ approvals: Array<{ decision_id: string }> }>("ListPending", {});
      if (pending.length > 0) {
        await call("Approve", { decision_id: pending[0].decision_id, approver, comment: "ok" });
        return;
      }
      await sleep(50);
    }
  } finally {
    approvals.close();
  }
}

describe("against one server", () => {
  let server: Server;
  let tg: Toolgate;
  before(async () => {
    server = await start();
    tg = client(server);
  });
  after(async () => {
    tg.close();
    await server.stop();
  });

  test("an allowed call runs and its output comes back cut to the decision's limit", async () => {
    const result = await tg.guard("read", { path: "a" }, () => "é".repeat(120));
    assert.equal(result.ran, true);
    assert.equal(result.output, "é".repeat(50));
    assert.equal(result.truncated, true);
    assert.equal(result.report?.resultBytes, 240, "the whole output's size");
  });

  test("a denial is a result for the model, or Denied", async () => {
    let ran = false;
    const result = await tg.guard("write", { path: "a" }, () => { ran = true; });
    assert.equal(result.ran, false);
    assert.match(result.forModel(), /^\[toolgate: deny\] tool requires allow_write=true: write \(policies: writes-need-allow-write\)$/);
    await assert.rejects(tg.guard("write", { path: "a" }, () => "", { raiseOnDeny: true }), Denied);
    assert.equal(ran, false);
  });

  test("a rewrite runs with the rewritten arguments, a dry run with the dry runner", async () => {
    const seen: unknown[] = [];
    const rewritten = await tg.guard("rm", { path: "build/" }, (args) => { seen.push(args); return "removed"; },
      { allowWrite: true });
    const dry = await tg.guard("migrate", { to: "v2" }, () => "migrated", {
      allowWrite: true, dryRunner: (args) => `would migrate to ${args.to}`,
    });
    assert.deepEqual(seen, [{ path: "build/", interactive: true }]);
    assert.equal(rewritten.outcome, "rewrite");
    assert.equal(dry.output, "would migrate to v2");
  });

  test("outputs of any type are coerced before they are sent", async () => {
    const bytes = await tg.guard("read", { path: "b" }, () => Buffer.from([0x63, 0x61, 0x66, 0xc3, 0xa9, 0xff]));
    const object = await tg.guard("read", { path: "o" }, () => ({ n: 1n, list: [1, 2] }));
    assert.equal(bytes.output, "café\ufffd");
    assert.equal(object.output, '{"n":"1","list":[1,2]}');
  });

  test("the tool's own error is reported and thrown again", async () => {
    await assert.rejects(tg.guard("read", { path: "missing" }, () => { throw new Error("ENOENT: missing"); }),
      /ENOENT: missing/);
    const execution = server.trail().filter((e) => e.kind === "execution").at(-1);
    assert.equal(execution?.status, "error");
    assert.equal(execution?.error, "ENOENT: missing");
  });

  test("a tool past the decision's timeout has its signal aborted and is reported", async () => {
    let aborted = false;
    const slow = (_args: unknown, { signal }: { signal: AbortSignal }) => new Promise((resolve) => {
      const timer = setTimeout(() => resolve("late"), 3000);
      signal.addEventListener("abort", () => { aborted = true; clearTimeout(timer); resolve("stopped"); });
    });
    await assert.rejects(tg.guard("read", { path: "slow" }, slow, { timeoutMs: 200 }), ToolTimedOut);
    assert.equal(aborted, true);
    const execution = server.trail().filter((e) => e.kind === "execution").at(-1);
    assert.equal(execution?.status, "timeout");
    assert.equal(execution?.error, "ran out its 200 ms");
  });

  test("a wrapped function is a guarded tool; a second report is a Violation", async () => {
    const read = tg.tool("read", async (args: { path: string }) => `read ${args.path}`);
    assert.equal(await read({ path: "c" }), "read c");
    const decision = await tg.decide("read", { path: "d" });
    await tg.execute(decision, decision.args, { output: "once", durationUs: 5 });
    await assert.rejects(tg.execute(decision, decision.args, { output: "again", durationUs: 6 }), Violation);
    const retried = await tg.execute(decision, decision.args, { output: "once", durationUs: 5 });
    assert.equal(retried.violation, "", "an exact repeat is answered as the first");
  });

  test("a malformed request is an InvalidRequest naming the field", async () => {
    await assert.rejects(tg.decide("", { path: "a" }), (e: unknown) =>
      e instanceof InvalidRequest && /tool/.test(e.message));
  });
});

test("an approved call says who approved it; an unanswered one is withdrawn", async () => {
  const server = await start();
  const tg = client(server, { approvalTimeoutMs: 20_000 });
  const quick = client(server, { approvalTimeoutMs: 500 });
  try {
    const verdict = approveWhenAsked(server, "bob");
    const approved = await tg.guard("deploy", { env: "prod" }, () => "deployed", { allowBash: true });
    await verdict;
    assert.equal(approved.ran, true);
    assert.equal(approved.approvedBy, "bob");
    const abandoned = await quick.guard("deploy", { env: "prod" }, () => "no", { allowBash: true });
    assert.equal(abandoned.ran, false);
    assert.equal(abandoned.approval?.state, "withdrawn");
    assert.equal(abandoned.reason, "no approval within 0.5 s: withdrawn");
    const kinds = server.trail().map((e) => e.kind).filter((k) => k.startsWith("approval_"));
    assert.deepEqual(kinds, ["approval_requested", "approval_approved", "approval_requested", "approval_withdrawn"]);
  } finally {
    tg.close();
    quick.close();
    await server.stop();
  }
});

test("a stopped server is Unavailable within the deadline, and nothing runs", async () => {
  const server = await start();
  const tg = client(server, { rpcTimeoutMs: 1000 });
  let ran = false;
  server.process.kill("SIGSTOP");
  try {
    const started = Date.now();
    await assert.rejects(tg.guard("read", { path: "a" }, () => { ran = true; }), Unavailable);
    assert.ok(Date.now() - started < 5000);
    assert.equal(ran, false);
  } finally {
    server.process.kill("SIGCONT");
    tg.close();
    await server.stop();
  }
});

test("a run whose report is lost is NotRecorded, and its retry records it once", async () => {
  const dir = tempDir();
  let server = await start({ dir, unixSocket: true });
  const tg = client(server);
  const marker = path.join(dir, "ran.txt");
  setTimeout(() => server.process.kill("SIGTERM"), 300);
  const lost = await tg.guard("read", { path: "a" }, async () => {
    await sleep(1000);
    writeFileSync(marker, "written");
    return "the output";
  }).then(() => assert.fail("recorded"), (e: unknown) => e);
  assert.ok(lost instanceof NotRecorded, String(lost));
  assert.equal(readFileSync(marker, "utf8"), "written", "the tool ran");
  assert.equal(lost.output, "the output");
  assert.equal(lost.status, "ok");
  await server.stop();
  server = await start({ dir, unixSocket: true });
  try {
    const first = await lost.retry();
    const again = await lost.retry();
    assert.equal(first.output, "the output");
    assert.equal(again.report?.seq, first.report?.seq);
    const executions = server.trail().filter((e) => e.kind === "execution");
    assert.equal(executions.length, 1);
  } finally {
    tg.close();
    await server.stop();
  }
});

test("a bearer token is sent when auth is on", async () => {
  const dir = tempDir();
  const server = await start({ dir, config: configWith(dir, tokenToml("ts", "ts-agent-token", ["agent-1"])) });
  const anonymous = client(server);
  const tg = client(server, { token: "ts-agent-token" });
  try {
    await assert.rejects(anonymous.guard("read", { path: "a" }, () => ""), (e: unknown) =>
      e instanceof PermissionDenied && e.code === grpc.status.UNAUTHENTICATED);
    assert.equal((await tg.guard("read", { path: "a" }, () => "ok")).ran, true);
  } finally {
    anonymous.close();
    tg.close();
    await server.stop();
  }
});

test("mutual TLS with a client certificate, made with openssl", async () => {
  const dir = tempDir();
  const at = (name: string) => path.join(dir, name);
  const openssl = (...args: string[]) => execFileSync("openssl", args, { stdio: "ignore" });
  for (const ca of ["server-ca", "client-ca"]) {
    openssl("req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
      "-keyout", at(`${ca}.key`), "-out", at(`${ca}.pem`), "-days", "1", "-subj", `/CN=${ca}`);
  }
  const issue = (name: string, ca: string, ext: string) => {
    openssl("req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
      "-keyout", at(`${name}.key`), "-out", at(`${name}.csr`), "-subj", `/CN=${name}`);
    writeFileSync(at(`${name}.ext`), ext);
    openssl("x509", "-req", "-in", at(`${name}.csr`), "-CA", at(`${ca}.pem`), "-CAkey", at(`${ca}.key`),
      "-CAcreateserial", "-out", at(`${name}.pem`), "-days", "1", "-extfile", at(`${name}.ext`));
  };
  issue("server", "server-ca", "subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\n");
  issue("ts-agent", "client-ca", "extendedKeyUsage=clientAuth\n");
  const config = configWith(dir, `
[[auth.certificates]]
subject = "ts-agent"
roles = ["agent"]
actors = ["agent-1"]

[tls]
cert_file = "${at("server.pem")}"
key_file = "${at("server.key")}"
client_ca_file = "${at("client-ca.pem")}"
`);
  const server = await start({ dir, config });
  const trust = readFileSync(at("server-ca.pem"));
  const without = client(server, { credentials: grpc.credentials.createSsl(trust), rpcTimeoutMs: 3000 });
  const tg = client(server, {
    credentials: grpc.credentials.createSsl(trust, readFileSync(at("ts-agent.key")), readFileSync(at("ts-agent.pem"))),
  });
  try {
    await assert.rejects(without.guard("read", { path: "a" }, () => ""), Unavailable);
    const result = await tg.guard("read", { path: "a" }, () => "over mutual TLS");
    assert.equal(result.output, "over mutual TLS");
  } finally {
    without.close();
    tg.close();
    await server.stop();
  }
});

test("a wait for approval cut short by a restart is resumed from its decision", async () => {
  const dir = tempDir();
  let server = await start({ dir, unixSocket: true });
  const tg = client(server, { approvalTimeoutMs: 30_000 });
  setTimeout(() => server.process.kill("SIGTERM"), 500);
  const cut = await tg.guard("deploy", { env: "prod" }, () => "deployed", { allowBash: true })
    .then(() => assert.fail("ran"), (e: unknown) => e);
  assert.ok(cut instanceof Unavailable && cut.decision, String(cut));
  await server.stop();
  server = await start({ dir, unixSocket: true });
  try {
    const verdict = approveWhenAsked(server, "human");
    const result = await tg.resume(cut.decision, () => "deployed");
    await verdict;
    assert.equal(result.ran, true);
    assert.equal(result.approvedBy, "human");
  } finally {
    tg.close();
    await server.stop();
  }
});
