/**
 * The per-request pipeline every /v1 route shares, in SPEC §1's check order:
 * route 404/405 (router) → 401 → 429 → 403 scope → 403 owner (admission) → 404 resource →
 * 413 → 415 → 400 body → handler (which may still say 403 role_escalation).
 *
 * Elysia parses a body before it runs `transform`, and validates after it; so a body route's
 * `parse` only buffers the raw bytes (capped), and `transform` runs admission first and only
 * then judges and decodes those bytes. Nothing of the body is looked at before the caller is known.
 */
import { createContextValues } from "@connectrpc/connect";
import type { Limits } from "../domain/limits.ts";
import type { RateDecision } from "../domain/ports/rate-limiter.ts";
import type { Admission, Admitted } from "../rpc/admission.ts";
import { type CallContext, principalKey } from "../rpc/context.ts";
import { connectErrorFor } from "../rpc/errors.ts";
import { tagCall } from "../rpc/observe.ts";
import type { MethodName } from "../rpc/policy.ts";
import { rateLimitSinkKey } from "../rpc/rate-limit.ts";
import { readCapped } from "./http.ts";

const RAW = Symbol("raw body");

/** A call context, plus the rate-limit decision of the request (null: its route is not limited). */
interface RecordedCall extends CallContext {
  rate: RateDecision | null;
}
type Buffered = { [RAW]: Uint8Array | null };

/** The slice of Elysia's context the hooks use. */
interface HookContext {
  request: Request;
  params: Record<string, string>;
  body: unknown;
}

const utf8 = new TextDecoder("utf-8", { fatal: true });
const JSON_MEDIA_TYPE = /^application\/json\s*(;|$)/i;

function decodeJsonObject(raw: Uint8Array): unknown {
  if (raw.length === 0) return {};
  let value: unknown;
  try {
    value = JSON.parse(utf8.decode(raw));
  } catch {
    throw connectErrorFor("invalid_request", "The body is not valid UTF-8 JSON.");
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw connectErrorFor("invalid_request", "The body must be a JSON object.");
  }
  const problem = structuralProblem(value);
  if (problem) throw connectErrorFor("invalid_request", "The request is invalid.", [problem]);
  return value;
}

/**
 * Management bodies are flat objects. 64 KiB of brackets nest ~32k levels deep, which
 * overflows the stack of the recursive schema validator and error formatter (a 500), so
 * deeper values are refused first, with an iterative walk.
 */
const MAX_JSON_DEPTH = 32;

/**
 * JSON.parse makes `"__proto__"` an own key, but the schema validator walks keys in a way
 * that skips it, so it would be silently ignored; like any unknown field, it is a 400.
 */
const FORBIDDEN_KEY = "__proto__";

/** The first reason to refuse a parsed body before schema validation, found iteratively. */
function structuralProblem(root: object): { field: string; message: string } | null {
  const stack: Array<[unknown, number, string]> = [[root, 1, ""]];
  for (let next = stack.pop(); next !== undefined; next = stack.pop()) {
    const [value, depth, path] = next;
    if (typeof value !== "object" || value === null) continue;
    if (depth > MAX_JSON_DEPTH) {
      return { field: "body", message: `must not nest deeper than ${MAX_JSON_DEPTH} levels` };
    }
    if (Object.hasOwn(value, FORBIDDEN_KEY)) {
      return { field: path ? `${path}.${FORBIDDEN_KEY}` : FORBIDDEN_KEY, message: "is not a known field" };
    }
    for (const [key, child] of Object.entries(value)) stack.push([child, depth + 1, path ? `${path}.${key}` : key]);
  }
  return null;
}

export function createKit(admission: Admission, limits: Limits) {
  const maxBodyBytes = limits.managementBodyBytes;

  async function bufferBody(ctx: HookContext): Promise<Buffered> {
    return { [RAW]: await readCapped(ctx.request, maxBodyBytes) };
  }

  /** 413 → 415 → 400 on the buffered bytes; leaves the decoded object in `ctx.body`. */
  function judgeBody(ctx: HookContext): void {
    // `null` is readCapped's "over the limit": it must not be mistaken for "no body".
    const buffered = ctx.body as Buffered | undefined;
    const raw = buffered === undefined ? new Uint8Array(0) : buffered[RAW];
    if (raw === null) {
      throw connectErrorFor("payload_too_large", `The body is larger than ${maxBodyBytes} bytes.`);
    }
    if (raw.length > 0 && !JSON_MEDIA_TYPE.test(ctx.request.headers.get("content-type") ?? "")) {
      throw connectErrorFor("unsupported_media_type", "Send the body as Content-Type: application/json.");
    }
    ctx.body = decodeJsonObject(raw);
  }

  /**
   * Each request's call context, and the rate-limit decision it was taken under (its answer
   * carries the fields): one map, so a limited request costs no second lookup.
   */
  const calls = new WeakMap<Request, RecordedCall>();

  function remember(ctx: Pick<HookContext, "request" | "params">, { principal, rate }: Admitted): CallContext {
    // A path segment that is not valid percent-encoding (`%E0%A4%A`) reaches here as null, and
    // would fail the params schema as a 400: it names no resource, so it is a 404 (SPEC §1).
    for (const key in ctx.params) {
      if (typeof ctx.params[key] !== "string") throw connectErrorFor("not_found", "No such resource.");
    }
    const call: RecordedCall = { values: createContextValues().set(principalKey, principal), rate };
    calls.set(ctx.request, call);
    // The access log reads the principal from the request after the response (rpc/observe.ts).
    tagCall(ctx.request, call);
    return call;
  }

  /** Synchronous when the token is in the in-process cache: the hot path awaits nothing. */
  function admit(ctx: Pick<HookContext, "request" | "params">, method: MethodName): CallContext | Promise<CallContext> {
    const admitted = admission.admit(ctx.request.headers.get("authorization"), method);
    return admitted instanceof Promise ? admitted.then((a) => remember(ctx, a)) : remember(ctx, admitted);
  }

  return {
    /** Hooks of a bearer route that takes no body (GET, DELETE, rotation): any body is ignored. */
    bearer(method: MethodName) {
      return {
        parse: "none" as const,
        // Destructured on purpose: Elysia infers from the source which context fields a hook
        // reads, and a whole `ctx` makes it parse cookies and build a cookie jar per request,
        // which then forces it to rebuild every returned Response (bench/README.md, scenario 2).
        transform: ({ request, params }: Pick<HookContext, "request" | "params">) => {
          const admitted = admit({ request, params }, method);
          if (admitted instanceof Promise) return admitted.then(() => undefined);
        },
      };
    },

    /**
     * Hooks of a bearer route with a JSON body. `exists` runs after admission and before the
     * body is judged, so an unknown target is a 404 whatever the body holds.
     */
    withBody(method: MethodName, exists?: (call: CallContext, params: Record<string, string>) => Promise<unknown>) {
      return {
        parse: bufferBody,
        transform: async (ctx: HookContext) => {
          const call = await admit(ctx, method);
          if (exists) await exists(call, ctx.params);
          judgeBody(ctx);
        },
      };
    },

    /**
     * Hooks of a route with a JSON body and no bearer token (`POST /v1/setup`, whose body holds
     * its credential): the same 413 → 415 → 400 judgement, with an anonymous call context.
     */
    openWithBody() {
      return {
        parse: bufferBody,
        transform: (ctx: HookContext) => {
          calls.set(ctx.request, { values: createContextValues(), rate: null });
          judgeBody(ctx);
        },
      };
    },

    /**
     * The context of a call without a bearer token (ingest): the implementation reports its
     * rate-limit decision into it, for `rateOf`.
     */
    open(request: Request): CallContext {
      const call: RecordedCall = { values: createContextValues(), rate: null };
      call.values.set(rateLimitSinkKey, (rate) => {
        call.rate = rate;
      });
      calls.set(request, call);
      return call;
    },

    /** The rate-limit decision this request was taken under, if its route is limited. */
    rateOf(request: Request): RateDecision | undefined {
      return calls.get(request)?.rate ?? undefined;
    },

    /** The context admission built for this request. */
    call(request: Request): CallContext {
      const call = calls.get(request);
      if (!call) throw new Error("route handler ran without admission");
      return call;
    },
  };
}

export type Kit = ReturnType<typeof createKit>;
