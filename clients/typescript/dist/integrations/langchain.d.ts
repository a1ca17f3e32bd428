import { type AgentMiddleware } from "langchain";
import type { DecideOptions, Toolgate } from "../toolgate.js";
export interface ToolgateMiddlewareOptions extends DecideOptions {
    /** Run a tool unrecorded when the sidecar cannot be reached (default: the run fails). */
    failOpen?: boolean;
    /** How many calls waiting for a person are kept between the interrupt and the resume. */
    maxPending?: number;
}
/** What the run is resumed with for a call that waited for a person. */
export interface ApprovalAnswer {
    approved: boolean;
    /** Who answered, recorded as the approver (default "langchain:user"). */
    approver?: string;
    comment?: string;
}
/** Agent middleware that has `toolgate` decide every tool call first. */
export declare function toolgateMiddleware(toolgate: Toolgate, options?: ToolgateMiddlewareOptions): AgentMiddleware;
