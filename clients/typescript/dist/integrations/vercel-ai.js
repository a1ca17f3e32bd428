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
import { Unavailable } from "../errors.js";
import { fingerprint, Kept, messageOf, overruled, refusal, stopwatch, withdraw } from "./seam.js";
/** What a refused call returns, so that `toModelOutput` shows the model the SDK's refusal. */
const REFUSED = "toolgate:refused";
const isRefused = (value) => typeof value === "object" && value !== null && value.type === REFUSED;
/** `tools`, each call decided by `toolgate` before it runs and recorded after. */
export function guardTools(tools, toolgate, options = {}) {
    const { approver, failOpen = false, maxPending = 10_000, ...decideOptions } = options;
    // By tool call: decided in needsApproval, taken in execute (or by settle, after a refusal).
    // The id comes from the model, which may give two calls one id: a kept decision is taken
    // only by the very call (tool and input) it was made for.
    const decisions = new Kept(maxPending);
    async function decisionFor(name, input, call, take = false) {
        const asked = fingerprint(name, input);
        const kept = decisions.get(call.toolCallId);
        if (kept !== undefined && kept.asked === asked) {
            // `execute` takes it at once, before anything awaits: one decision is never handed to two
            // runs, however many calls the model gave one id.
            if (take)
                decisions.delete(call.toolCallId);
            return kept.decision;
        }
        let decision;
        try {
            decision = await toolgate.decide(name, (input ?? {}), {
                ...decideOptions, idempotencyKey: `vercel-ai:${call.toolCallId}`,
            });
        }
        catch (error) {
            // Only a sidecar that cannot be reached: a refusal or a bad request never runs it.
            if (!(failOpen && error instanceof Unavailable))
                throw error;
            decision = null;
        }
        if (!take)
            decisions.set(call.toolCallId, { asked, decision });
        return decision;
    }
    function approverOf(call) {
        if (typeof approver === "function")
            return approver(call);
        if (approver)
            return approver;
        const context = call.experimental_context;
        const named = context?.toolgate?.approver;
        return typeof named === "string" && named ? named : "vercel-ai:user";
    }
    /** The input to run with and who approved it, or why the call may not run. */
    async function admit(decision, call) {
        switch (decision.outcome) {
            case "allow":
            case "rewrite":
                return { input: decision.args, approvedBy: "" };
            case "require_approval": {
                // Only the SDK's own approval lets it through: its answer is in the messages.
                if (approvalFor(call.messages, call.toolCallId)?.approved !== true)
                    return { type: REFUSED, reason: refusal(decision) };
                // And only while toolgate's own approval still waits.
                const approval = await toolgate.awaitApproval(decision, 0);
                const why = overruled(approval);
                if (why !== undefined)
                    return { type: REFUSED, reason: why };
                return { input: decision.args, approvedBy: approval.state === "pending" ? approverOf(call) : "" };
            }
            case "deny":
            case "dry_run":
                return { type: REFUSED, reason: refusal(decision) };
        }
    }
    const signalOf = (decision, call) => {
        const signals = [call.abortSignal, decision.timeoutMs > 0 ? AbortSignal.timeout(decision.timeoutMs) : undefined]
            .filter((signal) => signal !== undefined);
        return signals.length > 0 ? AbortSignal.any(signals) : undefined;
    };
    const report = (decision, input, approvedBy, took, outcome) => toolgate.execute(decision, input, {
        durationUs: took(),
        approvedInHarness: approvedBy,
        ...("error" in outcome
            ? { status: "error", error: messageOf(outcome.error) }
            : { output: outcome.output }),
    });
    const guarded = {};
    for (const [name, original] of Object.entries(tools)) {
        const run = original.execute;
        if (typeof run !== "function") {
            // Run by the provider or by the client: no call of it reaches a seam here (docs say so).
            guarded[name] = original;
            continue;
        }
        const needsApproval = async (input, call) => {
            const own = typeof original.needsApproval === "function"
                ? await original.needsApproval(input, call)
                : Boolean(original.needsApproval);
            const decision = await decisionFor(name, input, call);
            return own || decision?.outcome === "require_approval";
        };
        const toModelOutput = async (result) => {
            if (isRefused(result.output))
                return { type: "execution-denied", reason: result.output.reason };
            if (original.toModelOutput)
                return original.toModelOutput(result);
            return typeof result.output === "string"
                ? { type: "text", value: result.output }
                : { type: "json", value: (result.output ?? null) };
        };
        // A streaming tool (an async generator) stays one, so that the SDK still hands out its
        // preliminary results.
        const streaming = run[Symbol.toStringTag] === "AsyncGeneratorFunction";
        const execute = streaming
            ? async function* (input, call) {
                const decision = await decisionFor(name, input, call, true);
                if (decision === null) {
                    yield* run.call(original, input, call);
                    return;
                }
                const admitted = await admit(decision, call);
                if (isRefused(admitted)) {
                    yield admitted;
                    return;
                }
                const took = stopwatch();
                let last;
                let ended = "cut";
                try {
                    const parts = run.call(original, admitted.input, { ...call, abortSignal: signalOf(decision, call) });
                    for await (const part of parts) {
                        last = part;
                        yield part;
                    }
                    ended = "done";
                }
                catch (error) {
                    ended = "failed";
                    await report(decision, admitted.input, admitted.approvedBy, took, { error });
                    throw error;
                }
                finally {
                    // The SDK stopped reading (a cancelled run): the tool did not finish.
                    if (ended === "cut") {
                        await report(decision, admitted.input, admitted.approvedBy, took, { error: "the run was cancelled" });
                    }
                }
                const reported = await report(decision, admitted.input, admitted.approvedBy, took, { output: last });
                // Output past the decision's limit: its cut text is the last part, which the model gets.
                if (reported.truncated)
                    yield reported.output;
            }
            : async function (input, call) {
                const decision = await decisionFor(name, input, call, true);
                if (decision === null)
                    return run.call(original, input, call);
                const admitted = await admit(decision, call);
                if (isRefused(admitted))
                    return admitted;
                const took = stopwatch();
                let output;
                try {
                    output = await run.call(original, admitted.input, { ...call, abortSignal: signalOf(decision, call) });
                }
                catch (error) {
                    await report(decision, admitted.input, admitted.approvedBy, took, { error });
                    throw error; // the SDK hands the model a tool error, and the run goes on
                }
                const reported = await report(decision, admitted.input, admitted.approvedBy, took, { output });
                // Output past the decision's limit reaches the model cut, as toolgate cut it.
                return reported.truncated ? reported.output : output;
            };
        guarded[name] = { ...original, needsApproval, execute, toModelOutput };
    }
    async function settle(messages) {
        const last = messages.at(-1);
        if (last?.role !== "tool")
            return;
        for (const part of last.content) {
            if (part.type !== "tool-approval-response" || part.approved)
                continue;
            const toolCallId = callOf(messages, part.approvalId);
            const decision = toolCallId === undefined ? undefined : decisions.get(toolCallId)?.decision;
            if (toolCallId === undefined || !decision || decision.outcome !== "require_approval")
                continue;
            decisions.delete(toolCallId);
            await withdraw(toolgate, decision, `refused in the run${part.reason ? `: ${part.reason}` : ""}`);
        }
    }
    return { tools: guarded, settle };
}
/** The tool call an approval request was made for. */
function callOf(messages, approvalId) {
    for (const message of messages) {
        if (message.role !== "assistant" || typeof message.content === "string")
            continue;
        for (const part of message.content) {
            if (part.type === "tool-approval-request" && part.approvalId === approvalId)
                return part.toolCallId;
        }
    }
    return undefined;
}
/** The person's answer to the approval request of `toolCallId`, in the messages resumed with. */
function approvalFor(messages, toolCallId) {
    const last = messages.at(-1);
    if (last?.role !== "tool")
        return undefined;
    return last.content.find((part) => part.type === "tool-approval-response" && callOf(messages, part.approvalId) === toolCallId);
}
