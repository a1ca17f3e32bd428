// The client: decide, run within the decision's time, report. Async by nature.

import * as grpc from "@grpc/grpc-js";
import * as protoLoader from "@grpc/proto-loader";

import {
  Denied, NotRecorded, ToolgateError, ToolTimedOut, Unavailable, Violation, errorFrom,
} from "./errors.js";
import { descriptor } from "./generated/descriptor.js";
import type { ProtoGrpcType as ApprovalsProto } from "./generated/approvals.js";
import type { ProtoGrpcType as GateProto } from "./generated/gate.js";
import type { ApprovalsClient } from "./generated/toolgate/v1/Approvals.js";
import type { ExecuteRequest } from "./generated/toolgate/v1/ExecuteRequest.js";
import type { GateClient } from "./generated/toolgate/v1/Gate.js";
import {
  type Approval, type Decision, GuardResult, type Report, approvalFrom, clipped, decisionFrom,
  reportFrom, textOf,
} from "./model.js";

// The options the generated types assume (scripts/generate.mjs).
const definition = protoLoader.fromJSON(descriptor as object, {
  keepCase: true,
  longs: Number,
  enums: String,
  defaults: true,
  oneofs: true,
});
const loaded = grpc.loadPackageDefinition(definition) as unknown as GateProto & ApprovalsProto;

/** The longest one Await call waits on the server (its own limit). */
const MAX_AWAIT_MS = 600_000;

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
  resource?: { type?: string; id?: string; classification?: string };
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
export type Tool<T = unknown> = (
  args: Record<string, unknown>,
  run: { signal: AbortSignal },
) => T | Promise<T>;

export interface GuardOptions extends DecideOptions {
  /** Run instead of the tool when only a dry run is allowed. */
  dryRunner?: Tool;
  /** Throw `Denied` instead of returning a result with `ran: false`. */
  raiseOnDeny?: boolean;
}

const STATUSES = { ok: "OK", error: "ERROR", timeout: "TIMEOUT" } as const;

export class Toolgate {
  readonly sessionId: string;
  readonly approvalTimeoutMs: number;
  readonly rpcTimeoutMs: number;
  private readonly gate: GateClient;
  private readonly approvals: ApprovalsClient;
  private readonly base: object;
  private readonly token?: string;

  constructor(options: ToolgateOptions) {
    const target = options.target ?? "127.0.0.1:50051";
    const credentials = options.credentials ?? grpc.credentials.createInsecure();
    // Over a unix socket, name a host as the :authority, as the Python client does.
    const channel = target.startsWith("unix:") ? { "grpc.default_authority": "localhost" } : {};
    this.gate = new loaded.toolgate.v1.Gate(target, credentials, channel);
    this.approvals = new loaded.toolgate.v1.Approvals(target, credentials, channel);
    this.sessionId = options.sessionId;
    this.approvalTimeoutMs = options.approvalTimeoutMs ?? 300_000;
    this.rpcTimeoutMs = options.rpcTimeoutMs ?? 10_000;
    this.token = options.token;
    this.base = {
      session_id: options.sessionId,
      task_type: options.taskType ?? "",
      actor: {
        id: options.actorId,
        kind: options.actorKind ?? "agent",
        delegation_chain: options.delegationChain ?? [],
      },
    };
  }

  close(): void {
    this.gate.close();
    this.approvals.close();
  }

  /** Asks whether `tool` may run with `args`; the answer is on the trail before it comes. */
  async decide(tool: string, args: Record<string, unknown>, options: DecideOptions = {}): Promise<Decision> {
    const request = {
      ...this.base,
      ...(options.sessionId ? { session_id: options.sessionId } : {}),
      tool,
      action: options.action ?? "",
      resource: options.resource ?? {},
      args_json: JSON.stringify(args),
      context_json: JSON.stringify(options.context ?? {}),
      options: {
        allow_write: options.allowWrite ?? false,
        allow_bash: options.allowBash ?? false,
        max_output_chars: options.maxOutputChars ?? 0,
      },
      plan: {
        dry_run: options.dryRun ?? false,
        idempotency_key: options.idempotencyKey ?? "",
        timeout_ms: options.timeoutMs ?? 0,
      },
    };
    const answer = await this.call(this.gate, "Decide", request);
    return decisionFrom(answer, args);
  }

  /** Reports a run of the decided call; throws `Violation` when it breaks its decision. */
  async execute(decision: Decision, args: Record<string, unknown>, report: ReportOptions = {}): Promise<Report> {
    return this.report(this.executeRequest(decision, args, report));
  }

  /** Waits up to `timeoutMs` (`approvalTimeoutMs` by default) for the verdict; returns the
   * approval, still pending if none came. */
  async awaitApproval(decision: Decision, timeoutMs = this.approvalTimeoutMs): Promise<Approval> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const left = Math.max(0, deadline - Date.now());
      const wait = Math.min(left, MAX_AWAIT_MS);
      const request = { decision_id: decision.decisionId, timeout_ms: wait };
      // A wait may outlast a restart of the server: it waits for the connection too.
      const approval = approvalFrom(await this.call(this.approvals, "Await", request, wait, true));
      if (approval.state !== "pending" || left === 0) return approval;
    }
  }

  /** Withdraws a pending approval: no verdict can follow, and the call may not run. */
  async withdraw(decision: Decision, reason = ""): Promise<Approval> {
    const request = { decision_id: decision.decisionId, reason };
    return approvalFrom(await this.call(this.approvals, "Withdraw", request));
  }

  /** Decides, runs `run(args, { signal })` when allowed, within the decision's `timeoutMs`
   * (the signal is aborted then, and `ToolTimedOut` thrown), reports, and returns the result.
   * A denial is a result with `ran: false`, or `Denied` with `raiseOnDeny`. The tool's own
   * error is reported and thrown again; a run whose report fails throws `NotRecorded`. */
  async guard<T>(tool: string, args: Record<string, unknown>, run: Tool<T>,
                 options: GuardOptions = {}): Promise<GuardResult> {
    const { dryRunner, raiseOnDeny, ...decide } = options;
    return this.resume(await this.decide(tool, args, decide), run, { dryRunner, raiseOnDeny });
  }

  /** `guard` from a decision already made: after an `Unavailable` during the wait for its
   * approval (`error.decision`), wait again and run as `guard` would. */
  async resume<T>(decision: Decision, run: Tool<T>,
                  options: Pick<GuardOptions, "dryRunner" | "raiseOnDeny"> = {}): Promise<GuardResult> {
    const { dryRunner, raiseOnDeny } = options;
    let admitted: { decision: Decision; approval?: Approval };
    try {
      admitted = await this.admit(decision);
    } catch (error) {
      if (error instanceof Denied && !raiseOnDeny) return error.result;
      throw error;
    }
    const { approval } = admitted;
    const runner = decision.outcome === "dry_run" ? dryRunner : run;
    if (runner === undefined) {
      const result = new GuardResult(decision, false, "", false,
        "only a dry run is allowed and none was given", approval);
      if (raiseOnDeny) throw new Denied(result);
      return result;
    }
    const started = process.hrtime.bigint();
    const elapsed = () => Number((process.hrtime.bigint() - started) / 1000n);
    const ran = await runWithin(runner, decision.args, decision.timeoutMs);
    if (ran.kind === "timeout") {
      const error = `ran out its ${decision.timeoutMs} ms`;
      const recorded = await this.record(decision, approval, undefined, undefined,
        { durationUs: elapsed(), status: "timeout", error });
      throw new ToolTimedOut(decision, recorded.report as Report);
    }
    if (ran.kind === "error") {
      await this.record(decision, approval, undefined, ran.error,
        { durationUs: elapsed(), status: "error", error: String((ran.error as Error)?.message ?? ran.error) });
      throw ran.error;
    }
    return this.record(decision, approval, ran.output, undefined, { durationUs: elapsed() });
  }

  /** Wraps a function as a guarded tool: calling the result decides, runs and reports, and
   * resolves to the processed output; a denial rejects with `Denied`. */
  tool<A extends Record<string, unknown>>(name: string, fn: (args: A, run: { signal: AbortSignal }) => unknown,
                                          options: Omit<GuardOptions, "raiseOnDeny"> = {}): (args: A) => Promise<string> {
    return async (args: A) => {
      const result = await this.guard(name, args, fn as Tool, { ...options, raiseOnDeny: true });
      return result.output;
    };
  }

  private async admit(decision: Decision): Promise<{ decision: Decision; approval?: Approval }> {
    if (decision.outcome === "deny") {
      throw new Denied(new GuardResult(decision, false, "", false, decision.reason));
    }
    if (decision.outcome !== "require_approval") return { decision };
    let approval: Approval;
    try {
      approval = await this.awaitApproval(decision);
      if (approval.state === "pending") approval = await this.giveUp(decision);
    } catch (error) {
      // The decision stands: `resume(error.decision, run)` waits again.
      if (error instanceof Unavailable) error.decision = decision;
      throw error;
    }
    if (approval.state === "pending" || approval.state === "withdrawn") {
      const waited = this.approvalTimeoutMs / 1000;
      throw new Denied(new GuardResult(decision, false, "", false,
        `no approval within ${waited} s: withdrawn`, approval));
    }
    if (approval.outcome !== "allow") {
      const by = approval.approver ? ` by ${approval.approver}` : "";
      throw new Denied(new GuardResult(decision, false, "", false,
        `approval ${approval.state}${by}: ${approval.comment}`, approval));
    }
    return { decision, approval };
  }

  /** Withdraws an approval nobody answered in time; a verdict given meanwhile stands. */
  private async giveUp(decision: Decision): Promise<Approval> {
    try {
      return await this.withdraw(decision, `the agent stopped waiting after ${this.approvalTimeoutMs / 1000} s`);
    } catch (error) {
      if (error instanceof ToolgateError && error.code === grpc.status.FAILED_PRECONDITION) {
        return this.awaitApproval(decision, 0);
      }
      throw error;
    }
  }

  private async record(decision: Decision, approval: Approval | undefined, output: unknown,
                       toolError: unknown, report: ReportOptions): Promise<GuardResult> {
    const request = this.executeRequest(decision, decision.args, { ...report, output });
    const send = async (retry: boolean) => {
      const answer = await this.report(request, retry);
      return new GuardResult(decision, true, answer.output, answer.truncated, "", approval, answer);
    };
    try {
      return await send(false);
    } catch (error) {
      if (error instanceof Violation || !(error instanceof ToolgateError)) throw error;
      throw new NotRecorded(error, decision, output, toolError, report.status ?? "ok", () => send(true));
    }
  }

  private executeRequest(decision: Decision, args: Record<string, unknown>, report: ReportOptions): ExecuteRequest {
    const request: ExecuteRequest = {
      decision_id: decision.decisionId,
      args_json: JSON.stringify(args),
      duration_us: report.durationUs ?? 0,
      status: STATUSES[report.status ?? "ok"],
      error: report.error ?? "",
      wrap_output: report.wrapOutput ?? false,
      approved_in_harness: report.approvedInHarness ?? "",
    };
    if (report.output !== undefined) {
      [request.output, request.result_bytes] = clipped(textOf(report.output), decision.maxOutputChars);
    }
    return request;
  }

  private async report(request: ExecuteRequest, ready = false): Promise<Report> {
    const report = reportFrom(await this.call(this.gate, "Execute", request, 0, ready));
    if (report.violation) throw new Violation(report);
    return report;
  }

  /** One RPC within its deadline; `ready`: wait for a connection until then (a retry). */
  private async call(client: grpc.Client, method: string, request: object, waitsMs = 0, ready = false): Promise<any> {
    const metadata = new grpc.Metadata();
    if (this.token) metadata.set("authorization", `Bearer ${this.token}`);
    const deadline = Date.now() + waitsMs + this.rpcTimeoutMs;
    if (ready) {
      await new Promise<void>((resolve, reject) => client.waitForReady(deadline, (error) =>
        error ? reject(new Unavailable(`toolgate: not reachable: ${error.message}`, grpc.status.UNAVAILABLE))
          : resolve()));
    }
    const options: grpc.CallOptions = { deadline };
    return new Promise((resolve, reject) => {
      const rpc = (client as unknown as Record<string, Function>)[method].bind(client);
      rpc(request, metadata, options, (error: grpc.ServiceError | null, answer: unknown) => {
        if (error) reject(errorFrom(error));
        else resolve(answer);
      });
    });
  }
}

type Ran<T> = { kind: "ok"; output: T } | { kind: "error"; error: unknown } | { kind: "timeout" };

/** Runs the tool; with a timeout, aborts its signal and stops waiting when the time is out. */
async function runWithin<T>(run: Tool<T>, args: Record<string, unknown>, timeoutMs: number): Promise<Ran<T>> {
  const controller = new AbortController();
  const running = (async (): Promise<Ran<T>> => {
    try {
      return { kind: "ok", output: await run(args, { signal: controller.signal }) };
    } catch (error) {
      return { kind: "error", error };
    }
  })();
  if (timeoutMs <= 0) return running;
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<Ran<T>>((resolve) => {
    timer = setTimeout(() => {
      controller.abort(new Error(`ran out its ${timeoutMs} ms`));
      resolve({ kind: "timeout" });
    }, timeoutMs);
  });
  try {
    return await Promise.race([running, timedOut]);
  } finally {
    clearTimeout(timer);
  }
}
