// toolgate for OpenCode: every tool call is decided by toolgate before it runs and reported
// after it ran (docs/agents.md). Written by `toolgate hook install --agent opencode`; edits are
// lost when it is installed again.
//
// Each event goes to `toolgate hook opencode` on stdin; its answer is JSON on stdout. A call is
// blocked (an Error thrown, which OpenCode gives the model as the tool's result) when toolgate
// denies it and whenever toolgate cannot be asked: no answer is never an allow.
import { spawnSync } from "node:child_process";

const COMMAND = __COMMAND__;
const TIMEOUT_MS = __TIMEOUT_MS__;
const started = new Map();

function ask(event) {
  const run = spawnSync(COMMAND[0], COMMAND.slice(1), {
    input: JSON.stringify(event),
    encoding: "utf8",
    timeout: TIMEOUT_MS,
  });
  let answer = null;
  try {
    answer = JSON.parse(run.stdout);
  } catch {}
  if (answer && (answer.decision === "allow" || answer.decision === "deny")) return answer;
  const why = (run.stderr || "").trim() || String(run.error || `exit ${run.status}`);
  return { decision: "deny", reason: `toolgate blocked this call: ${why}` };
}

function text(output) {
  return typeof output === "string" ? output : JSON.stringify(output ?? "");
}

export const Toolgate = async ({ directory }) => ({
  "tool.execute.before": async (input, output) => {
    started.set(input.callID, Date.now());
    const answer = ask({
      event: "before",
      cwd: directory ?? "",
      tool: input.tool,
      sessionID: input.sessionID,
      callID: input.callID,
      args: output.args ?? {},
    });
    if (answer.decision === "deny") {
      started.delete(input.callID);
      throw new Error(answer.reason);
    }
    if (answer.args) Object.assign(output.args, answer.args);
  },
  "tool.execute.after": async (input, output) => {
    const exit = output?.metadata?.exit;
    const answer = ask({
      event: "after",
      cwd: directory ?? "",
      tool: input.tool,
      sessionID: input.sessionID,
      callID: input.callID,
      args: input.args ?? {},
      output: text(output?.output),
      durationMs: Date.now() - (started.get(input.callID) ?? Date.now()),
      failed: typeof exit === "number" && exit !== 0,
    });
    started.delete(input.callID);
    if (answer.decision === "deny") throw new Error(answer.reason);
  },
  // A tool that fails fires no tool.execute.after: its part's state says so.
  event: async ({ event }) => {
    const part = event?.properties?.part;
    if (event?.type !== "message.part.updated" || part?.type !== "tool") return;
    if (part.state?.status !== "error" || !started.has(part.callID)) return;
    ask({
      event: "after",
      tool: part.tool,
      sessionID: part.sessionID,
      callID: part.callID,
      args: part.state.input ?? {},
      output: "",
      durationMs: Date.now() - started.get(part.callID),
      failed: true,
      error: text(part.state.error),
    });
    started.delete(part.callID);
  },
});
