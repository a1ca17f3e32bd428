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
import { tool as defineTool, } from "@openai/agents-core";
import { Unavailable } from "../errors.js";
import { fingerprint, Kept, messageOf, overruled, refusal, stopwatch, withdraw } from "./seam.js";
// Tools already governed (or made by `define`): never wrapped twice.
const governed = new WeakSet();
// A call id no model gives: whether a tool is approved for it says whether it is approved for all.
const PROBE = "\u0000toolgate-probe";
/** Governs agents' function tools with `toolgate`. */
export class ToolgateGuard {
    toolgate;
    approver;
    failOpen;
    decideOptions;
    calls;
    // Approvals given in the SDK for calls this guard kept no decision of (a resumed process).
    approvers;
    // The error a `define`d tool threw, by the call's details, seen before the SDK makes text of it.
    failures = new WeakMap();
    constructor(toolgate, options = {}) {
        this.toolgate = toolgate;
        const { approver = "openai-agents:user", failOpen = false, maxPending = 10_000, ...decideOptions } = options;
        this.approver = approver;
        this.failOpen = failOpen;
        this.decideOptions = decideOptions;
        this.calls = new Kept(maxPending);
        this.approvers = new Kept(maxPending);
    }
    /** A clone of `agent` whose function tools are each governed; the others (hosted tools,
     * handoffs, MCP servers' tools, computer and shell tools) are left as they are (docs say so). */
    agent(agent) {
        const tools = agent.tools.map((t) => (t.type === "function" ? this.tool(t) : t));
        return agent.clone({ tools });
    }
    /** The SDK's `tool(options)`, governed, with the errors its `execute` throws recorded. */
    define(options) {
        const execute = options.execute;
        const failures = this.failures;
        const made = defineTool({
            ...options,
            async execute(input, context, details) {
                try {
                    return await execute(input, context, details);
                }
                catch (error) {
                    if (details)
                        failures.set(details, error);
                    throw error;
                }
            },
        });
        return this.tool(made);
    }
    /** A copy of `original` whose every call toolgate decides first and records after. */
    tool(original) {
        if (governed.has(original))
            return original;
        const own = original.needsApproval;
        const needsApproval = async (context, input, callId) => {
            const call = await this.decided(original.name, input, callId ?? "", context);
            const outcome = call.decision?.outcome;
            if (outcome === "require_approval") {
                call.interrupted = true;
                return true;
            }
            if (outcome !== undefined && outcome !== "allow" && outcome !== "rewrite")
                return false; // refused by the guardrail
            return own(context, input, callId);
        };
        const gate = {
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
                    if (approved === undefined && call.interrupted)
                        return { behavior: { type: "allow" } };
                }
                this.calls.delete(call.key);
                return { behavior: { type: "rejectContent", message: refusal(decision) } };
            },
        };
        const invoke = async (context, input, details) => {
            const callId = details?.toolCall?.callId ?? "";
            const call = this.calls.get(`${sessionOf(context) ?? ""}\n${key(callId, original.name, parse(input))}`);
            if (!call?.admitted)
                return "toolgate: this call was not decided"; // only through the guardrail
            this.calls.delete(call.key);
            const decision = call.decision;
            if (decision === null)
                return original.invoke(context, input, details); // failOpen: unrecorded
            const runInput = decision.outcome === "rewrite" ? JSON.stringify(decision.args) : input;
            const took = stopwatch();
            const report = (outcome) => this.toolgate.execute(decision, decision.args, {
                durationUs: took(), approvedInHarness: call.approver,
                ...("error" in outcome
                    ? { status: timedOut(outcome.error) ? "timeout" : "error", error: messageOf(outcome.error) }
                    : { output: outcome.output }),
            });
            let output;
            try {
                output = await original.invoke(context, runInput, details);
            }
            catch (error) {
                await report({ error });
                throw error;
            }
            const failed = details ? this.failures.get(details) : undefined;
            const reported = await report(failed === undefined ? { output } : { error: failed });
            // Output past the decision's limit reaches the model cut, as toolgate cut it.
            return reported.truncated ? reported.output : output;
        };
        const copy = {
            ...original, needsApproval, invoke,
            // First, so that no other guardrail's refusal comes before toolgate's.
            inputGuardrails: [gate, ...(original.inputGuardrails ?? [])],
        };
        governed.add(copy);
        return copy;
    }
    /** Approves an interrupted call in the SDK, as `approver` (the guard's by default). Never a
     * blanket approval: each call toolgate holds needs its own. */
    approve(state, item, approver = "") {
        const itemKey = keyOf(item);
        const call = this.waitingFor(itemKey);
        if (call)
            call.approver = approver || this.approver;
        else
            this.approvers.set(itemKey, approver || this.approver);
        state.approve(item);
    }
    /** Refuses an interrupted call in the SDK and withdraws toolgate's pending approval. */
    async reject(state, item, reason = "") {
        const call = this.waitingFor(keyOf(item));
        if (call) {
            this.calls.delete(call.key);
            if (call.decision)
                await withdraw(this.toolgate, call.decision, `refused in the run${reason ? `: ${reason}` : ""}`);
        }
        state.reject(item, { message: reason ? `a person refused this call: ${reason}` : "a person refused this call" });
    }
    /** The call this guard interrupted for an item of the SDK's interruptions (in whichever
     * session: the item does not say). */
    waitingFor(itemKey) {
        for (const call of this.calls.values()) {
            if (call.interrupted && call.key.endsWith(`\n${itemKey}`))
                return call;
        }
        return undefined;
    }
    /** The call's decision, made the first time it is asked for (by this very call). */
    async decided(name, args, callId, context) {
        // The call, in its session: another session's call under the same id is not it.
        const callKey = `${sessionOf(context) ?? ""}\n${key(callId, name, args)}`;
        const kept = this.calls.get(callKey);
        if (kept)
            return kept;
        let decision;
        try {
            const session = sessionOf(context);
            decision = await this.toolgate.decide(name, (args ?? {}), {
                ...this.decideOptions, ...(session ? { sessionId: session } : {}), idempotencyKey: `openai-agents:${callId}`,
            });
        }
        catch (error) {
            // Only a sidecar that cannot be reached: a refusal or a bad request never runs it.
            if (!(this.failOpen && error instanceof Unavailable))
                throw error;
            decision = null;
        }
        const call = { key: callKey, decision, interrupted: false, admitted: false, approver: "" };
        this.calls.set(callKey, call);
        return call;
    }
}
/** A call's key: its id, bound to the call (a model may give two calls one id). */
const key = (callId, name, args) => `${callId}\n${fingerprint(name, args)}`;
function keyOf(item) {
    const raw = item.rawItem;
    return key(raw.callId ?? "", raw.name ?? item.name ?? "", parse(raw.arguments));
}
/** The model's arguments as toolgate is asked about them (text that is no JSON, as such). */
function parse(text) {
    try {
        return JSON.parse(text || "{}");
    }
    catch {
        return { _unparsed: text };
    }
}
function sessionOf(context) {
    const given = context?.context;
    const named = given?.sessionId ?? given?.session_id;
    return typeof named === "string" && named ? named : undefined;
}
function timedOut(error) {
    return error instanceof Error && error.name === "ToolTimeoutError";
}
