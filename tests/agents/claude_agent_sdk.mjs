// One query of the Claude Agent SDK for TypeScript, with toolgate's hooks
// (@toolgate/client/claude-agent-sdk, imported from the client's dist by path), for
// test_claude_agent_sdk.py: it runs from target/agents-node, where the SDK is installed.
//
//     node claude_agent_sdk.mjs '{"adapter", "side", "env", "cwd", "person": "allow"|"deny"|null}'
//
// Prints {"session", "asked": [[tool, command, reason]...]} on stdout.

import { query } from "@anthropic-ai/claude-agent-sdk";

const config = JSON.parse(process.argv[2]);
const { toolgateHooks } = await import(config.adapter);

const asked = [];
// The application's own permission prompt: lets each call through, or not.
const canUseTool = config.person === null ? undefined : async (tool, input, { decisionReason }) => {
  asked.push([tool, input.command ?? null, decisionReason ?? ""]);
  return config.person === "allow"
    ? { behavior: "allow", updatedInput: input }
    : { behavior: "deny", message: "the person said no" };
};
let session = "";
const options = {
  env: config.env, cwd: config.cwd, settingSources: [], maxTurns: 4, permissionMode: "default",
  hooks: toolgateHooks(config.side, { timeout: 60 }), canUseTool, stderr: () => {},
};
for await (const message of query({ prompt: "Run the command.", options })) {
  if (message.type === "system" && message.subtype === "init") session = message.session_id;
}
console.log(JSON.stringify({ session, asked }));
