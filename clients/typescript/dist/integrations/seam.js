// What every framework adapter says and measures the same way: the words a refused call is
// shown to the model with, a call's fingerprint, a run's duration, a thrown error as the trail
// records it.
import { status as Status } from "@grpc/grpc-js";
import { ToolgateError } from "../errors.js";
/** Why a call that toolgate did not let through was not run, in words for the model. */
export function refusal(decision) {
    switch (decision.outcome) {
        case "dry_run":
            return `toolgate denied this call: ${decision.reason}; only a dry run is allowed`;
        case "require_approval":
            return `toolgate: a person must approve this call: ${decision.reason}`;
        default:
            return `toolgate denied this call: ${decision.reason}`;
    }
}
/** What a decision was asked about, to hold it to the call it is kept for: a call id comes from
 * the model, which may give two calls one id, so a kept decision is taken only by the very call
 * (tool and arguments) it was made for. */
export function fingerprint(tool, args) {
    return JSON.stringify([tool, sorted(args ?? {})]);
}
/** `value` with every object's keys in order: the same arguments, however they were parsed. */
function sorted(value) {
    if (Array.isArray(value))
        return value.map(sorted);
    if (typeof value !== "object" || value === null)
        return value;
    const object = value;
    return Object.fromEntries(Object.keys(object).sort().map((key) => [key, sorted(object[key])]));
}
/** The microseconds since it was made, as Execute takes a duration. */
export function stopwatch() {
    const started = performance.now();
    return () => Math.round((performance.now() - started) * 1000);
}
/** A thrown error as the trail records it: its message, else its name. */
export function messageOf(error) {
    if (typeof error === "string")
        return error;
    return error instanceof Error ? error.message || error.name : String(error);
}
/** A map that forgets its oldest entry past `limit`: what an adapter keeps between a call's
 * decision and its run, which a run that is never resumed would otherwise grow without end. */
export class Kept extends Map {
    limit;
    constructor(limit) {
        super();
        this.limit = limit;
    }
    set(key, value) {
        this.delete(key);
        if (this.size >= this.limit)
            this.delete(this.keys().next().value);
        return super.set(key, value);
    }
}
/** Why a person's approval given in the framework no longer lets the call run: toolgate's own
 * verdict came first (rejected there, expired, withdrawn). Undefined while the approval still
 * waits (the framework's person is then its approver) or once toolgate's own approver allowed it. */
export function overruled(approval) {
    if (approval.state === "pending" || approval.outcome === "allow")
        return undefined;
    const by = approval.approver ? ` by ${approval.approver}` : "";
    return `toolgate: this call's approval was ${approval.state}${by}: it may not run`;
}
/** Withdraws a refused call's approval; one that already ended (a verdict, an expiry) stays as
 * it is, and the call is refused all the same. */
export async function withdraw(toolgate, decision, reason) {
    try {
        await toolgate.withdraw(decision, reason);
    }
    catch (error) {
        if (!(error instanceof ToolgateError && error.code === Status.FAILED_PRECONDITION))
            throw error;
    }
}
