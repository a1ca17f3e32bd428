// The client's exceptions. Each says whether the tool ran (README.md, "What each failure means").
import { status as Status } from "@grpc/grpc-js";
/** A call to toolgate failed; `code` is the gRPC status code. */
export class ToolgateError extends Error {
    code;
    constructor(message, code) {
        super(message);
        this.code = code;
        this.name = new.target.name;
    }
}
/** toolgate could not be asked, or could not record the call: the tool did not run. Thrown
 * while waiting for an approval, it carries the `decision`, which still stands:
 * `resume(error.decision, run)` waits again. */
export class Unavailable extends ToolgateError {
    decision;
}
/** toolgate refused the request as malformed (recorded as `invalid_request`). */
export class InvalidRequest extends ToolgateError {
}
/** The caller may not make this call (no token, or one that may not act as this actor). */
export class PermissionDenied extends ToolgateError {
}
/** The call may not run; `result` says why. The tool did not run. */
export class Denied extends ToolgateError {
    result;
    constructor(result) {
        super(result.forModel());
        this.result = result;
    }
}
/** The report was recorded, as a violation of its decision (`report.violation`). */
export class Violation extends ToolgateError {
    report;
    constructor(report) {
        super(`toolgate recorded a violation: ${report.violation}`);
        this.report = report;
    }
}
/** The tool ran out the decision's `timeoutMs`: its signal was aborted and the timeout
 * reported. A tool that ignores its signal may still be running. */
export class ToolTimedOut extends ToolgateError {
    decision;
    report;
    constructor(decision, report) {
        super(`the tool ran out its ${decision.timeoutMs} ms and was reported TIMEOUT`);
        this.decision = decision;
        this.report = report;
    }
}
/** The tool ran, but its report did not reach the trail. `output` is what it returned
 * (undefined when it threw), `toolError` what it threw; `retry()` sends the same report again
 * (Execute answers an exact repeat from the execution already recorded). */
export class NotRecorded extends ToolgateError {
    decision;
    output;
    toolError;
    status;
    send;
    constructor(cause, decision, output, toolError, status, send) {
        super(`the tool ran, but its report was not recorded: ${cause.message}`, cause.code);
        this.decision = decision;
        this.output = output;
        this.toolError = toolError;
        this.status = status;
        this.send = send;
        this.cause = cause;
    }
    retry() {
        return this.send();
    }
}
/** The client's exception for a failed RPC. */
export function errorFrom(error) {
    const message = `toolgate: ${error.details || error.message}`;
    switch (error.code) {
        case Status.UNAVAILABLE:
        case Status.DEADLINE_EXCEEDED:
        case Status.RESOURCE_EXHAUSTED:
        case Status.CANCELLED:
            return new Unavailable(message, error.code);
        case Status.INVALID_ARGUMENT:
            return new InvalidRequest(message, error.code);
        case Status.PERMISSION_DENIED:
        case Status.UNAUTHENTICATED:
            return new PermissionDenied(message, error.code);
        default:
            return new ToolgateError(message, error.code);
    }
}
