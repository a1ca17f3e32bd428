// toolgate's guard inside an agent SDK's tool definitions. The Vercel AI SDK (`ai`), OpenAI's
// Agents SDK for JS and LangChain.js all take a tool as a description, a parameter schema and
// an `execute(args, { abortSignal })` function; that function is where guard goes. With the AI
// SDK it reads, unchanged but for the import:
//
//     import { tool } from "ai";
//     export const readFile = tool({ description, parameters, execute: guarded("read", read) });
//
// This file keeps to the shape itself, so that it compiles here without the SDK installed.

import { readFile } from "node:fs/promises";

import { Toolgate } from "../src/index.js";

const tg = new Toolgate({ target: "127.0.0.1:50051", sessionId: "chat-42", actorId: "support-agent" });

/** An SDK's `execute` that asks toolgate first: the model reads the output, or why not. */
function guarded<A extends Record<string, unknown>>(
  name: string,
  run: (args: A, signal: AbortSignal) => Promise<string>,
): (args: A, options?: { abortSignal?: AbortSignal }) => Promise<string> {
  return async (args, options) => {
    const result = await tg.guard(name, args, (allowed, { signal }) => {
      // Stop on whichever comes first: the decision's timeout, or the SDK's own abort.
      const both = options?.abortSignal ? AbortSignal.any([signal, options.abortSignal]) : signal;
      return run(allowed as A, both);
    });
    return result.forModel();
  };
}

export const tools = {
  read_file: {
    description: "Read a file of the workspace",
    parameters: { type: "object", properties: { path: { type: "string" } }, required: ["path"] },
    execute: guarded("read", async (args: { path: string }, signal) => readFile(args.path, { encoding: "utf8", signal })),
  },
};
