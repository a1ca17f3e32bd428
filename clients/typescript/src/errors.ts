// The client's exceptions. Each says whether the tool ran (README.md, "What each failure means").

import { status as Status, type ServiceError } from "@grpc/grpc-js";

import type { Decision, GuardResult, Report } from "./model.js";

/** A call to toolgate failed; `code` is the gRPC status code. */
export class ToolgateError extends Error {
  constructor(message: string, readonly code?: Status) {
    super(message);
    this.name = new.target.name;
  }
}

/** toolgate could not be asked, or could not record the call: the tool did not run. Thrown
 * while waiting for an approval, it carries the `decision`, which still stands:
 * `resume(error.decision, run)` waits again. */
export class Unavailable extends ToolgateError {
  decision?: Decision;
}

/** toolgate refused the request as malformed (recorded as `invalid_request`). */
export class InvalidRequest extends ToolgateError {}

/** The caller may not make this call (no token, or one that may not act as this actor). */
export class PermissionDenied extends ToolgateError {}

/** The call may not run; `result` says why. The tool did not run. */
export class Denied extends ToolgateError {
  constructor(readonly result: GuardResult) {
    super(result.forModel());
  }
}

/** The report was recorded, as a violation of its decision (`report.violation`). */
export class Violation extends ToolgateError {
  constructor(readonly report: Report) {
    super(`toolgate recorded a violation: ${report.violation}`);
  }
}

/** The tool ran out the decision's `timeoutMs`: its signal was aborted and the timeout
 * reported. A tool that ignores its signal may still be running. */
export class ToolTimedOut extends ToolgateError {
  constructor(readonly decision: Decision, readonly report: Report) {
    super(`the tool ran out its ${decision.timeoutMs} ms and was reported TIMEOUT`);
  }
}

/** The tool ran, but its report did not reach the trail. `output` is what it returned
 * (undefined when it threw), `toolError` what it threw; `retry()` sends the same report again
 * (Execute answers an exact repeat from the execution already recorded). */
export class NotRecorded extends ToolgateError {
  constructor(
    cause: ToolgateError,
    readonly decision: Decision,
    readonly output: unknown,
    readonly toolError: unknown,
    readonly status: "ok" | "error" | "timeout",
    private readonly send: () => Promise<GuardResult>,
  ) {
    super(`the tool ran, but its report was not recorded: ${cause.message}`, cause.code);
    this.cause = cause;
  }

  retry(): Promise<GuardResult> {
    return this.send();
  }
}

/** The client's exception for a failed RPC. */
export function errorFrom(error: ServiceError): ToolgateError {
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
