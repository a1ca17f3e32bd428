import * as grpc from "@grpc/grpc-js";
import { type Approval, type Decision, GuardResult, type Report } from "./model.js";
export interface ToolgateOptions {
    /** `host:port` (default `127.0.0.1:50051`) or `unix:/path/to.sock`. */
    target?: string;
    sessionId: string;
    actorId: string;
    actorKind?: string;
    delegationChain?: string[];
    taskType?: string;
    /** How long `guard` waits for a verdict before it withdraws the approval (default 300 s). */
    approvalTimeoutMs?: number;
    /** Every RPC's deadline (default 10 s); an Await's is its wait plus this. */
    rpcTimeoutMs?: number;
    /** The bearer token, when the server's auth is on. */
    token?: string;
    /** `grpc.credentials.createSsl(ca, key, cert)` for TLS (the last two for mutual TLS). */
    credentials?: grpc.ChannelCredentials;
}
export interface DecideOptions {
    /** The session of this call, when it is not the client's (a framework's thread or run). */
    sessionId?: string;
    action?: string;
    resource?: {
        type?: string;
        id?: string;
        classification?: string;
    };
    context?: Record<string, unknown>;
    allowWrite?: boolean;
    allowBash?: boolean;
    maxOutputChars?: number;
    dryRun?: boolean;
    idempotencyKey?: string;
    timeoutMs?: number;
}
export interface ReportOptions {
    output?: unknown;
    durationUs?: number;
    status?: "ok" | "error" | "timeout";
    error?: string;
    wrapOutput?: boolean;
    /** Who approved the call in the harness (a framework's own approval), recorded as theirs. */
    approvedInHarness?: string;
}
/** A tool: called with the arguments it may run with, and a signal aborted at its timeout. */
export type Tool<T = unknown> = (args: Record<string, unknown>, run: {
    signal: AbortSignal;
}) => T | Promise<T>;
export interface GuardOptions extends DecideOptions {
    /** Run instead of the tool when only a dry run is allowed. */
    dryRunner?: Tool;
    /** Throw `Denied` instead of returning a result with `ran: false`. */
    raiseOnDeny?: boolean;
}
export declare class Toolgate {
    readonly sessionId: string;
    readonly approvalTimeoutMs: number;
    readonly rpcTimeoutMs: number;
    private readonly gate;
    private readonly approvals;
    private readonly base;
    private readonly token?;
    constructor(options: ToolgateOptions);
    close(): void;
    /** Asks whether `tool` may run with `args`; the answer is on the trail before it comes. */
    decide(tool: string, args: Record<string, unknown>, options?: DecideOptions): Promise<Decision>;
    /** Reports a run of the decided call; throws `Violation` when it breaks its decision. */
    execute(decision: Decision, args: Record<string, unknown>, report?: ReportOptions): Promise<Report>;
    /** Waits up to `timeoutMs` (`approvalTimeoutMs` by default) for the verdict; returns the
     * approval, still pending if none came. */
    awaitApproval(decision: Decision, timeoutMs?: number): Promise<Approval>;
    /** Withdraws a pending approval: no verdict can follow, and the call may not run. */
    withdraw(decision: Decision, reason?: string): Promise<Approval>;
    /** Decides, runs `run(args, { signal })` when allowed, within the decision's `timeoutMs`
     * (the signal is aborted then, and `ToolTimedOut` thrown), reports, and returns the result.
     * A denial is a result with `ran: false`, or `Denied` with `raiseOnDeny`. The tool's own
     * error is reported and thrown again; a run whose report fails throws `NotRecorded`. */
    guard<T>(tool: string, args: Record<string, unknown>, run: Tool<T>, options?: GuardOptions): Promise<GuardResult>;
    /** `guard` from a decision already made: after an `Unavailable` during the wait for its
     * approval (`error.decision`), wait again and run as `guard` would. */
    resume<T>(decision: Decision, run: Tool<T>, options?: Pick<GuardOptions, "dryRunner" | "raiseOnDeny">): Promise<GuardResult>;
    /** Wraps a function as a guarded tool: calling the result decides, runs and reports, and
     * resolves to the processed output; a denial rejects with `Denied`. */
    tool<A extends Record<string, unknown>>(name: string, fn: (args: A, run: {
        signal: AbortSignal;
    }) => unknown, options?: Omit<GuardOptions, "raiseOnDeny">): (args: A) => Promise<string>;
    private admit;
    /** Withdraws an approval nobody answered in time; a verdict given meanwhile stands. */
    private giveUp;
    private record;
    private executeRequest;
    private report;
    /** One RPC within its deadline; `ready`: wait for a connection until then (a retry). */
    private call;
}
