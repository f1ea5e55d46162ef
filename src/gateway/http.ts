/** Response and request plumbing shared by every route of the REST gateway. */
import type { ErrorCode, FieldIssue } from "../domain/errors.ts";

export const JSON_TYPE = "application/json; charset=utf-8";
export const REQUEST_ID_HEADER = "x-request-id";

/**
 * A path segment a native route (edge.ts) takes as it stands: nothing that percent-decoding
 * would change, so it is what Elysia would decode too.
 */
export const PLAIN_SEGMENT = /^[A-Za-z0-9_-]+$/;

/** A request URL's path and its query (without `?`, "" when none), without parsing the URL. */
export function pathAndQuery(url: string): [path: string, query: string] {
  const start = url.indexOf("/", url.indexOf("//") + 2);
  const q = url.indexOf("?", start);
  return q === -1 ? [url.slice(start), ""] : [url.slice(start, q), url.slice(q + 1)];
}

export function json(status: number, body: unknown, headers?: Record<string, string>): Response {
  return jsonText(status, JSON.stringify(body), headers);
}

/** A JSON answer whose text is already built. */
export function jsonText(status: number, text: string, headers?: Record<string, string>): Response {
  return new Response(text, { status, headers: { "content-type": JSON_TYPE, ...headers } });
}

export interface ErrorBody {
  error: { code: ErrorCode; message: string; request_id: string; details?: FieldIssue[] };
}

export function errorBody(code: ErrorCode, message: string, requestId: string, details?: FieldIssue[]): ErrorBody {
  return {
    error: { code, message, request_id: requestId, ...(details && details.length > 0 && { details }) },
  };
}

/**
 * Reads at most `limit` bytes of a body. Returns null as soon as it is known to be larger
 * (declared Content-Length, or while streaming a chunked body), without reading the rest.
 */
export async function readCapped(request: Request, limit: number): Promise<Uint8Array | null> {
  const declared = request.headers.get("content-length");
  if (declared !== null) {
    if (Number(declared) > limit) return null;
    return new Uint8Array(await request.arrayBuffer());
  }
  if (!request.body) return new Uint8Array(0);
  const chunks: Uint8Array[] = [];
  let total = 0;
  const reader = request.body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > limit) {
      await reader.cancel().catch(() => {});
      return null;
    }
    chunks.push(value);
  }
  return chunks.length === 1 ? (chunks[0] as Uint8Array) : Buffer.concat(chunks);
}

/**
 * Elysia instance settings shared by every gateway plugin: `normalize: false` makes an
 * unknown body field a 400 (docs/api.md) instead of silently dropping it.
 *
 * `standardHostname: false`: by default Elysia looks for the path from the URL's 11th
 * character (`url.indexOf("/", 11)`), assuming a host of at least four characters, so a
 * `Host: api` request was routed by the wrong path (`/tenant` for `/v1/tenant`, and
 * `/zz/v1/tenant` reached `/v1/tenant`). Off, it searches after `http://`. Intake's listener
 * is plain HTTP (TLS ends in front of it), so every request URL starts with `http://`
 * (docs/architecture.md, "Upstream reports").
 */
export const ELYSIA_SETTINGS = { normalize: false, handler: { standardHostname: false } } as const;
