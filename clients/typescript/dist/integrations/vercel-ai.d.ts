import type { ModelMessage, ToolSet } from "ai";
import type { DecideOptions, Toolgate } from "../toolgate.js";
export interface GuardToolsOptions extends DecideOptions {
    /** Who answers the SDK's approval requests, recorded as the approver: a name, or read from
     * the call (default: `experimental_context.toolgate.approver`, else "vercel-ai:user"). */
    approver?: string | ((call: CallOptions) => string);
    /** Run a tool unrecorded when the sidecar cannot be reached (default: the call fails). */
    failOpen?: boolean;
    /** How many calls' decisions are kept between the SDK's approval request and its answer. */
    maxPending?: number;
}
/** What the SDK hands a tool's `needsApproval` and `execute`. */
export interface CallOptions {
    toolCallId: string;
    messages: ModelMessage[];
    abortSignal?: AbortSignal;
    experimental_context?: unknown;
}
export interface GuardedTools<TOOLS extends ToolSet> {
    /** The tools, each call decided by toolgate first. */
    tools: TOOLS;
    /** Withdraws toolgate's pending approval of each call the person refused in `messages` (the
     * messages the run is resumed with); without it, a refused call's approval expires. */
    settle(messages: ModelMessage[]): Promise<void>;
}
/** `tools`, each call decided by `toolgate` before it runs and recorded after. */
export declare function guardTools<TOOLS extends ToolSet>(tools: TOOLS, toolgate: Toolgate, options?: GuardToolsOptions): GuardedTools<TOOLS>;
