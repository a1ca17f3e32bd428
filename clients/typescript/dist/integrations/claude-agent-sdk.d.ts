/** A hook callback as the SDK calls it. */
export type HookCallback = (input: {
    hook_event_name: string;
} & Record<string, unknown>, toolUseID: string | undefined, options: {
    signal: AbortSignal;
}) => Promise<Record<string, unknown>>;
/** The SDK's `HookCallbackMatcher`. */
export interface HookMatcher {
    matcher?: string;
    hooks: HookCallback[];
    /** Seconds. */
    timeout?: number;
    onFailure?: "continue" | "block";
}
export interface ToolgateHooksOptions {
    /** A bearer token, when the server's auth is on. */
    token?: string;
    /** Seconds one event may take: a call held for a person (`hooks.hold_ms`, 120 s by default)
     * and the answer after it. */
    timeout?: number;
}
/** `options.hooks` for the SDK's `query`: every tool's events handed to toolgate at `sideUrl`. */
export declare function toolgateHooks(sideUrl: string, options?: ToolgateHooksOptions): Record<string, HookMatcher[]>;
