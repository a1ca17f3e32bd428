// The client: decide, run within the decision's time, report. Async by nature.
import * as grpc from "@grpc/grpc-js";
import * as protoLoader from "@grpc/proto-loader";
import { Denied, NotRecorded, ToolgateError, ToolTimedOut, Unavailable, Violation, errorFrom, } from "./errors.js";
import { descriptor } from "./generated/descriptor.js";
import { GuardResult, approvalFrom, clipped, decisionFrom, reportFrom, textOf, } from "./model.js";
// The options the generated types assume (scripts/generate.mjs).
const definition = protoLoader.fromJSON(descriptor, {
    keepCase: true,
    longs: Number,
    enums: String,
    defaults: true,
    oneofs: true,
});
const loaded = grpc.loadPackageDefinition(definition);
/** The longest one Await call waits on the server (its own limit). */
const MAX_AWAIT_MS = 600_000;
const STATUSES = { ok: "OK", error: "ERROR", timeout: "TIMEOUT" };
export class Toolgate {
    sessionId;
    approvalTimeoutMs;
    rpcTimeoutMs;
    gate;
    approvals;
    base;
    token;
    constructor(options) {
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
    close() {
        this.gate.close();
        this.approvals.close();
    }
    /** Asks whether `tool` may run with `args`; the answer is on the trail before it comes. */
    async decide(tool, args, options = {}) {
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
    async execute(decision, args, report = {}) {
        return this.report(this.executeRequest(decision, args, report));
    }
    /** Waits up to `timeoutMs` (`approvalTimeoutMs` by default) for the verdict; returns the
     * approval, still pending if none came. */
    async awaitApproval(decision, timeoutMs = this.approvalTimeoutMs) {
        const deadline = Date.now() + timeoutMs;
        for (;;) {
            const left = Math.max(0, deadline - Date.now());
            const wait = Math.min(left, MAX_AWAIT_MS);
            const request = { decision_id: decision.decisionId, timeout_ms: wait };
            // A wait may outlast a restart of the server: it waits for the connection too.
            const approval = approvalFrom(await this.call(this.approvals, "Await", request, wait, true));
            if (approval.state !== "pending" || left === 0)
                return approval;
        }
    }
    /** Withdraws a pending approval: no verdict can follow, and the call may not run. */
    async withdraw(decision, reason = "") {
        const request = { decision_id: decision.decisionId, reason };
        return approvalFrom(await this.call(this.approvals, "Withdraw", request));
    }
    /** Decides, runs `run(args, { signal })` when allowed, within the decision's `timeoutMs`
     * (the signal is aborted then, and `ToolTimedOut` thrown), reports, and returns the result.
     * A denial is a result with `ran: false`, or `Denied` with `raiseOnDeny`. The tool's own
     * error is reported and thrown again; a run whose report fails throws `NotRecorded`. */
    async guard(tool, args, run, options = {}) {
        const { dryRunner, raiseOnDeny, ...decide } = options;
        return this.resume(await this.decide(tool, args, decide), run, { dryRunner, raiseOnDeny });
    }
    /** `guard` from a decision already made: after an `Unavailable` during the wait for its
     * approval (`error.decision`), wait again and run as `guard` would. */
    async resume(decision, run, options = {}) {
        const { dryRunner, raiseOnDeny } = options;
        let admitted;
        try {
            admitted = await this.admit(decision);
        }
        catch (error) {
            if (error instanceof Denied && !raiseOnDeny)
                return error.result;
            throw error;
        }
        const { approval } = admitted;
        const runner = decision.outcome === "dry_run" ? dryRunner : run;
        if (runner === undefined) {
            const result = new GuardResult(decision, false, "", false, "only a dry run is allowed and none was given", approval);
            if (raiseOnDeny)
                throw new Denied(result);
            return result;
        }
        const started = process.hrtime.bigint();
        const elapsed = () => Number((process.hrtime.bigint() - started) / 1000n);
        const ran = await runWithin(runner, decision.args, decision.timeoutMs);
        if (ran.kind === "timeout") {
            const error = `ran out its ${decision.timeoutMs} ms`;
            const recorded = await this.record(decision, approval, undefined, undefined, { durationUs: elapsed(), status: "timeout", error });
            throw new ToolTimedOut(decision, recorded.report);
        }
        if (ran.kind === "error") {
            await this.record(decision, approval, undefined, ran.error, { durationUs: elapsed(), status: "error", error: String(ran.error?.message ?? ran.error) });
            throw ran.error;
        }
        return this.record(decision, approval, ran.output, undefined, { durationUs: elapsed() });
    }
    /** Wraps a function as a guarded tool: calling the result decides, runs and reports, and
     * resolves to the processed output; a denial rejects with `Denied`. */
    tool(name, fn, options = {}) {
        return async (args) => {
            const result = await this.guard(name, args, fn, { ...options, raiseOnDeny: true });
            return result.output;
        };
    }
    async admit(decision) {
        if (decision.outcome === "deny") {
            throw new Denied(new GuardResult(decision, false, "", false, decision.reason));
        }
        if (decision.outcome !== "require_approval")
            return { decision };
        let approval;
        try {
            approval = await this.awaitApproval(decision);
            if (approval.state === "pending")
                approval = await this.giveUp(decision);
        }
        catch (error) {
            // The decision stands: `resume(error.decision, run)` waits again.
            if (error instanceof Unavailable)
                error.decision = decision;
            throw error;
        }
        if (approval.state === "pending" || approval.state === "withdrawn") {
            const waited = this.approvalTimeoutMs / 1000;
            throw new Denied(new GuardResult(decision, false, "", false, `no approval within ${waited} s: withdrawn`, approval));
        }
        if (approval.outcome !== "allow") {
            const by = approval.approver ? ` by ${approval.approver}` : "";
            throw new Denied(new GuardResult(decision, false, "", false, `approval ${approval.state}${by}: ${approval.comment}`, approval));
        }
        return { decision, approval };
    }
    /** Withdraws an approval nobody answered in time; a verdict given meanwhile stands. */
    async giveUp(decision) {
        try {
            return await this.withdraw(decision, `the agent stopped waiting after ${this.approvalTimeoutMs / 1000} s`);
        }
        catch (error) {
            if (error instanceof ToolgateError && error.code === grpc.status.FAILED_PRECONDITION) {
                return this.awaitApproval(decision, 0);
            }
            throw error;
        }
    }
    async record(decision, approval, output, toolError, report) {
        const request = this.executeRequest(decision, decision.args, { ...report, output });
        const send = async (retry) => {
            const answer = await this.report(request, retry);
            return new GuardResult(decision, true, answer.output, answer.truncated, "", approval, answer);
        };
        try {
            return await send(false);
        }
        catch (error) {
            if (error instanceof Violation || !(error instanceof ToolgateError))
                throw error;
            throw new NotRecorded(error, decision, output, toolError, report.status ?? "ok", () => send(true));
        }
    }
    executeRequest(decision, args, report) {
        const request = {
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
    async report(request, ready = false) {
        const report = reportFrom(await this.call(this.gate, "Execute", request, 0, ready));
        if (report.violation)
            throw new Violation(report);
        return report;
    }
    /** One RPC within its deadline; `ready`: wait for a connection until then (a retry). */
    async call(client, method, request, waitsMs = 0, ready = false) {
        const metadata = new grpc.Metadata();
        if (this.token)
            metadata.set("authorization", `Bearer ${this.token}`);
        const deadline = Date.now() + waitsMs + this.rpcTimeoutMs;
        if (ready) {
            await new Promise((resolve, reject) => client.waitForReady(deadline, (error) => error ? reject(new Unavailable(`toolgate: not reachable: ${error.message}`, grpc.status.UNAVAILABLE))
                : resolve()));
        }
        const options = { deadline };
        return new Promise((resolve, reject) => {
            const rpc = client[method].bind(client);
            rpc(request, metadata, options, (error, answer) => {
                if (error)
                    reject(errorFrom(error));
                else
                    resolve(answer);
            });
        });
    }
}
/** Runs the tool; with a timeout, aborts its signal and stops waiting when the time is out. */
async function runWithin(run, args, timeoutMs) {
    const controller = new AbortController();
    const running = (async () => {
        try {
            return { kind: "ok", output: await run(args, { signal: controller.signal }) };
        }
        catch (error) {
            return { kind: "error", error };
        }
    })();
    if (timeoutMs <= 0)
        return running;
    let timer;
    const timedOut = new Promise((resolve) => {
        timer = setTimeout(() => {
            controller.abort(new Error(`ran out its ${timeoutMs} ms`));
            resolve({ kind: "timeout" });
        }, timeoutMs);
    });
    try {
        return await Promise.race([running, timedOut]);
    }
    finally {
        clearTimeout(timer);
    }
}
