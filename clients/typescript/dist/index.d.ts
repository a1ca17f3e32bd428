export { Denied, InvalidRequest, NotRecorded, PermissionDenied, ToolgateError, ToolTimedOut, Unavailable, Violation, } from "./errors.js";
export { type Approval, type Decision, GuardResult, type Outcome, type Report } from "./model.js";
export { type DecideOptions, type GuardOptions, type ReportOptions, type Tool, Toolgate, type ToolgateOptions, } from "./toolgate.js";
