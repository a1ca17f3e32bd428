// The typed results, and the pure steps of a guarded call: answers read, outputs prepared.
/** What a guarded call came to. */
export class GuardResult {
    decision;
    ran;
    output;
    truncated;
    reason;
    approval;
    report;
    constructor(decision, ran, output = "", truncated = false, 
    /** Why the call did not run, in words fit for the model. */
    reason = "", approval, report) {
        this.decision = decision;
        this.ran = ran;
        this.output = output;
        this.truncated = truncated;
        this.reason = reason;
        this.approval = approval;
        this.report = report;
    }
    get outcome() {
        return this.decision.outcome;
    }
    /** Who approved the call; empty when it needed no approval or was not approved. */
    get approvedBy() {
        return this.approval?.state === "approved" ? this.approval.approver : "";
    }
    /** The text to give the model: the output, or the denial and the policies behind it. */
    forModel() {
        if (this.ran)
            return this.output;
        const policies = this.decision.policyIds.join(", ") || "none";
        return `[toolgate: ${this.decision.outcome}] ${this.reason} (policies: ${policies})`;
    }
}
const OUTCOMES = {
    ALLOW: "allow",
    DENY: "deny",
    REQUIRE_APPROVAL: "require_approval",
    DRY_RUN: "dry_run",
    REWRITE: "rewrite",
};
export function decisionFrom(answer, args) {
    return {
        decisionId: answer.decision_id,
        outcome: OUTCOMES[answer.outcome] ?? "deny",
        reason: answer.reason,
        policyIds: answer.policy_ids,
        argsHash: answer.args_hash,
        maxOutputChars: answer.max_output_chars,
        timeoutMs: answer.timeout_ms,
        args: answer.rewritten_args_json ? JSON.parse(answer.rewritten_args_json) : { ...args },
        seq: Number(answer.seq),
    };
}
export function approvalFrom(answer) {
    const state = String(answer.state).toLowerCase();
    const outcome = OUTCOMES[answer.verdict_outcome];
    return {
        decisionId: answer.decision_id,
        state: (state === "approval_state_unspecified" ? "pending" : state),
        approver: answer.approver,
        comment: answer.comment,
        decidedAt: answer.decided_at,
        outcome: outcome === "allow" || outcome === "deny" ? outcome : "",
        seq: Number(answer.seq),
    };
}
export function reportFrom(answer) {
    return {
        output: answer.output,
        truncated: answer.truncated,
        resultBytes: Number(answer.result_bytes),
        seq: Number(answer.seq),
        violation: answer.violation,
    };
}
/** The largest output sent to Execute: the server's default `limits.max_output_bytes`. */
export const MAX_OUTPUT_BYTES = 16 * 1024 * 1024;
/** A tool's output as text: a string as it is, bytes decoded as UTF-8 (a bad byte becomes
 * U+FFFD), anything else as JSON (what JSON cannot encode, by `String`). */
export function textOf(output) {
    if (typeof output === "string")
        return output;
    if (output instanceof Uint8Array)
        return new TextDecoder().decode(output);
    try {
        const json = JSON.stringify(output, (_key, value) => typeof value === "bigint" ? value.toString() : value);
        return json ?? String(output);
    }
    catch {
        return String(output);
    }
}
/** What to send of an output, and its whole size in bytes: cut to one character past what the
 * decision hands back (so toolgate still sees that it was cut), and to `MAX_OUTPUT_BYTES`. */
export function clipped(text, maxOutputChars) {
    const size = Buffer.byteLength(text, "utf8");
    if (maxOutputChars > 0 && text.length > maxOutputChars + 1) {
        const chars = Array.from(text);
        if (chars.length > maxOutputChars + 1)
            text = chars.slice(0, maxOutputChars + 1).join("");
    }
    if (Buffer.byteLength(text, "utf8") > MAX_OUTPUT_BYTES) {
        const bytes = Buffer.from(text, "utf8").subarray(0, MAX_OUTPUT_BYTES);
        text = new TextDecoder("utf-8", { fatal: false }).decode(bytes).replace(/\uFFFD$/, "");
    }
    return [text, size];
}
