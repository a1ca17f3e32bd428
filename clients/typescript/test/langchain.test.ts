// The LangChain.js adapter with LangChain's own packages (createAgent, its middleware, tools,
// LangGraph's interrupt, Command and MemorySaver) and a scripted chat model on LangChain's own
// BaseChatModel, against the real server: a denied call never runs and the model is told why,
// an allowed one runs and is on the trail, an approval interrupts the run and resumes it with
// the person's answer (decided once), a refusal is withdrawn, a throwing tool is recorded as
// failed, a model reusing a waiting call's id gets nothing from it, and a sidecar that cannot be
// reached fails the run.

import assert from "node:assert/strict";
import { describe, test } from "node:test";

import { BaseChatModel } from "@langchain/core/language_models/chat_models";
import { AIMessage, type BaseMessage, ToolMessage } from "@langchain/core/messages";
import type { ChatResult } from "@langchain/core/outputs";
import { Command, MemorySaver } from "@langchain/langgraph";
import { createAgent, tool } from "langchain";
import { z } from "zod";

import { Toolgate } from "../src/index.js";
import { toolgateMiddleware } from "../src/integrations/langchain.js";
import { freePort, rejectPending, sharedServer } from "./server.js";

/** A model that makes one tool call, then says what the tool gave back. */
class Scripted extends BaseChatModel {
  constructor(private readonly call: { name: string; args: Record<string, unknown>; id?: string }) {
    super({});
  }

  _llmType(): string {
    return "scripted";
  }

  override bindTools(): this {
    return this;
  }

  async _generate(messages: BaseMessage[]): Promise<ChatResult> {
    const last = messages.at(-1);
    const message = last !== undefined && ToolMessage.isInstance(last)
      ? new AIMessage(`the tool said: ${last.content}`)
      : new AIMessage({ content: "", tool_calls: [{ id: "call-1", type: "tool_call", ...this.call }] });
    return { generations: [{ text: String(message.content), message }] };
  }
}

function tools(ran: string[]) {
  return [
    tool(async ({ path }: { path: string }) => {
      if (path === "missing") throw new Error(`no such file: ${path}`);
      if (path === "long") return "z".repeat(5000);
      ran.push(`read ${path}`);
      return `contents of ${path}`;
    }, { name: "read", description: "Reads a file", schema: z.object({ path: z.string() }) }),
    tool(async ({ env }: { env: string }) => {
      ran.push(`deploy ${env}`);
      return `deployed to ${env}`;
    }, { name: "deploy", description: "Deploys", schema: z.object({ env: z.string() }) }),
    tool(async ({ path }: { path: string }) => {
      ran.push(`shred ${path}`);
      return "shredded";
    }, { name: "shred", description: "Shreds a file", schema: z.object({ path: z.string() }) }),
  ];
}

describe("the LangChain.js adapter", () => {
  const suite = sharedServer("unused");
  const { client, since, last } = suite;
  const thread = (id: string) => ({ configurable: { thread_id: id } });
  const agent = (tg: Toolgate, call: { name: string; args: Record<string, unknown> }, ran: string[],
    middleware = toolgateMiddleware(tg, { allowBash: true })) =>
    createAgent({ model: new Scripted(call), tools: tools(ran), middleware: [middleware], checkpointer: new MemorySaver() });
  const said = (state: { messages: BaseMessage[] }) => String(state.messages.at(-1)?.content);

  test("a denied call never runs and the model is told why", async () => {
    const ran: string[] = [];
    const tg = client();
    const from = last();
    const state = await agent(tg, { name: "shred", args: { path: "/etc/passwd" } }, ran)
      .invoke({ messages: [{ role: "user", content: "shred it" }] }, thread("t-deny"));
    tg.close();
    assert.deepEqual(ran, []);
    assert.equal(said(state), "the tool said: toolgate denied this call: unknown tool: shred");
    const decided = since(from).filter((e) => e.kind === "decision");
    assert.deepEqual(decided.map((e) => [e.tool, e.outcome, e.session_id]), [["shred", "deny", "t-deny"]]);
  });

  test("an allowed call runs and both records are on the trail", async () => {
    const ran: string[] = [];
    const tg = client();
    const from = last();
    const state = await agent(tg, { name: "read", args: { path: "notes.txt" } }, ran)
      .invoke({ messages: [{ role: "user", content: "read it" }] }, thread("t-allow"));
    tg.close();
    assert.deepEqual(ran, ["read notes.txt"]);
    assert.equal(said(state), "the tool said: contents of notes.txt");
    const events = since(from);
    const decided = events.filter((e) => e.kind === "decision");
    assert.deepEqual(decided.map((e) => e.outcome), ["allow"]);
    const executed = events.filter((e) => e.kind === "execution");
    assert.deepEqual(executed.map((e) => [e.decision_id, e.status]), [[decided[0].decision_id, "ok"]]);
  });

  test("an approval interrupts the run and resumes it with the person's answer, decided once", async () => {
    const ran: string[] = [];
    const tg = client();
    const from = last();
    const built = agent(tg, { name: "deploy", args: { env: "prod" } }, ran);
    const paused = await built.invoke({ messages: [{ role: "user", content: "deploy" }] }, thread("t-approve"));
    const [waiting] = (paused as unknown as { __interrupt__: Array<{ value: { toolgate: { tool: string } } }> }).__interrupt__;
    assert.equal(waiting.value.toolgate.tool, "deploy");
    assert.deepEqual(ran, []);
    const state = await built.invoke(new Command({ resume: { approved: true, approver: "alice" } }), thread("t-approve"));
    tg.close();
    assert.deepEqual(ran, ["deploy prod"]);
    assert.equal(said(state), "the tool said: deployed to prod");
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
    const built = agent(tg, { name: "deploy", args: { env: "prod" } }, ran);
    await built.invoke({ messages: [{ role: "user", content: "deploy" }] }, thread("t-refuse"));
    const state = await built.invoke(new Command({ resume: { approved: false, comment: "not today" } }), thread("t-refuse"));
    tg.close();
    assert.deepEqual(ran, []);
    assert.match(said(state), /a person refused this call/);
    const events = since(from);
    assert.equal(events.filter((e) => e.kind === "approval_withdrawn").length, 1);
    assert.equal(events.filter((e) => e.kind === "execution").length, 0);
  });

  test("a call refused in toolgate does not run on the run's approval", async () => {
    const ran: string[] = [];
    const tg = client();
    const from = last();
    const built = agent(tg, { name: "deploy", args: { env: "prod" } }, ran);
    await built.invoke({ messages: [{ role: "user", content: "deploy" }] }, thread("t-overruled"));
    await rejectPending(suite.server);
    const state = await built.invoke(new Command({ resume: { approved: true, approver: "alice" } }), thread("t-overruled"));
    tg.close();
    assert.deepEqual(ran, [], "the deploy ran on the run's approval after toolgate's refusal");
    assert.match(said(state), /approval was rejected by bob/);
    assert.equal(since(from).filter((e) => e.kind === "execution").length, 0);
  });

  test("a tool that throws is recorded as failed", async () => {
    const ran: string[] = [];
    const tg = client();
    const from = last();
    await assert.rejects(agent(tg, { name: "read", args: { path: "missing" } }, ran)
      .invoke({ messages: [{ role: "user", content: "read it" }] }, thread("t-throw")));
    tg.close();
    const executed = since(from).filter((e) => e.kind === "execution");
    assert.deepEqual(executed.map((e) => e.status), ["error"]);
    assert.match(executed[0].error, /no such file: missing/);
  });

  test("a model that reuses a waiting call's id cannot run another tool on its decision", async () => {
    const ran: string[] = [];
    const tg = client();
    const from = last();
    const middleware = toolgateMiddleware(tg, { allowBash: true });
    await agent(tg, { name: "deploy", args: { env: "prod" } }, ran, middleware)
      .invoke({ messages: [{ role: "user", content: "deploy" }] }, thread("t-wait"));
    // Another run, on another thread: the model calls shred under the waiting deploy's id.
    const shred = agent(tg, { name: "shred", args: { path: "notes.txt" } }, ran, middleware);
    const state = await shred.invoke({ messages: [{ role: "user", content: "never mind" }] }, thread("t-reuse"));
    if ("__interrupt__" in state) {
      await shred.invoke(new Command({ resume: { approved: true, approver: "alice" } }), thread("t-reuse"));
    }
    tg.close();
    assert.ok(!ran.includes("shred notes.txt"), "the shred ran on the deploy's decision");
    const decided = since(from).filter((e) => e.kind === "decision").map((e) => [e.tool, e.outcome]);
    assert.deepEqual(decided, [["deploy", "require_approval"], ["shred", "deny"]]);
  });

  test("output past the limit reaches the model cut", async () => {
    const ran: string[] = [];
    const tg = client();
    const state = await agent(tg, { name: "read", args: { path: "long" } }, ran)
      .invoke({ messages: [{ role: "user", content: "read it" }] }, thread("t-long"));
    tg.close();
    const count = (said(state).match(/z/g) ?? []).length;
    assert.ok(count >= 40 && count <= 50, said(state));
  });

  test("a sidecar that cannot be reached fails the run: the tool never runs", async () => {
    const ran: string[] = [];
    const tg = client(`127.0.0.1:${await freePort()}`);
    await assert.rejects(agent(tg, { name: "read", args: { path: "notes.txt" } }, ran)
      .invoke({ messages: [{ role: "user", content: "read it" }] }, thread("t-down")));
    tg.close();
    assert.deepEqual(ran, []);
  });
});
