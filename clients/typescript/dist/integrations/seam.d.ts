import type { Approval, Decision } from "../model.js";
import type { Toolgate } from "../toolgate.js";
/** Why a call that toolgate did not let through was not run, in words for the model. */
export declare function refusal(decision: Decision): string;
/** What a decision was asked about, to hold it to the call it is kept for: a call id comes from
 * the model, which may give two calls one id, so a kept decision is taken only by the very call
 * (tool and arguments) it was made for. */
export declare function fingerprint(tool: string, args: unknown): string;
/** The microseconds since it was made, as Execute takes a duration. */
export declare function stopwatch(): () => number;
/** A thrown error as the trail records it: its message, else its name. */
export declare function messageOf(error: unknown): string;
/** A map that forgets its oldest entry past `limit`: what an adapter keeps between a call's
 * decision and its run, which a run that is never resumed would otherwise grow without end. */
export declare class Kept<V> extends Map<string, V> {
    private readonly limit;
    constructor(limit: number);
    set(key: string, value: V): this;
}
/** Why a person's approval given in the framework no longer lets the call run: toolgate's own
 * verdict came first (rejected there, expired, withdrawn). Undefined while the approval still
 * waits (the framework's person is then its approver) or once toolgate's own approver allowed it. */
export declare function overruled(approval: Approval): string | undefined;
/** Withdraws a refused call's approval; one that already ended (a verdict, an expiry) stays as
 * it is, and the call is refused all the same. */
export declare function withdraw(toolgate: Toolgate, decision: Decision, reason: string): Promise<void>;
