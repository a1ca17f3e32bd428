import { status as Status, type ServiceError } from "@grpc/grpc-js";
import type { Decision, GuardResult, Report } from "./model.js";
/** A call to toolgate failed; `code` is the gRPC status code. */
export declare class ToolgateError extends Error {
    readonly code?: Status | undefined;
    constructor(message: string, code?: Status | undefined);
}
/** toolgate could not be asked, or could not record the call: the tool did not run. Thrown
 * while waiting for an approval, it carries the `decision`, which still stands:
 * `resume(error.decision, run)` waits again. */
export declare class Unavailable extends ToolgateError {
    decision?: Decision;
}
/** toolgate refused the request as malformed (recorded as `invalid_request`). */
export declare class InvalidRequest extends ToolgateError {
}
/** The caller may not make this call (no token, or one that may not act as this actor). */
export declare class PermissionDenied extends ToolgateError {
}
/** The call may not run; `result` says why. The tool did not run. */
export declare class Denied extends ToolgateError {
    readonly result: GuardResult;
    constructor(result: GuardResult);
}
/** The report was recorded, as a violation of its decision (`report.violation`). */
export declare class Violation extends ToolgateError {
    readonly report: Report;
    constructor(report: Report);
}
/** The tool ran out the decision's `timeoutMs`: its signal was aborted and the timeout
 * reported. A tool that ignores its signal may still be running. */
export declare class ToolTimedOut extends ToolgateError {
    readonly decision: Decision;
    readonly report: Report;
    constructor(decision: Decision, report: Report);
}
/** The tool ran, but its report did not reach the trail. `output` is what it returned
 * (undefined when it threw), `toolError` what it threw; `retry()` sends the same report again
 * (Execute answers an exact repeat from the execution already recorded). */
export declare class NotRecorded extends ToolgateError {
    readonly decision: Decision;
    readonly output: unknown;
    readonly toolError: unknown;
    readonly status: "ok" | "error" | "timeout";
    private readonly send;
    constructor(cause: ToolgateError, decision: Decision, output: unknown, toolError: unknown, status: "ok" | "error" | "timeout", send: () => Promise<GuardResult>);
    retry(): Promise<GuardResult>;
}
/** The client's exception for a failed RPC. */
export declare function errorFrom(error: ServiceError): ToolgateError;
