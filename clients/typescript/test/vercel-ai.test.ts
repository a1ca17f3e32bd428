// The Vercel AI SDK adapter with the SDK's own package (generateText, streamText, tools,
// tool approval) and its own mock language model, against the real server: a denied call never
// runs and the model is told why, an allowed one runs and is on the trail, an approval stops
// the run and resumes it with the person's answer, a throwing tool is recorded as failed, a
// streaming tool is recorded once it ends, and a sidecar that cannot be reached fails the call.

import assert from "node:assert/strict";
import { describe, test } from "node:test";

import { generateText, type ModelMessage, stepCountIs, streamText, simulateReadableStream, tool } from "ai";
import { MockLanguageModelV3 } from "ai/test";
import { z } from "zod";

import { guardTools } from "../src/integrations/vercel-ai.js";
import { freePort, rejectPending, sharedServer } from "./server.js";

const usage = {
  inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: 0 },
  outputTokens: { total: 1, text: 1, reasoning: 0 },
};

/** What the model was last handed back by a tool, if its prompt ends with a tool's result. */
function lastResult(prompt: Array<{ role: string; content: unknown }>): unknown {
  const last = prompt.at(-1);
  if (last?.role !== "tool") return undefined;
  return (last.content as Array<{ type: string; output?: unknown }>).find((p) => p.type === "tool-result")?.output;
}

/** A model that makes one tool call, then says what the tool gave back. */
function scripted(toolName: string, input: object) {
  const stop = (reason: "tool-calls" | "stop") => ({ unified: reason, raw: undefined });
  // The tool call to make, or the text to say, for a prompt.
  const next = (prompt: unknown) => {
    const result = lastResult(prompt as never);
    return result === undefined
      ? { call: { type: "tool-call" as const, toolCallId: "call-1", toolName, input: JSON.stringify(input) }, text: "" }
      : { call: undefined, text: `the tool said: ${JSON.stringify(result)}` };
  };
  return new MockLanguageModelV3({
    doGenerate: async ({ prompt }) => {
      const { call, text } = next(prompt);
      return call
        ? { content: [call], finishReason: stop("tool-calls"), usage, warnings: [] }
        : { content: [{ type: "text", text }], finishReason: stop("stop"), usage, warnings: [] };
    },
    doStream: async ({ prompt }) => {
      const { call, text } = next(prompt);
      const chunks = call
        ? [{ type: "stream-start", warnings: [] }, call, { type: "finish", finishReason: stop("tool-calls"), usage }]
        : [{ type: "stream-start", warnings: [] }, { type: "text-start", id: "t" },
          { type: "text-delta", id: "t", delta: text }, { type: "text-end", id: "t" },
          { type: "finish", finishReason: stop("stop"), usage }];
      return { stream: simulateReadableStream({ chunks: chunks as never[] }) };
    },
  });
}

/** The application's tools; each records in `ran` that it ran. */
function tools(ran: string[]) {
  return {
    read: tool({
      description: "Reads a file", inputSchema: z.object({ path: z.string() }),
      execute: async ({ path }) => {
        if (path === "missing") throw new Error(`no such file: ${path}`);
      if (path === "long") return "z".repeat(5000);
        ran.push(`read ${path}`);
        return `contents of ${path}`;
      },
    }),
    deploy: tool({
      description: "Deploys", inputSchema: z.object({ env: z.string() }),
      execute: async ({ env }) => {
        ran.push(`deploy ${env}`);
        return `deployed to ${env}`;
      },
    }),
    shred: tool({
      description: "Shreds a file", inputSchema: z.object({ path: z.string() }),
      execute: async ({ path }) => {
        ran.push(`shred ${path}`);
        return "shredded";
      },
    }),
    grep: tool({
      description: "Searches, streaming what it finds", inputSchema: z.object({ q: z.string() }),
      async *execute({ q }) {
        ran.push(`grep ${q}`);
        yield { status: "searching" };
        yield { status: "done", hits: [`${q}-1`] };
      },
    }),
  };
}

describe("the Vercel AI SDK adapter", () => {
  const suite = sharedServer("chat-7");
  const { client, since, last } = suite;

  test("a denied call never runs and the model is told why", async () => {
    const ran: string[] = [];
    const tg = client();
    const from = last();
    const model = scripted("shred", { path: "/etc/passwd" });
    const result = await generateText({
      model, tools: guardTools(tools(ran), tg).tools, stopWhen: stepCountIs(3), prompt: "shred it",
    });
    tg.close();
    assert.deepEqual(ran, []);
    const refused = lastResult(model.doGenerateCalls[1].prompt as never);
    assert.deepEqual(refused, { type: "execution-denied", reason: "toolgate denied this call: unknown tool: shred" });
    assert.match(result.text, /toolgate denied this call: unknown tool: shred/);
    const decided = since(from).filter((e) => e.kind === "decision");
    assert.deepEqual(decided.map((e) => [e.tool, e.outcome, e.session_id]), [["shred", "deny", "chat-7"]]);
  });

  test("an allowed call runs and both records are on the trail", async () => {
    const ran: string[] = [];
    const tg = client();
    const from = last();
    const result = await generateText({
      model: scripted("read", { path: "notes.txt" }), tools: guardTools(tools(ran), tg).tools,
      stopWhen: stepCountIs(3), prompt: "read it",
    });
    tg.close();
    assert.deepEqual(ran, ["read notes.txt"]);
    assert.equal(result.text, 'the tool said: {"type":"text","value":"contents of notes.txt"}');
    const events = since(from);
    const decided = events.filter((e) => e.kind === "decision");
    const executed = events.filter((e) => e.kind === "execution");
    assert.deepEqual(decided.map((e) => e.outcome), ["allow"]);
    assert.deepEqual(executed.map((e) => e.decision_id), [decided[0].decision_id]);
    assert.ok(executed[0].result_bytes > 0);
  });

  test("an approval stops the run and resumes it with the person's answer, decided once", async () => {
    const ran: string[] = [];
    const tg = client();
    const from = last();
    const guard = guardTools(tools(ran), tg, { approver: "alice" });
    const model = scripted("deploy", { env: "prod" });
    const first = await generateText({ model, tools: guard.tools, stopWhen: stepCountIs(3), prompt: "deploy" });
    const [request] = first.content.filter((p) => p.type === "tool-approval-request");
    assert.ok(request, "the run stopped for a person");
    assert.deepEqual(ran, []);
    const messages: ModelMessage[] = [
      { role: "user", content: "deploy" }, ...first.response.messages,
      { role: "tool", content: [{ type: "tool-approval-response", approvalId: request.approvalId, approved: true }] },
    ];
    await guard.settle(messages);
    const second = await generateText({ model, tools: guard.tools, stopWhen: stepCountIs(3), messages });
    tg.close();
    assert.deepEqual(ran, ["deploy prod"]);
    assert.match(second.text, /deployed to prod/);
    const events = since(from);
    const decided = events.filter((e) => e.kind === "decision");
    assert.deepEqual(decided.map((e) => e.outcome), ["require_approval"]);
    assert.deepEqual(events.filter((e) => e.kind === "approval_approved").map((e) => e.actor_id), ["alice"]);
    assert.deepEqual(events.filter((e) => e.kind === "execution").map((e) => e.decision_id), [decided[0].decision_id]);
    assert.equal(events.filter((e) => e.kind === "violation").length, 0);
  });

  test("a refusal does not run the call, the model is told, and the approval is withdrawn", async () => {
    const ran: string[] = [];
    const tg = client();
    const from = last();
    const guard = guardTools(tools(ran), tg);
    const model = scripted("deploy", { env: "prod" });
    const first = await generateText({ model, tools: guard.tools, stopWhen: stepCountIs(3), prompt: "deploy" });
    const [request] = first.content.filter((p) => p.type === "tool-approval-request");
    const messages: ModelMessage[] = [
      { role: "user", content: "deploy" }, ...first.response.messages,
      { role: "tool", content: [{ type: "tool-approval-response", approvalId: request.approvalId, approved: false, reason: "not today" }] },
    ];
    await guard.settle(messages);
    const second = await generateText({ model, tools: guard.tools, stopWhen: stepCountIs(3), messages });
    tg.close();
    assert.deepEqual(ran, []);
    assert.match(second.text, /not today/);
    const events = since(from);
    assert.equal(events.filter((e) => e.kind === "approval_withdrawn").length, 1);
    assert.equal(events.filter((e) => e.kind === "execution").length, 0);
  });

  test("a tool that throws is recorded as failed, and the model gets the error", async () => {
    const ran: string[] = [];
    const tg = client();
    const from = last();
    const result = await generateText({
      model: scripted("read", { path: "missing" }), tools: guardTools(tools(ran), tg).tools,
      stopWhen: stepCountIs(3), prompt: "read it",
    });
    tg.close();
    assert.match(result.text, /no such file: missing/);
    const [executed] = since(from).filter((e) => e.kind === "execution");
    assert.equal(executed.status, "error");
    assert.match(executed.error, /no such file: missing/);
  });

  test("a streaming tool's parts reach the stream, and its last is recorded", async () => {
    const ran: string[] = [];
    const tg = client();
    const from = last();
    const stream = streamText({
      model: scripted("grep", { q: "toolgate" }), tools: guardTools(tools(ran), tg).tools,
      stopWhen: stepCountIs(3), prompt: "search",
    });
    const outputs: unknown[] = [];
    for await (const part of stream.fullStream) if (part.type === "tool-result") outputs.push(part.output);
    tg.close();
    assert.deepEqual(ran, ["grep toolgate"]);
    assert.deepEqual(outputs.at(-1), { status: "done", hits: ["toolgate-1"] });
    assert.ok(outputs.length >= 2, "the preliminary result went out too");
    const [executed] = since(from).filter((e) => e.kind === "execution");
    assert.equal(executed.status, "ok");
    assert.equal(executed.result_bytes, JSON.stringify({ status: "done", hits: ["toolgate-1"] }).length);
  });

  test("a model that gives two calls one id cannot run the second on the first's decision", async () => {
    const ran: string[] = [];
    const tg = client();
    const from = last();
    const twice = new MockLanguageModelV3({
      doGenerate: async ({ prompt }) => lastResult(prompt as never) === undefined
        ? {
          content: [
            { type: "tool-call", toolCallId: "same", toolName: "read", input: JSON.stringify({ path: "notes.txt" }) },
            { type: "tool-call", toolCallId: "same", toolName: "shred", input: JSON.stringify({ path: "notes.txt" }) },
          ],
          finishReason: { unified: "tool-calls", raw: undefined }, usage, warnings: [],
        }
        : { content: [{ type: "text", text: "done" }], finishReason: { unified: "stop", raw: undefined }, usage, warnings: [] },
    });
    await generateText({ model: twice, tools: guardTools(tools(ran), tg).tools, stopWhen: stepCountIs(3), prompt: "go" });
    tg.close();
    assert.ok(!ran.some((r) => r.startsWith("shred")), `shred ran: ${ran}`);
    const events = since(from);
    const executed = events.filter((e) => e.kind === "execution");
    assert.ok(executed.every((e) => e.tool === "read"), JSON.stringify(executed));
    assert.ok(events.some((e) => e.kind === "decision" && e.tool === "shred" && e.outcome === "deny"));
  });

  test("a call refused in toolgate does not run on the SDK's approval", async () => {
    const ran: string[] = [];
    const tg = client();
    const from = last();
    const guard = guardTools(tools(ran), tg, { approver: "alice" });
    const model = scripted("deploy", { env: "prod" });
    const first = await generateText({ model, tools: guard.tools, stopWhen: stepCountIs(3), prompt: "deploy" });
    const [request] = first.content.filter((p) => p.type === "tool-approval-request");
    await rejectPending(suite.server);
    const messages: ModelMessage[] = [
      { role: "user", content: "deploy" }, ...first.response.messages,
      { role: "tool", content: [{ type: "tool-approval-response", approvalId: request.approvalId, approved: true }] },
    ];
    const second = await generateText({ model, tools: guard.tools, stopWhen: stepCountIs(3), messages });
    tg.close();
    assert.deepEqual(ran, [], "the deploy ran on the SDK's approval after toolgate's refusal");
    assert.match(second.text, /approval was rejected by bob/);
    assert.equal(since(from).filter((e) => e.kind === "execution").length, 0);
  });

  test("identical calls a model gives one id each run on a decision of their own", async () => {
    const ran: string[] = [];
    const tg = client();
    const from = last();
    const call = { type: "tool-call" as const, toolCallId: "dup", toolName: "read", input: JSON.stringify({ path: "notes.txt" }) };
    const many = new MockLanguageModelV3({
      doGenerate: async ({ prompt }) => lastResult(prompt as never) === undefined
        ? { content: [call, call, call], finishReason: { unified: "tool-calls", raw: undefined }, usage, warnings: [] }
        : { content: [{ type: "text", text: "done" }], finishReason: { unified: "stop", raw: undefined }, usage, warnings: [] },
    });
    await generateText({ model: many, tools: guardTools(tools(ran), tg).tools, stopWhen: stepCountIs(3), prompt: "go" });
    tg.close();
    const events = since(from);
    const executed = events.filter((e) => e.kind === "execution");
    assert.equal(executed.length, ran.length, "a run went unrecorded");
    assert.equal(new Set(executed.map((e) => e.decision_id)).size, executed.length, "two runs on one decision");
    assert.equal(events.filter((e) => e.kind === "violation").length, 0);
  });

  test("output past the limit reaches the model cut", async () => {
    const ran: string[] = [];
    const tg = client();
    const model = scripted("read", { path: "long" });
    await generateText({ model, tools: guardTools(tools(ran), tg).tools, stopWhen: stepCountIs(3), prompt: "read it" });
    tg.close();
    const given = JSON.stringify(lastResult(model.doGenerateCalls[1].prompt as never));
    const count = (given.match(/z/g) ?? []).length;
    assert.ok(count >= 40 && count <= 50, given);
  });

  test("a sidecar that cannot be reached fails the call: the tool never runs", async () => {
    const ran: string[] = [];
    const tg = client(`127.0.0.1:${await freePort()}`);
    await assert.rejects(generateText({
      model: scripted("read", { path: "notes.txt" }), tools: guardTools(tools(ran), tg).tools,
      stopWhen: stepCountIs(3), prompt: "read it",
    }));
    tg.close();
    assert.deepEqual(ran, []);
  });
});
