// toolgate's TypeScript client: ask toolgate before a tool runs, report after (README.md).
export { Denied, InvalidRequest, NotRecorded, PermissionDenied, ToolgateError, ToolTimedOut, Unavailable, Violation, } from "./errors.js";
export { GuardResult } from "./model.js";
export { Toolgate, } from "./toolgate.js";
