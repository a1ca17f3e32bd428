// The Vercel AI SDK (`ai`): every tool call of generateText, streamText or an Agent decided by
// toolgate before it runs and recorded after, through the seams the SDK offers on each tool
// (docs/frameworks.md):
//
//     const guard = guardTools(tools, toolgate);                 // toolgate: a Toolgate
//     const result = await generateText({ model, tools: guard.tools, stopWhen: stepCountIs(5), prompt });
//
// - Each call is decided once, in the tool's `needsApproval` (which the SDK asks before every
//   call), with the tool's name and input, under the idempotency key `vercel-ai:<toolCallId>`.
// - A denial (and a dry run) does not run the tool: the model gets the SDK's own refused-tool
//   result (`execution-denied`) with toolgate's reason, and the run goes on.
// - A call that needs approval uses the SDK's own tool approval: the run stops with a
//   `tool-approval-request`; resumed with the person's `tool-approval-response`, an approved call
//   runs once, recorded as approved by `approver`; a refused one never runs, and `settle` (called
//   with the messages before resuming) withdraws toolgate's pending approval.
// - A rewrite runs with the rewritten input.
// - The run is reported when the tool returns, throws (the SDK hands the model its error), or
//   streams to its last part; a streaming run cut short is reported as an error. A sidecar that
//   cannot be reached fails the call (the SDK's error), unless `failOpen`.

import type { ModelMessage, Tool, ToolSet } from "ai";

import { Unavailable } from "../errors.js";
import type { Decision } from "../model.js";
import type { DecideOptions, Toolgate } from "../toolgate.js";
import { fingerprint, Kept, messageOf, overruled, refusal, stopwatch, withdraw } from "./seam.js";

export interface GuardToolsOptions extends DecideOptions {
  /** Who answers the SDK's approval requests, recorded as the approver: a name, or read from
   * the call (default: `experimental_context.toolgate.approver`, else "vercel-ai:user"). */
  approver?: string | ((call: CallOptions) => string);
  /** Run a tool unrecorded when the sidecar cannot be reached (default: the call fails). */
  failOpen?: boolean;
  /** How many calls' decisions are kept between the SDK's approval request and its answer. */
  maxPending?: number;
}

/** What the SDK hands a tool's `needsApproval` and `execute`. */
export interface CallOptions {
  toolCallId: string;
  messages: ModelMessage[];
  abortSignal?: AbortSignal;
  experimental_context?: unknown;
}

export interface GuardedTools<TOOLS extends ToolSet> {
  /** The tools, each call decided by toolgate first. */
  tools: TOOLS;
  /** Withdraws toolgate's pending approval of each call the person refused in `messages` (the
   * messages the run is resumed with); without it, a refused call's approval expires. */
  settle(messages: ModelMessage[]): Promise<void>;
}

/** What a refused call returns, so that `toModelOutput` shows the model the SDK's refusal. */
const REFUSED = "toolgate:refused";
interface Refused {
  type: typeof REFUSED;
  reason: string;
}
const isRefused = (value: unknown): value is Refused =>
  typeof value === "object" && value !== null && (value as Refused).type === REFUSED;

/** `tools`, each call decided by `toolgate` before it runs and recorded after. */
export function guardTools<TOOLS extends ToolSet>(
  tools: TOOLS,
  toolgate: Toolgate,
  options: GuardToolsOptions = {},
): GuardedTools<TOOLS> {
  const { approver, failOpen = false, maxPending = 10_000, ...decideOptions } = options;
  // By tool call: decided in needsApproval, taken in execute (or by settle, after a refusal).
  // The id comes from the model, which may give two calls one id: a kept decision is taken
  // only by the very call (tool and input) it was made for.
  const decisions = new Kept<{ asked: string; decision: Decision | null }>(maxPending);

  async function decisionFor(name: string, input: unknown, call: CallOptions, take = false): Promise<Decision | null> {
    const asked = fingerprint(name, input);
    const kept = decisions.get(call.toolCallId);
    if (kept !== undefined && kept.asked === asked) {
      // `execute` takes it at once, before anything awaits: one decision is never handed to two
      // runs, however many calls the model gave one id.
      if (take) decisions.delete(call.toolCallId);
      return kept.decision;
    }
    let decision: Decision | null;
    try {
      decision = await toolgate.decide(name, (input ?? {}) as Record<string, unknown>, {
        ...decideOptions, idempotencyKey: `vercel-ai:${call.toolCallId}`,
      });
    } catch (error) {
      // Only a sidecar that cannot be reached: a refusal or a bad request never runs it.
      if (!(failOpen && error instanceof Unavailable)) throw error;
      decision = null;
    }
    if (!take) decisions.set(call.toolCallId, { asked, decision });
    return decision;
  }

  function approverOf(call: CallOptions): string {
    if (typeof approver === "function") return approver(call);
    if (approver) return approver;
    const context = call.experimental_context as { toolgate?: { approver?: unknown } } | undefined;
    const named = context?.toolgate?.approver;
    return typeof named === "string" && named ? named : "vercel-ai:user";
  }

  /** The input to run with and who approved it, or why the call may not run. */
  async function admit(decision: Decision, call: CallOptions): Promise<{ input: Record<string, unknown>; approvedBy: string } | Refused> {
    switch (decision.outcome) {
      case "allow":
      case "rewrite":
        return { input: decision.args, approvedBy: "" };
      case "require_approval": {
        // Only the SDK's own approval lets it through: its answer is in the messages.
        if (approvalFor(call.messages, call.toolCallId)?.approved !== true) return { type: REFUSED, reason: refusal(decision) };
        // And only while toolgate's own approval still waits.
        const approval = await toolgate.awaitApproval(decision, 0);
        const why = overruled(approval);
        if (why !== undefined) return { type: REFUSED, reason: why };
        return { input: decision.args, approvedBy: approval.state === "pending" ? approverOf(call) : "" };
      }
      case "deny":
      case "dry_run":
        return { type: REFUSED, reason: refusal(decision) };
    }
  }

  const signalOf = (decision: Decision, call: CallOptions): AbortSignal | undefined => {
    const signals = [call.abortSignal, decision.timeoutMs > 0 ? AbortSignal.timeout(decision.timeoutMs) : undefined]
      .filter((signal): signal is AbortSignal => signal !== undefined);
    return signals.length > 0 ? AbortSignal.any(signals) : undefined;
  };

  const report = (decision: Decision, input: Record<string, unknown>, approvedBy: string, took: () => number,
    outcome: { output: unknown } | { error: unknown }) =>
    toolgate.execute(decision, input, {
      durationUs: took(),
      approvedInHarness: approvedBy,
      ...("error" in outcome
        ? { status: "error" as const, error: messageOf(outcome.error) }
        : { output: outcome.output }),
    });

  const guarded: Record<string, Tool> = {};
  for (const [name, original] of Object.entries(tools as Record<string, Tool>)) {
    const run = original.execute;
    if (typeof run !== "function") {
      // Run by the provider or by the client: no call of it reaches a seam here (docs say so).
      guarded[name] = original;
      continue;
    }
    const needsApproval = async (input: unknown, call: CallOptions) => {
      const own = typeof original.needsApproval === "function"
        ? await original.needsApproval(input, call)
        : Boolean(original.needsApproval);
      const decision = await decisionFor(name, input, call);
      return own || decision?.outcome === "require_approval";
    };
    const toModelOutput = async (result: { toolCallId: string; input: unknown; output: unknown }) => {
      if (isRefused(result.output)) return { type: "execution-denied" as const, reason: result.output.reason };
      if (original.toModelOutput) return original.toModelOutput(result as never);
      return typeof result.output === "string"
        ? { type: "text" as const, value: result.output }
        : { type: "json" as const, value: (result.output ?? null) as never };
    };
    // A streaming tool (an async generator) stays one, so that the SDK still hands out its
    // preliminary results.
    const streaming = (run as { [Symbol.toStringTag]?: string })[Symbol.toStringTag] === "AsyncGeneratorFunction";
    const execute = streaming
      ? async function* (input: unknown, call: CallOptions): AsyncGenerator<unknown> {
        const decision = await decisionFor(name, input, call, true);
        if (decision === null) {
          yield* run.call(original, input, call) as AsyncIterable<unknown>;
          return;
        }
        const admitted = await admit(decision, call);
        if (isRefused(admitted)) {
          yield admitted;
          return;
        }
        const took = stopwatch();
        let last: unknown;
        let ended: "done" | "failed" | "cut" = "cut";
        try {
          const parts = run.call(original, admitted.input, { ...call, abortSignal: signalOf(decision, call) });
          for await (const part of parts as AsyncIterable<unknown>) {
            last = part;
            yield part;
          }
          ended = "done";
        } catch (error) {
          ended = "failed";
          await report(decision, admitted.input, admitted.approvedBy, took, { error });
          throw error;
        } finally {
          // The SDK stopped reading (a cancelled run): the tool did not finish.
          if (ended === "cut") {
            await report(decision, admitted.input, admitted.approvedBy, took, { error: "the run was cancelled" });
          }
        }
        const reported = await report(decision, admitted.input, admitted.approvedBy, took, { output: last });
        // Output past the decision's limit: its cut text is the last part, which the model gets.
        if (reported.truncated) yield reported.output;
      }
      : async function (input: unknown, call: CallOptions): Promise<unknown> {
        const decision = await decisionFor(name, input, call, true);
        if (decision === null) return run.call(original, input, call);
        const admitted = await admit(decision, call);
        if (isRefused(admitted)) return admitted;
        const took = stopwatch();
        let output: unknown;
        try {
          output = await run.call(original, admitted.input, { ...call, abortSignal: signalOf(decision, call) });
        } catch (error) {
          await report(decision, admitted.input, admitted.approvedBy, took, { error });
          throw error; // the SDK hands the model a tool error, and the run goes on
        }
        const reported = await report(decision, admitted.input, admitted.approvedBy, took, { output });
        // Output past the decision's limit reaches the model cut, as toolgate cut it.
        return reported.truncated ? reported.output : output;
      };
    guarded[name] = { ...original, needsApproval, execute, toModelOutput } as Tool;
  }

  async function settle(messages: ModelMessage[]): Promise<void> {
    const last = messages.at(-1);
    if (last?.role !== "tool") return;
    for (const part of last.content) {
      if (part.type !== "tool-approval-response" || part.approved) continue;
      const toolCallId = callOf(messages, part.approvalId);
      const decision = toolCallId === undefined ? undefined : decisions.get(toolCallId)?.decision;
      if (toolCallId === undefined || !decision || decision.outcome !== "require_approval") continue;
      decisions.delete(toolCallId);
      await withdraw(toolgate, decision, `refused in the run${part.reason ? `: ${part.reason}` : ""}`);
    }
  }

  return { tools: guarded as TOOLS, settle };
}

/** The tool call an approval request was made for. */
function callOf(messages: ModelMessage[], approvalId: string): string | undefined {
  for (const message of messages) {
    if (message.role !== "assistant" || typeof message.content === "string") continue;
    for (const part of message.content) {
      if (part.type === "tool-approval-request" && part.approvalId === approvalId) return part.toolCallId;
    }
  }
  return undefined;
}

/** The person's answer to the approval request of `toolCallId`, in the messages resumed with. */
function approvalFor(messages: ModelMessage[], toolCallId: string): { approved: boolean } | undefined {
  const last = messages.at(-1);
  if (last?.role !== "tool") return undefined;
  return last.content.find((part): part is Extract<typeof part, { type: "tool-approval-response" }> =>
    part.type === "tool-approval-response" && callOf(messages, part.approvalId) === toolCallId);
}
