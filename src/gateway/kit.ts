/**
 * The per-request pipeline every /v1 route shares, in docs/api.md's check order:
 * route 404/405 (router) → 401 → 429 → 403 scope → 403 owner (admission) → 404 resource →
 * 413 → 415 → 400 body → handler (which may still say 403 role_escalation).
 *
 * Elysia parses a body before it runs `transform`, and validates after it; so a body route's
 * `parse` only buffers the raw bytes (capped), and `transform` runs admission first and only
 * then judges and decodes those bytes. Nothing of the body is looked at before the caller is known.
 */
import { createContextValues } from "@connectrpc/connect";
import { Elysia } from "elysia";
import type { Limits } from "../domain/limits.ts";
import type { Maybe } from "../domain/maybe.ts";
import type { RateDecision } from "../domain/ports/rate-limiter.ts";
import type { Admission, Admitted } from "../rpc/admission.ts";
import { type CallContext, principalKey, requestIdKey } from "../rpc/context.ts";
import { connectErrorFor } from "../rpc/errors.ts";
import { callOf, tagCall } from "../rpc/observe.ts";
import type { MethodName } from "../rpc/policy.ts";
import { rateLimitSinkKey } from "../rpc/rate-limit.ts";
import { ELYSIA_SETTINGS, REQUEST_ID_HEADER, readCapped } from "./http.ts";

/** A call context, plus the rate-limit decision of the request (null: its route is not limited). */
interface RecordedCall extends CallContext {
  rate: RateDecision | null;
}

const RAW = Symbol("raw body");
type Buffered = { [RAW]: Uint8Array | null };

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

/** The `withBody` macro's value: the RPC method, and an optional existence check. */
export interface BodyRoute {
  method: MethodName;
  /** Runs after admission and before the body is judged: an unknown target is a 404 whatever the body holds. */
  exists?: (call: CallContext, params: Record<string, string>) => Maybe<unknown>;
}

/**
 * The kit as an Elysia plugin of macros; a route names one of them:
 * - `bearer: method`: a route that takes no body (GET, DELETE, rotation); any body is ignored.
 * - `withBody: { method, exists? }`: a bearer route with a JSON body.
 * - `openWithBody: true`: a JSON body and no bearer token (`POST /v1/setup`, whose body holds its
 *   credential): the same 413 → 415 → 400 judgement, with an anonymous call.
 * They decide in `transform`, so before Elysia validates anything (401 before 400), and hand the
 * handler the call as a typed `call` in its context.
 */
export function createKit(admission: Admission, limits: Limits) {
  const maxBodyBytes = limits.managementBodyBytes;

  /** The call's values: the X-Request-Id the gateway generated travels with it, so a change's audit event names it. */
  function valuesWith(requestId: unknown) {
    const values = createContextValues();
    if (typeof requestId === "string") values.set(requestIdKey, requestId);
    return values;
  }

  function callFor(
    request: Request,
    params: Record<string, string>,
    requestId: unknown,
    { principal, rate }: Admitted,
  ): CallContext {
    // A path segment that is not valid percent-encoding (`%E0%A4%A`) reaches here as null, and
    // would fail the params schema as a 400: it names no resource, so it is a 404 (docs/api.md).
    for (const key in params) {
      if (typeof params[key] !== "string") throw connectErrorFor("not_found", "No such resource.");
    }
    // The access log reads the principal from the request after the response (rpc/observe.ts).
    // The call and the rate decision its answer carries, on the request: one property, no map.
    const call: RecordedCall = { values: valuesWith(requestId).set(principalKey, principal), rate };
    return tagCall(request, call);
  }

  /** Synchronous when the token is in the in-process cache. */
  function admit(
    request: Request,
    params: Record<string, string>,
    requestId: unknown,
    method: MethodName,
  ): CallContext | Promise<CallContext> {
    const admitted = admission.admit(request.headers.get("authorization"), method);
    return admitted instanceof Promise
      ? admitted.then((a) => callFor(request, params, requestId, a))
      : callFor(request, params, requestId, admitted);
  }

  /** A body route's `parse`: only buffers the raw bytes (capped); nothing is judged before the caller is known. */
  const bufferBody = (async ({ request }: { request: Request }): Promise<Buffered> => ({
    [RAW]: await readCapped(request, maxBodyBytes),
  })) as never;

  /** 413 → 415 → 400 on the buffered bytes: the decoded object. */
  function judgeBody(request: Request, body: unknown): unknown {
    // `null` is readCapped's "over the limit": it must not be mistaken for "no body".
    const buffered = body as Buffered | undefined;
    const raw = buffered === undefined ? new Uint8Array(0) : buffered[RAW];
    if (raw === null) {
      throw connectErrorFor("payload_too_large", `The body is larger than ${maxBodyBytes} bytes.`);
    }
    if (raw.length > 0 && !JSON_MEDIA_TYPE.test(request.headers.get("content-type") ?? "")) {
      throw connectErrorFor("unsupported_media_type", "Send the body as Content-Type: application/json.");
    }
    return decodeJsonObject(raw);
  }

  // The hooks read `ctx.request`, `ctx.params`, `ctx.body` and never pass `ctx` on: Elysia infers
  // from their source which context fields they use, and a `ctx` handed to a function makes it
  // parse cookies and build a cookie jar per request, which then forces it to rebuild every
  // returned Response (bench/README.md, scenario 2).
  // The call was tagged on the request by admission (rpc/observe.ts); `resolve` types it.
  const resolve = ({ request }: { request: Request }) => ({ call: callOf(request) as CallContext });
  const plugin = new Elysia({ ...ELYSIA_SETTINGS })
    .macro("bearer", (method: MethodName) => ({
      parse: "none" as never,
      transform(ctx) {
        const admitted = admit(ctx.request, ctx.params, ctx.set.headers[REQUEST_ID_HEADER], method);
        // `return ….then(` on purpose: Elysia reads a hook's source to decide whether to await it.
        if (admitted instanceof Promise) return admitted.then(() => undefined);
      },
      resolve,
    }))
    .macro("withBody", ({ method, exists }: BodyRoute) => ({
      parse: bufferBody,
      async transform(ctx) {
        const call = await admit(ctx.request, ctx.params, ctx.set.headers[REQUEST_ID_HEADER], method);
        if (exists) await exists(call, ctx.params);
        ctx.body = judgeBody(ctx.request, ctx.body);
      },
      resolve,
    }))
    .macro("openWithBody", {
      parse: bufferBody,
      transform(ctx) {
        const call: RecordedCall = { values: valuesWith(ctx.set.headers[REQUEST_ID_HEADER]), rate: null };
        tagCall(ctx.request, call);
        ctx.body = judgeBody(ctx.request, ctx.body);
      },
      resolve,
    });

  return {
    /** `.use(kit.plugin)` on a route plugin makes the macros available to its routes. */
    plugin,

    /** The `bearer` macro's admission, for the read lane (read-lane.ts): the call, tagged on the request. */
    admit,

    /**
     * The context of a call without a bearer token (ingest): the implementation reports its
     * rate-limit decision into it, for `rateOf`.
     */
    open(request: Request): CallContext {
      const call: RecordedCall = { values: createContextValues(), rate: null };
      call.values.set(rateLimitSinkKey, (rate) => {
        call.rate = rate;
      });
      return tagCall(request, call);
    },

    /** The rate-limit decision this request was taken under, if its route is limited. */
    rateOf(request: Request): RateDecision | undefined {
      return (callOf(request) as RecordedCall | undefined)?.rate ?? undefined;
    },
  };
}

export type Kit = ReturnType<typeof createKit>;
