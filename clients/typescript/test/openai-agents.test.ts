// The OpenAI Agents SDK (JavaScript) adapter with the SDK's own package (Agent, run, tool, tool
// guardrails, interruptions and RunState) and its own ScriptedModel, against the real server: a
// denied call never runs and the model is told why, an allowed one runs and is on the trail, an
// approval interrupts the run and resumes it with the person's answer (decided once), a blanket
// approval does not stand for toolgate, a throwing tool is recorded as failed, a model reusing a
// waiting call's id gets nothing from it, and a sidecar that cannot be reached fails the run.

import assert from "node:assert/strict";
import { describe, test } from "node:test";

import { Agent, run, setTracingDisabled, tool } from "@openai/agents-core";
import {
  assistantMessage, functionCall, modelResponder, type RecordedModelCall, ScriptedModel,
} from "@openai/agents-core/testing";
import { z } from "zod";

import { ToolgateGuard } from "../src/integrations/openai-agents.js";
import { freePort, rejectPending, sharedServer } from "./server.js";

setTracingDisabled(true);

/** What the model was last handed back by a tool. */
function lastResult(call: RecordedModelCall): string {
  const input = call.request.input as Array<{ type?: string; output?: unknown }>;
  const given = [...input].reverse().find((item) => item.type === "function_call_result");
  const output = given?.output as { text?: string } | string | undefined;
  return typeof output === "string" ? output : output?.text ?? JSON.stringify(output);
}

/** A model that makes one tool call, then says what the tool gave back. */
function scripted(name: string, args: Record<string, unknown>, callId = "call-1") {
  return new ScriptedModel([
    [functionCall(name, args, { callId })],
    modelResponder((call) => [assistantMessage(`the tool said: ${lastResult(call)}`)]),
  ]);
}

function tools(ran: string[], guard?: ToolgateGuard) {
  const read = {
    name: "read", description: "Reads a file", parameters: z.object({ path: z.string() }),
    execute: async ({ path }: { path: string }) => {
      if (path === "missing") throw new Error(`no such file: ${path}`);
      if (path === "long") return "z".repeat(5000);
      ran.push(`read ${path}`);
      return `contents of ${path}`;
    },
  };
  return [
    // The read through guard.define, so that its own errors are seen.
    guard ? guard.define(read) : tool(read),
    tool({
      name: "deploy", description: "Deploys", parameters: z.object({ env: z.string() }),
      execute: async ({ env }) => {
        ran.push(`deploy ${env}`);
        return `deployed to ${env}`;
      },
    }),
    tool({
      name: "shred", description: "Shreds a file", parameters: z.object({ path: z.string() }),
      execute: async ({ path }) => {
        ran.push(`shred ${path}`);
        return "shredded";
      },
    }),
  ];
}

describe("the OpenAI Agents SDK (JavaScript) adapter", () => {
  const suite = sharedServer("unused");
  const { client, since, last } = suite;
  const context = { sessionId: "run-7" };
  const agentWith = (guard: ToolgateGuard, model: ScriptedModel, ran: string[]) =>
    guard.agent(new Agent({ name: "assistant", model, tools: tools(ran, guard) }));

  test("a denied call never runs and the model is told why", async () => {
    const ran: string[] = [];
    const tg = client();
    const from = last();
    const guard = new ToolgateGuard(tg, { allowBash: true });
    const result = await run(agentWith(guard, scripted("shred", { path: "/etc/passwd" }), ran), "shred it", { context });
    tg.close();
    assert.deepEqual(ran, []);
    assert.equal(result.finalOutput, "the tool said: toolgate denied this call: unknown tool: shred");
    const decided = since(from).filter((e) => e.kind === "decision");
    assert.deepEqual(decided.map((e) => [e.tool, e.outcome, e.session_id]), [["shred", "deny", "run-7"]]);
  });

  test("an allowed call runs and both records are on the trail", async () => {
    const ran: string[] = [];
    const tg = client();
    const from = last();
    const guard = new ToolgateGuard(tg, { allowBash: true });
    const result = await run(agentWith(guard, scripted("read", { path: "notes.txt" }), ran), "read it", { context });
    tg.close();
    assert.deepEqual(ran, ["read notes.txt"]);
    assert.equal(result.finalOutput, "the tool said: contents of notes.txt");
    const events = since(from);
    const decided = events.filter((e) => e.kind === "decision");
    assert.deepEqual(decided.map((e) => e.outcome), ["allow"], "decided once, for needsApproval and the guardrail");
    const executed = events.filter((e) => e.kind === "execution");
    assert.deepEqual(executed.map((e) => [e.decision_id, e.status]), [[decided[0].decision_id, "ok"]]);
  });

  test("an approval interrupts the run and resumes it with the person's answer, decided once", async () => {
    const ran: string[] = [];
    const tg = client();
    const from = last();
    const guard = new ToolgateGuard(tg, { allowBash: true });
    const agent = agentWith(guard, scripted("deploy", { env: "prod" }), ran);
    const paused = await run(agent, "deploy", { context });
    const [waiting] = paused.interruptions;
    assert.ok(waiting, "the run stopped for a person");
    assert.deepEqual(ran, []);
    guard.approve(paused.state, waiting, "alice");
    const result = await run(agent, paused.state);
    tg.close();
    assert.deepEqual(ran, ["deploy prod"]);
    assert.equal(result.finalOutput, "the tool said: deployed to prod");
    const events = since(from);
    const decided = events.filter((e) => e.kind === "decision");
    assert.deepEqual(decided.map((e) => e.outcome), ["require_approval"]);
    assert.deepEqual(events.filter((e) => e.kind === "approval_approved").map((e) => e.actor_id), ["alice"]);
    assert.deepEqual(events.filter((e) => e.kind === "execution").map((e) => e.decision_id), [decided[0].decision_id]);
  });

  test("a refusal does not run the call, the model is told, and the approval is withdrawn", async () => {
    const ran: string[] = [];
    const tg = client();
    const from = last();
    const guard = new ToolgateGuard(tg, { allowBash: true });
    const agent = agentWith(guard, scripted("deploy", { env: "prod" }), ran);
    const paused = await run(agent, "deploy", { context });
    await guard.reject(paused.state, paused.interruptions[0], "not today");
    const result = await run(agent, paused.state);
    tg.close();
    assert.deepEqual(ran, []);
    assert.equal(result.finalOutput, "the tool said: a person refused this call: not today");
    const events = since(from);
    assert.equal(events.filter((e) => e.kind === "approval_withdrawn").length, 1);
    assert.equal(events.filter((e) => e.kind === "execution").length, 0);
  });

  test("a call refused in toolgate does not run on the SDK's approval", async () => {
    const ran: string[] = [];
    const tg = client();
    const from = last();
    const guard = new ToolgateGuard(tg, { allowBash: true });
    const agent = agentWith(guard, scripted("deploy", { env: "prod" }), ran);
    const paused = await run(agent, "deploy", { context });
    await rejectPending(suite.server);
    guard.approve(paused.state, paused.interruptions[0], "alice");
    const result = await run(agent, paused.state);
    tg.close();
    assert.deepEqual(ran, [], "the deploy ran on the SDK's approval after toolgate's refusal");
    assert.match(String(result.finalOutput), /approval was rejected by bob/);
    assert.equal(since(from).filter((e) => e.kind === "execution").length, 0);
  });

  test("a blanket approval in the SDK does not let a second call run on it", async () => {
    const ran: string[] = [];
    const tg = client();
    const guard = new ToolgateGuard(tg, { allowBash: true });
    const model = new ScriptedModel([
      [functionCall("deploy", { env: "staging" }, { callId: "call-1" })],
      [functionCall("deploy", { env: "prod" }, { callId: "call-2" })],
      modelResponder((call) => [assistantMessage(`the tool said: ${lastResult(call)}`)]),
    ]);
    const agent = agentWith(guard, model, ran);
    const paused = await run(agent, "deploy both", { context });
    paused.state.approve(paused.interruptions[0], { alwaysApprove: true });
    const result = await run(agent, paused.state);
    tg.close();
    assert.deepEqual(ran, ["deploy staging"], "the prod deploy ran on the staging deploy's approval");
    assert.match(String(result.finalOutput), /^the tool said: toolgate: a person must approve this call: /);
  });

  test("a tool that throws is recorded as failed", async () => {
    const ran: string[] = [];
    const tg = client();
    const from = last();
    const guard = new ToolgateGuard(tg, { allowBash: true });
    await run(agentWith(guard, scripted("read", { path: "missing" }), ran), "read it", { context });
    tg.close();
    const executed = since(from).filter((e) => e.kind === "execution");
    assert.deepEqual(executed.map((e) => e.status), ["error"]);
    assert.match(executed[0].error, /no such file: missing/);
  });

  test("a model that reuses a waiting call's id cannot run another tool on its decision", async () => {
    const ran: string[] = [];
    const tg = client();
    const from = last();
    const guard = new ToolgateGuard(tg, { allowBash: true });
    const waiting = await run(agentWith(guard, scripted("deploy", { env: "prod" }, "same"), ran), "deploy", { context });
    assert.ok(waiting.interruptions.length === 1);
    // The next run: the model calls shred under the waiting deploy's id.
    const agent = agentWith(guard, scripted("shred", { path: "notes.txt" }, "same"), ran);
    const result = await run(agent, "never mind", { context });
    for (const item of result.interruptions) guard.approve(result.state, item, "alice");
    if (result.interruptions.length > 0) await run(agent, result.state);
    tg.close();
    assert.ok(!ran.includes("shred notes.txt"), "the shred ran on the deploy's decision");
    const decided = since(from).filter((e) => e.kind === "decision").map((e) => [e.tool, e.outcome]);
    assert.deepEqual(decided, [["deploy", "require_approval"], ["shred", "deny"]]);
  });

  test("output past the limit reaches the model cut", async () => {
    const ran: string[] = [];
    const tg = client();
    const guard = new ToolgateGuard(tg, { allowBash: true });
    const result = await run(agentWith(guard, scripted("read", { path: "long" }), ran), "read it", { context });
    tg.close();
    const given = String(result.finalOutput);
    const count = (given.match(/z/g) ?? []).length;
    assert.ok(count >= 40 && count <= 50, given);
  });

  test("a sidecar that cannot be reached fails the run: the tool never runs", async () => {
    const ran: string[] = [];
    const tg = client(`127.0.0.1:${await freePort()}`);
    const guard = new ToolgateGuard(tg, { allowBash: true });
    await assert.rejects(run(agentWith(guard, scripted("read", { path: "notes.txt" }), ran), "read it", { context }));
    tg.close();
    assert.deepEqual(ran, []);
  });
});
