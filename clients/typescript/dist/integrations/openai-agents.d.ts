import { type Agent, type FunctionTool, type RunState, type RunToolApprovalItem, tool as defineTool } from "@openai/agents-core";
import type { DecideOptions, Toolgate } from "../toolgate.js";
export interface ToolgateGuardOptions extends DecideOptions {
    /** Who approves in the SDK when `approve` names nobody (default "openai-agents:user"). */
    approver?: string;
    /** Run a tool unrecorded when the sidecar cannot be reached (default: the run fails). */
    failOpen?: boolean;
    /** How many calls' decisions are kept between the SDK's interruption and its resumption. */
    maxPending?: number;
}
/** Governs agents' function tools with `toolgate`. */
export declare class ToolgateGuard {
    private readonly toolgate;
    private readonly approver;
    private readonly failOpen;
    private readonly decideOptions;
    private readonly calls;
    private readonly approvers;
    private readonly failures;
    constructor(toolgate: Toolgate, options?: ToolgateGuardOptions);
    /** A clone of `agent` whose function tools are each governed; the others (hosted tools,
     * handoffs, MCP servers' tools, computer and shell tools) are left as they are (docs say so). */
    agent<TContext>(agent: Agent<TContext, any>): Agent<TContext, any>;
    /** The SDK's `tool(options)`, governed, with the errors its `execute` throws recorded. */
    define(options: Parameters<typeof defineTool>[0]): FunctionTool<any, any, any>;
    /** A copy of `original` whose every call toolgate decides first and records after. */
    tool<TContext>(original: FunctionTool<TContext, any, any>): FunctionTool<TContext, any, any>;
    /** Approves an interrupted call in the SDK, as `approver` (the guard's by default). Never a
     * blanket approval: each call toolgate holds needs its own. */
    approve(state: RunState<any, any>, item: RunToolApprovalItem, approver?: string): void;
    /** Refuses an interrupted call in the SDK and withdraws toolgate's pending approval. */
    reject(state: RunState<any, any>, item: RunToolApprovalItem, reason?: string): Promise<void>;
    /** The call this guard interrupted for an item of the SDK's interruptions (in whichever
     * session: the item does not say). */
    private waitingFor;
    /** The call's decision, made the first time it is asked for (by this very call). */
    private decided;
}
