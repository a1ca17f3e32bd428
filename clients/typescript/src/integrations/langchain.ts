// LangChain.js (and LangGraph underneath): every tool call of an agent made with `createAgent`
// decided by toolgate before it runs and recorded after, through the seam LangChain offers for
// it, agent middleware around tool calls (docs/frameworks.md):
//
//     const agent = createAgent({ model, tools, middleware: [toolgateMiddleware(toolgate)],
//                                 checkpointer: new MemorySaver() });     // toolgate: a Toolgate
//
// - Each call is decided with the tool's name and arguments, in the session of the run's
//   thread (`thread_id`), under the idempotency key `langchain:<tool call id>`.
// - A denial (and a dry run) does not run the tool: the model gets a ToolMessage with status
//   "error" and toolgate's reason, and the run goes on.
// - A call that needs approval uses LangGraph's own human-in-the-loop: the run is interrupted
//   (a checkpointer is needed) with toolgate's decision in the interrupt's value, and resumed
//   with the person's answer, `new Command({ resume: { approved: true, approver: "alice" } })`.
//   An approved call runs once, recorded as the approver's; a refused one is not run, the model
//   is told, and toolgate's pending approval is withdrawn.
// - A rewrite runs with the rewritten arguments.
// - The run is reported after the tool returns (a ToolMessage with status "error" as an error)
//   or throws (recorded, then thrown as without toolgate); a sidecar that cannot be reached
//   fails the run, unless `failOpen`.

import { ToolMessage } from "@langchain/core/messages";
import { type Command, interrupt, isCommand, isGraphBubbleUp } from "@langchain/langgraph";
import { type AgentMiddleware, createMiddleware } from "langchain";

import { Unavailable } from "../errors.js";
import type { Decision } from "../model.js";
import type { DecideOptions, Toolgate } from "../toolgate.js";
import { fingerprint, Kept, messageOf, overruled, refusal, stopwatch, withdraw } from "./seam.js";

export interface ToolgateMiddlewareOptions extends DecideOptions {
  /** Run a tool unrecorded when the sidecar cannot be reached (default: the run fails). */
  failOpen?: boolean;
  /** How many calls waiting for a person are kept between the interrupt and the resume. */
  maxPending?: number;
}

/** What the run is resumed with for a call that waited for a person. */
export interface ApprovalAnswer {
  approved: boolean;
  /** Who answered, recorded as the approver (default "langchain:user"). */
  approver?: string;
  comment?: string;
}

/** Agent middleware that has `toolgate` decide every tool call first. */
export function toolgateMiddleware(toolgate: Toolgate, options: ToolgateMiddlewareOptions = {}): AgentMiddleware {
  const { failOpen = false, maxPending = 10_000, ...decideOptions } = options;
  // Decisions waiting for a person, by tool call (and the call they were made for): a resumed
  // run runs the middleware again from the start, and must not decide the call a second time.
  const waiting = new Kept<{ asked: string; decision: Decision }>(maxPending);

  return createMiddleware({
    name: "ToolgateMiddleware",
    wrapToolCall: async (request, handler): Promise<ToolMessage | Command> => {
      const call = request.toolCall;
      const name = call.name;
      const callId = call.id ?? "";
      const args = { ...(call.args ?? {}) } as Record<string, unknown>;
      const refused = (content: string) => new ToolMessage({ content, tool_call_id: callId, name, status: "error" });
      const asked = fingerprint(name, args);
      const thread = request.runtime?.configurable?.thread_id;
      // A waiting call is its thread's: another thread's call under the same id is not it.
      const key = `${thread ?? ""}\n${callId}`;
      const kept = waiting.get(key);
      let decision = kept?.asked === asked ? kept.decision : undefined;
      if (decision === undefined) {
        try {
          decision = await toolgate.decide(name, args, {
            ...decideOptions,
            ...(thread ? { sessionId: String(thread) } : {}),
            idempotencyKey: callId ? `langchain:${callId}` : "",
          });
        } catch (error) {
          // Only a sidecar that cannot be reached: a refusal or a bad request never runs it.
          if (failOpen && error instanceof Unavailable) return handler(request);
          throw error;
        }
      }
      let approver = "";
      if (decision.outcome === "require_approval") {
        waiting.set(key, { asked, decision });
        const answer = interrupt<object, ApprovalAnswer | undefined>({
          toolgate: { decisionId: decision.decisionId, tool: name, args, reason: decision.reason },
        });
        waiting.delete(key);
        if (answer?.approved !== true) {
          await withdraw(toolgate, decision, `refused in the run${answer?.comment ? `: ${answer.comment}` : ""}`);
          return refused(`a person refused this call: ${decision.reason}`);
        }
        // The person's approval here stands only while toolgate's own still waits.
        const approval = await toolgate.awaitApproval(decision, 0);
        const why = overruled(approval);
        if (why !== undefined) return refused(why);
        approver = approval.state === "pending" ? String(answer.approver || "langchain:user") : "";
      } else if (decision.outcome !== "allow" && decision.outcome !== "rewrite") {
        return refused(refusal(decision));
      }
      const runArgs = decision.outcome === "rewrite" ? decision.args : args;
      const took = stopwatch();
      let result: ToolMessage | Command;
      try {
        result = await handler(runArgs === args ? request : { ...request, toolCall: { ...call, args: runArgs } });
      } catch (error) {
        if (isGraphBubbleUp(error)) throw error; // the tool paused the run itself: it runs again on resume
        await toolgate.execute(decision, runArgs, {
          durationUs: took(), status: "error", error: messageOf(error), approvedInHarness: approver,
        });
        throw error;
      }
      const message = ToolMessage.isInstance(result) ? result : isCommand(result) ? commandMessage(result) : undefined;
      const failed = message?.status === "error";
      const output = message === undefined ? "" : typeof message.content === "string"
        ? message.content : JSON.stringify(message.content);
      const reported = await toolgate.execute(decision, runArgs, {
        output, durationUs: took(), status: failed ? "error" : "ok",
        error: failed ? output.slice(0, 1000) : "", approvedInHarness: approver,
      });
      // Output past the decision's limit reaches the model cut, as toolgate cut it.
      if (reported.truncated && message !== undefined && message === result) {
        return new ToolMessage({ content: reported.output, tool_call_id: message.tool_call_id, name: message.name, status: message.status });
      }
      return result;
    },
  });
}

/** The ToolMessage a tool that returned a Command put in the state, if it did. */
function commandMessage(command: Command): ToolMessage | undefined {
  const update = command.update as { messages?: unknown[] } | undefined;
  return update?.messages?.find((m): m is ToolMessage => ToolMessage.isInstance(m));
}
