// An agent built on the Vercel AI SDK, its tools governed by toolgate through the framework's
// own seams (@toolgate/client/vercel-ai, docs/frameworks.md).
//
// The model is the SDK's own mock language model playing a script, so that it runs offline: it
// reads the README (allowed), shreds a file (a tool nobody registered: denied, and it is told
// why), and deploys to staging, which the policy sends to a person: the step ends with the
// SDK's own tool-approval request, a stand-in person approves it, and the run resumes.
//
//     toolgate serve --config examples/agent/toolgate.toml        # in another terminal
//     cd examples/frameworks && npm install --install-links ../../clients/typescript ai@6.0.333 zod@4.6.7
//     node vercel_ai_agent.mjs [--target 127.0.0.1:50051] [--refuse] [--file PATH]
//
// Then `toolgate query --db toolgate.db` shows the three calls on the trail: the denial, the
// approval with its verdict, the allowed read with its execution.

import { readFile } from "node:fs/promises";
import { parseArgs } from "node:util";

import { Toolgate } from "@toolgate/client";
import { guardTools } from "@toolgate/client/vercel-ai";
import { generateText, stepCountIs, tool } from "ai";
import { MockLanguageModelV3 } from "ai/test";
import { z } from "zod";

const { values: options } = parseArgs({
  options: {
    target: { type: "string", default: "127.0.0.1:50051" },
    refuse: { type: "boolean", default: false },
    // The file the agent reads: the repository's README.
    file: { type: "string", default: new URL("../../README.md", import.meta.url).pathname },
  },
});

// What the scripted model asks for, one call a step.
const script = [
  ["read", { path: options.file }],
  ["shred", { path: "/etc/passwd" }],
  ["deploy", { env: "staging", version: "1.4.2" }],
];
const usage = { inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: 0 }, outputTokens: { total: 1, text: 1, reasoning: 0 } };

/** The results the model was handed back, from its prompt. */
const returned = (prompt) => prompt.filter((m) => m.role === "tool")
  .flatMap((m) => m.content.filter((p) => p.type === "tool-result"));

const model = new MockLanguageModelV3({
  doGenerate: async ({ prompt }) => {
    const back = returned(prompt);
    if (back.length < script.length) {
      const [toolName, input] = script[back.length];
      return {
        content: [{ type: "tool-call", toolCallId: `call-${back.length}`, toolName, input: JSON.stringify(input) }],
        finishReason: { unified: "tool-calls", raw: undefined }, usage, warnings: [],
      };
    }
    const said = back.map((p) => `${p.toolName}: ${JSON.stringify(p.output).slice(0, 80)}`).join("; ");
    return { content: [{ type: "text", text: `done. ${said}` }], finishReason: { unified: "stop", raw: undefined }, usage, warnings: [] };
  },
});

const tools = {
  read: tool({
    description: "Reads a file", inputSchema: z.object({ path: z.string() }),
    execute: async ({ path }) => (await readFile(path, "utf8")).slice(0, 200),
  }),
  shred: tool({
    description: "Overwrites a file and deletes it", inputSchema: z.object({ path: z.string() }),
    execute: async () => { throw new Error("toolgate never lets this run"); },
  }),
  deploy: tool({
    description: "Deploys a version to an environment", inputSchema: z.object({ env: z.string(), version: z.string() }),
    execute: async ({ env, version }) => `deployed ${version} to ${env}`,
  }),
};

const toolgate = new Toolgate({ target: options.target, sessionId: `vercel-ai-${Date.now()}`, actorId: "release-agent" });
const guard = guardTools(tools, toolgate, { approver: "reviewer", allowBash: true });
const messages = [{ role: "user", content: "ship 1.4.2 to staging" }];
try {
  for (;;) {
    const result = await generateText({ model, tools: guard.tools, stopWhen: stepCountIs(10), messages });
    messages.push(...result.response.messages);
    for (const step of result.steps) {
      for (const part of step.content) {
        if (part.type === "tool-result") console.log(`${part.toolName} -> ${JSON.stringify(part.output).slice(0, 100)}`);
      }
    }
    const asked = result.content.filter((p) => p.type === "tool-approval-request");
    if (asked.length === 0) {
      console.log(`model: ${result.text}`);
      break;
    }
    for (const request of asked) {
      console.log(`waiting for a person: ${request.toolCall.toolName}(${JSON.stringify(request.toolCall.input)}); reviewer ${options.refuse ? "refuses" : "approves"}`);
    }
    messages.push({
      role: "tool",
      content: asked.map((request) => ({ type: "tool-approval-response", approvalId: request.approvalId, approved: !options.refuse })),
    });
    await guard.settle(messages);
  }
} finally {
  toolgate.close();
}
