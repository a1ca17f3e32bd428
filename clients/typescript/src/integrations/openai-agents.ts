// The OpenAI Agents SDK for JavaScript: every function-tool call of an agent decided by toolgate
// before it runs and recorded after, through the seams the SDK offers on each tool: its
// approval check (`needsApproval`), its input guardrails, and its `invoke` (docs/frameworks.md):
//
//     const guard = new ToolgateGuard(toolgate);                 // toolgate: a Toolgate
//     const result = await run(guard.agent(agent), "refund order 42", { context: { sessionId } });
//
// - Each call is decided once, with the tool's name and arguments, in the session the run's
//   context names (`sessionId` or `session_id`) or else the client's, under the idempotency key
//   `openai-agents:<callId>`.
// - A denial (and a dry run) does not run the tool: the model gets toolgate's reason as the
//   tool's output (the guardrail's rejectContent), and the run goes on.
// - A call that needs approval uses the SDK's own human-in-the-loop: the run stops with
//   `result.interruptions`; the application answers with `guard.approve(state, item, "alice")`
//   or `await guard.reject(state, item, reason)` and runs the state again. A blanket approval
//   (`alwaysApprove`) does not stand for toolgate: only a call this guard interrupted runs.
// - A rewrite runs with the rewritten arguments.
// - The run is reported when `invoke` returns or throws; a tool made with `guard.define` has
//   its own thrown errors recorded too (the SDK turns them into text inside `invoke`). A sidecar
//   that cannot be reached fails the run, unless `failOpen`.

import {
  type Agent, type FunctionTool, type RunContext, type RunState, type RunToolApprovalItem,
  type ToolInputGuardrailDefinition, tool as defineTool,
} from "@openai/agents-core";

import { Unavailable } from "../errors.js";
import type { Decision } from "../model.js";
import type { DecideOptions, Toolgate } from "../toolgate.js";
import { fingerprint, Kept, messageOf, overruled, refusal, stopwatch, withdraw } from "./seam.js";

export interface ToolgateGuardOptions extends DecideOptions {
  /** Who approves in the SDK when `approve` names nobody (default "openai-agents:user"). */
  approver?: string;
  /** Run a tool unrecorded when the sidecar cannot be reached (default: the run fails). */
  failOpen?: boolean;
  /** How many calls' decisions are kept between the SDK's interruption and its resumption. */
  maxPending?: number;
}

/** One decided call, from its decision to its run. */
interface Call {
  key: string;
  /** null: the sidecar could not be reached and `failOpen` lets the call run unrecorded. */
  decision: Decision | null;
  /** This guard interrupted the run for it (a person's approval stands only then). */
  interrupted: boolean;
  /** The guardrail let it through: `invoke` may run it. */
  admitted: boolean;
  approver: string;
}

// Tools already governed (or made by `define`): never wrapped twice.
const governed = new WeakSet<object>();
// A call id no model gives: whether a tool is approved for it says whether it is approved for all.
const PROBE = "\u0000toolgate-probe";

/** Governs agents' function tools with `toolgate`. */
export class ToolgateGuard {
  private readonly approver: string;
  private readonly failOpen: boolean;
  private readonly decideOptions: DecideOptions;
  private readonly calls: Kept<Call>;
  // Approvals given in the SDK for calls this guard kept no decision of (a resumed process).
  private readonly approvers: Kept<string>;
  // The error a `define`d tool threw, by the call's details, seen before the SDK makes text of it.
  private readonly failures = new WeakMap<object, unknown>();

  constructor(private readonly toolgate: Toolgate, options: ToolgateGuardOptions = {}) {
    const { approver = "openai-agents:user", failOpen = false, maxPending = 10_000, ...decideOptions } = options;
    this.approver = approver;
    this.failOpen = failOpen;
    this.decideOptions = decideOptions;
    this.calls = new Kept(maxPending);
    this.approvers = new Kept(maxPending);
  }

  /** A clone of `agent` whose function tools are each governed; the others (hosted tools,
   * handoffs, MCP servers' tools, computer and shell tools) are left as they are (docs say so). */
  agent<TContext>(agent: Agent<TContext, any>): Agent<TContext, any> {
    const tools = agent.tools.map((t) => (t.type === "function" ? this.tool(t as FunctionTool<TContext, any, any>) : t));
    return agent.clone({ tools }) as Agent<TContext, any>;
  }

  /** The SDK's `tool(options)`, governed, with the errors its `execute` throws recorded. */
  define(options: Parameters<typeof defineTool>[0]): FunctionTool<any, any, any> {
    const execute = options.execute as (...args: any[]) => unknown;
    const failures = this.failures;
    const made = defineTool({
      ...options,
      async execute(input: unknown, context: unknown, details?: object) {
        try {
          return await execute(input, context, details);
        } catch (error) {
          if (details) failures.set(details, error);
          throw error;
        }
      },
    } as typeof options);
    return this.tool(made as FunctionTool<any, any, any>);
  }

  /** A copy of `original` whose every call toolgate decides first and records after. */
  tool<TContext>(original: FunctionTool<TContext, any, any>): FunctionTool<TContext, any, any> {
    if (governed.has(original)) return original;
    const own = original.needsApproval;
    const needsApproval = async (context: RunContext<any>, input: any, callId?: string) => {
      const call = await this.decided(original.name, input, callId ?? "", context);
      const outcome = call.decision?.outcome;
      if (outcome === "require_approval") {
        call.interrupted = true;
        return true;
      }
      if (outcome !== undefined && outcome !== "allow" && outcome !== "rewrite") return false; // refused by the guardrail
      return own(context, input, callId);
    };
    const gate: ToolInputGuardrailDefinition<TContext> = {
      type: "tool_input",
      name: "toolgate",
      run: async ({ context, toolCall }) => {
        const call = await this.decided(toolCall.name, parse(toolCall.arguments), toolCall.callId, context);
        const decision = call.decision;
        if (decision === null || decision.outcome === "allow" || decision.outcome === "rewrite") {
          call.admitted = true;
          return { behavior: { type: "allow" } };
        }
        if (decision.outcome === "require_approval") {
          const approved = context.isToolApproved({ toolName: toolCall.name, callId: toolCall.callId });
          // A blanket approval answers for any call id and skips needsApproval: it stands only
          // for a call this guard interrupted itself.
          const blanket = context.isToolApproved({ toolName: toolCall.name, callId: PROBE }) === true;
          if (approved === true && (call.interrupted || !blanket)) {
            // The person's approval here stands only while toolgate's own still waits.
            const approval = await this.toolgate.awaitApproval(decision, 0);
            const why = overruled(approval);
            if (why !== undefined) {
              this.calls.delete(call.key);
              return { behavior: { type: "rejectContent", message: why } };
            }
            call.admitted = true;
            const given = this.approvers.get(call.key.slice(call.key.indexOf("\n") + 1));
            call.approver = approval.state === "pending" ? call.approver || (given ?? this.approver) : "";
            return { behavior: { type: "allow" } };
          }
          // The pass before the interruption (preApprovalInputGuardrails): the person comes next.
          if (approved === undefined && call.interrupted) return { behavior: { type: "allow" } };
        }
        this.calls.delete(call.key);
        return { behavior: { type: "rejectContent", message: refusal(decision) } };
      },
    };
    const invoke = async (context: RunContext<TContext>, input: string, details?: any) => {
      const callId: string = details?.toolCall?.callId ?? "";
      const call = this.calls.get(`${sessionOf(context) ?? ""}\n${key(callId, original.name, parse(input))}`);
      if (!call?.admitted) return "toolgate: this call was not decided"; // only through the guardrail
      this.calls.delete(call.key);
      const decision = call.decision;
      if (decision === null) return original.invoke(context, input, details); // failOpen: unrecorded
      const runInput = decision.outcome === "rewrite" ? JSON.stringify(decision.args) : input;
      const took = stopwatch();
      const report = (outcome: { output: unknown } | { error: unknown }) => this.toolgate.execute(decision, decision.args, {
        durationUs: took(), approvedInHarness: call.approver,
        ...("error" in outcome
          ? { status: timedOut(outcome.error) ? "timeout" as const : "error" as const, error: messageOf(outcome.error) }
          : { output: outcome.output }),
      });
      let output: unknown;
      try {
        output = await original.invoke(context, runInput, details);
      } catch (error) {
        await report({ error });
        throw error;
      }
      const failed = details ? this.failures.get(details) : undefined;
      const reported = await report(failed === undefined ? { output } : { error: failed });
      // Output past the decision's limit reaches the model cut, as toolgate cut it.
      return reported.truncated ? reported.output : output;
    };
    const copy: FunctionTool<TContext, any, any> = {
      ...original, needsApproval, invoke,
      // First, so that no other guardrail's refusal comes before toolgate's.
      inputGuardrails: [gate, ...(original.inputGuardrails ?? [])],
    };
    governed.add(copy);
    return copy;
  }

  /** Approves an interrupted call in the SDK, as `approver` (the guard's by default). Never a
   * blanket approval: each call toolgate holds needs its own. */
  approve(state: RunState<any, any>, item: RunToolApprovalItem, approver = ""): void {
    const itemKey = keyOf(item);
    const call = this.waitingFor(itemKey);
    if (call) call.approver = approver || this.approver;
    else this.approvers.set(itemKey, approver || this.approver);
    state.approve(item);
  }

  /** Refuses an interrupted call in the SDK and withdraws toolgate's pending approval. */
  async reject(state: RunState<any, any>, item: RunToolApprovalItem, reason = ""): Promise<void> {
    const call = this.waitingFor(keyOf(item));
    if (call) {
      this.calls.delete(call.key);
      if (call.decision) await withdraw(this.toolgate, call.decision, `refused in the run${reason ? `: ${reason}` : ""}`);
    }
    state.reject(item, { message: reason ? `a person refused this call: ${reason}` : "a person refused this call" });
  }

  /** The call this guard interrupted for an item of the SDK's interruptions (in whichever
   * session: the item does not say). */
  private waitingFor(itemKey: string): Call | undefined {
    for (const call of this.calls.values()) {
      if (call.interrupted && call.key.endsWith(`\n${itemKey}`)) return call;
    }
    return undefined;
  }

  /** The call's decision, made the first time it is asked for (by this very call). */
  private async decided(name: string, args: unknown, callId: string, context: RunContext<any>): Promise<Call> {
    // The call, in its session: another session's call under the same id is not it.
    const callKey = `${sessionOf(context) ?? ""}\n${key(callId, name, args)}`;
    const kept = this.calls.get(callKey);
    if (kept) return kept;
    let decision: Decision | null;
    try {
      const session = sessionOf(context);
      decision = await this.toolgate.decide(name, (args ?? {}) as Record<string, unknown>, {
        ...this.decideOptions, ...(session ? { sessionId: session } : {}), idempotencyKey: `openai-agents:${callId}`,
      });
    } catch (error) {
      // Only a sidecar that cannot be reached: a refusal or a bad request never runs it.
      if (!(this.failOpen && error instanceof Unavailable)) throw error;
      decision = null;
    }
    const call: Call = { key: callKey, decision, interrupted: false, admitted: false, approver: "" };
    this.calls.set(callKey, call);
    return call;
  }
}

/** A call's key: its id, bound to the call (a model may give two calls one id). */
const key = (callId: string, name: string, args: unknown) => `${callId}\n${fingerprint(name, args)}`;

function keyOf(item: RunToolApprovalItem): string {
  const raw = item.rawItem as { callId?: string; name?: string; arguments?: string };
  return key(raw.callId ?? "", raw.name ?? item.name ?? "", parse(raw.arguments));
}

/** The model's arguments as toolgate is asked about them (text that is no JSON, as such). */
function parse(text: string | undefined): unknown {
  try {
    return JSON.parse(text || "{}");
  } catch {
    return { _unparsed: text };
  }
}

function sessionOf(context: RunContext<any>): string | undefined {
  const given = context?.context as { sessionId?: unknown; session_id?: unknown } | undefined;
  const named = given?.sessionId ?? given?.session_id;
  return typeof named === "string" && named ? named : undefined;
}

function timedOut(error: unknown): boolean {
  return error instanceof Error && error.name === "ToolTimeoutError";
}
