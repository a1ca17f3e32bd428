// The Claude Agent SDK for TypeScript: every tool call of the Claude Code it runs decided by
// toolgate before it runs and recorded after, through the seam the SDK offers for it, hooks run
// in the application's own process (PreToolUse, PostToolUse, PostToolUseFailure), each handed
// to toolgate's Claude Code hook endpoint on the server's side port (docs/frameworks.md):
//
//     const hooks = toolgateHooks("http://127.0.0.1:9090");       // the server's --http-listen
//     for await (const message of query({ prompt, options: { hooks, canUseTool: askAPerson } })) …
//
// The SDK's calls are Claude Code's, so toolgate answers them as it answers Claude Code's own
// hooks (docs/agents.md), exactly as the Python SDK's adapter does: a denial with its reason; a
// call that needs approval put to the application's `canUseTool` (`ask`); an allowed call left
// to the SDK's own permission rules; the run reported after it. A toolgate that cannot be
// reached denies the call, and any failure of the hook blocks it (`onFailure: "block"`).
//
// The hooks' shapes are written out here rather than imported, so that this package builds
// without the SDK (an optional peer dependency, its Claude Code binary some 400 MB).

/** A hook callback as the SDK calls it. */
export type HookCallback = (
  input: { hook_event_name: string } & Record<string, unknown>,
  toolUseID: string | undefined,
  options: { signal: AbortSignal },
) => Promise<Record<string, unknown>>;

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

/** The largest answer read from the endpoint: a hook's answer is a few hundred bytes. */
const MAX_ANSWER = 1 << 20;

/** `options.hooks` for the SDK's `query`: every tool's events handed to toolgate at `sideUrl`. */
export function toolgateHooks(sideUrl: string, options: ToolgateHooksOptions = {}): Record<string, HookMatcher[]> {
  const endpoint = `${sideUrl.replace(/\/+$/, "")}/hooks/claude`;
  const timeout = options.timeout ?? 150;
  const hook: HookCallback = async (input, _toolUseID, { signal }) => {
    try {
      const answer = await fetch(endpoint, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          ...(options.token ? { authorization: `Bearer ${options.token}` } : {}),
        },
        body: JSON.stringify(input),
        redirect: "error",
        signal: AbortSignal.any([signal, AbortSignal.timeout(timeout * 1000)]),
      });
      if (!answer.ok) throw new Error(`HTTP ${answer.status}`);
      const parsed: unknown = JSON.parse((await bounded(answer)) || "{}");
      if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) {
        throw new Error("the answer is not a JSON object");
      }
      return parsed as Record<string, unknown>;
    } catch (error) {
      const cause = (error as { cause?: { message?: string } }).cause?.message;
      const reason = `toolgate could not be asked: ${cause ?? (error instanceof Error ? error.message : String(error))}`;
      return input.hook_event_name === "PreToolUse"
        ? { hookSpecificOutput: { hookEventName: "PreToolUse", permissionDecision: "deny", permissionDecisionReason: reason } }
        : { decision: "block", reason };
    }
  };
  const matcher: HookMatcher = { hooks: [hook], timeout, onFailure: "block" };
  return { PreToolUse: [matcher], PostToolUse: [matcher], PostToolUseFailure: [matcher] };
}

/** The answer's body as text, read no further than MAX_ANSWER bytes. */
async function bounded(answer: Response): Promise<string> {
  const chunks: Uint8Array[] = [];
  let size = 0;
  const reader = answer.body?.getReader();
  for (;;) {
    const part = reader ? await reader.read() : { done: true as const, value: undefined };
    if (part.done) break;
    size += part.value.byteLength;
    if (size > MAX_ANSWER) {
      await reader?.cancel();
      throw new Error("the answer is too long");
    }
    chunks.push(part.value);
  }
  return Buffer.concat(chunks).toString("utf8");
}
