import type { Approval__Output } from "./generated/toolgate/v1/Approval.js";
import type { DecideResponse__Output } from "./generated/toolgate/v1/DecideResponse.js";
import type { ExecuteResponse__Output } from "./generated/toolgate/v1/ExecuteResponse.js";
export type Outcome = "allow" | "deny" | "require_approval" | "dry_run" | "rewrite";
/** toolgate's answer to Decide. */
export interface Decision {
    decisionId: string;
    outcome: Outcome;
    reason: string;
    policyIds: string[];
    argsHash: string;
    maxOutputChars: number;
    /** The time the tool may run (0: no limit); `guard` applies it. */
    timeoutMs: number;
    /** The arguments to run with: the rewritten ones after a rewrite, else the requested ones. */
    args: Record<string, unknown>;
    seq: number;
}
/** Where the approval of a decision stands. */
export interface Approval {
    decisionId: string;
    state: "pending" | "approved" | "rejected" | "expired" | "withdrawn";
    /** Who gave the verdict; empty for an expiry or a withdrawal. */
    approver: string;
    comment: string;
    decidedAt: string;
    /** What the verdict lets through ("" while pending). */
    outcome: "allow" | "deny" | "";
    seq: number;
}
/** toolgate's answer to Execute. */
export interface Report {
    output: string;
    truncated: boolean;
    resultBytes: number;
    seq: number;
    violation: string;
}
/** What a guarded call came to. */
export declare class GuardResult {
    readonly decision: Decision;
    readonly ran: boolean;
    readonly output: string;
    readonly truncated: boolean;
    /** Why the call did not run, in words fit for the model. */
    readonly reason: string;
    readonly approval?: Approval | undefined;
    readonly report?: Report | undefined;
    constructor(decision: Decision, ran: boolean, output?: string, truncated?: boolean, 
    /** Why the call did not run, in words fit for the model. */
    reason?: string, approval?: Approval | undefined, report?: Report | undefined);
    get outcome(): Outcome;
    /** Who approved the call; empty when it needed no approval or was not approved. */
    get approvedBy(): string;
    /** The text to give the model: the output, or the denial and the policies behind it. */
    forModel(): string;
}
export declare function decisionFrom(answer: DecideResponse__Output, args: Record<string, unknown>): Decision;
export declare function approvalFrom(answer: Approval__Output): Approval;
export declare function reportFrom(answer: ExecuteResponse__Output): Report;
/** The largest output sent to Execute: the server's default `limits.max_output_bytes`. */
export declare const MAX_OUTPUT_BYTES: number;
/** A tool's output as text: a string as it is, bytes decoded as UTF-8 (a bad byte becomes
 * U+FFFD), anything else as JSON (what JSON cannot encode, by `String`). */
export declare function textOf(output: unknown): string;
/** What to send of an output, and its whole size in bytes: cut to one character past what the
 * decision hands back (so toolgate still sees that it was cut), and to `MAX_OUTPUT_BYTES`. */
export declare function clipped(text: string, maxOutputChars: number): [string, number];
