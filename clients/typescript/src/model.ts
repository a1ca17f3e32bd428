// The typed results, and the pure steps of a guarded call: answers read, outputs prepared.

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
export class GuardResult {
  constructor(
    readonly decision: Decision,
    readonly ran: boolean,
    readonly output: string = "",
    readonly truncated: boolean = false,
    /** Why the call did not run, in words fit for the model. */
    readonly reason: string = "",
    readonly approval?: Approval,
    readonly report?: Report,
  ) {}

  get outcome(): Outcome {
    return this.decision.outcome;
  }

  /** Who approved the call; empty when it needed no approval or was not approved. */
  get approvedBy(): string {
    return this.approval?.state === "approved" ? this.approval.approver : "";
  }

  /** The text to give the model: the output, or the denial and the policies behind it. */
  forModel(): string {
    if (this.ran) return this.output;
    const policies = this.decision.policyIds.join(", ") || "none";
    return `[toolgate: ${this.decision.outcome}] ${this.reason} (policies: ${policies})`;
  }
}

const OUTCOMES: Record<string, Outcome> = {
  ALLOW: "allow",
  DENY: "deny",
  REQUIRE_APPROVAL: "require_approval",
  DRY_RUN: "dry_run",
  REWRITE: "rewrite",
};

export function decisionFrom(answer: DecideResponse__Output, args: Record<string, unknown>): Decision {
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

export function approvalFrom(answer: Approval__Output): Approval {
  const state = String(answer.state).toLowerCase();
  const outcome = OUTCOMES[answer.verdict_outcome];
  return {
    decisionId: answer.decision_id,
    state: (state === "approval_state_unspecified" ? "pending" : state) as Approval["state"],
    approver: answer.approver,
    comment: answer.comment,
    decidedAt: answer.decided_at,
    outcome: outcome === "allow" || outcome === "deny" ? outcome : "",
    seq: Number(answer.seq),
  };
}

export function reportFrom(answer: ExecuteResponse__Output): Report {
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
export function textOf(output: unknown): string {
  if (typeof output === "string") return output;
  if (output instanceof Uint8Array) return new TextDecoder().decode(output);
  try {
    const json = JSON.stringify(output, (_key, value) =>
      typeof value === "bigint" ? value.toString() : value,
    );
    return json ?? String(output);
  } catch {
    return String(output);
  }
}

/** What to send of an output, and its whole size in bytes: cut to one character past what the
 * decision hands back (so toolgate still sees that it was cut), and to `MAX_OUTPUT_BYTES`. */
export function clipped(text: string, maxOutputChars: number): [string, number] {
  const size = Buffer.byteLength(text, "utf8");
  if (maxOutputChars > 0 && text.length > maxOutputChars + 1) {
    const chars = Array.from(text);
    if (chars.length > maxOutputChars + 1) text = chars.slice(0, maxOutputChars + 1).join("");
  }
  if (Buffer.byteLength(text, "utf8") > MAX_OUTPUT_BYTES) {
    const bytes = Buffer.from(text, "utf8").subarray(0, MAX_OUTPUT_BYTES);
    text = new TextDecoder("utf-8", { fatal: false }).decode(bytes).replace(/\uFFFD$/, "");
  }
  return [text, size];
}
