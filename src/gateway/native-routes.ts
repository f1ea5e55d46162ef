/**
 * The Bun native routes (serve.ts `routes`) of the operations declared `native`: the health
 * probe, the hot reads and ingest. Bun's router matches the path; the plain path and query are
 * decoded here and the request goes through the edge's steps (edge.ts `serve`) like any other;
 * anything not in its plain form goes to Elysia untouched. Which router served a request is a
 * detail behind the declaration, not a second pipeline.
 */
import type { Edge } from "./edge.ts";
import { PLAIN_SEGMENT, pathAndQuery } from "./http.ts";
import type { Operation, QueryForm } from "./operation.ts";

const LIMIT = /^(?:[1-9][0-9]?|100)$/;
const NO_INPUT = Object.freeze({});

/**
 * A native route's query (without `?`) decoded as Elysia's query schema would for `form`, or
 * null when it holds anything else (a repeated or unknown key, `limit=05`, a percent-encoded
 * value): that request goes to Elysia. Defaults as the schemas give them (schemas.ts).
 */
export function plainQuery(search: string, form: QueryForm): Record<string, unknown> | null {
  // A route without a query schema ignores its query, in Elysia too.
  if (form === "none") return NO_INPUT;
  const input: Record<string, unknown> = form === "tokenPage" ? { limit: 20, include_revoked: false } : { limit: 20 };
  if (search === "") return input;
  const seen = new Set<string>();
  for (const pair of search.split("&")) {
    const eq = pair.indexOf("=");
    const key = eq === -1 ? pair : pair.slice(0, eq);
    const value = eq === -1 ? "" : pair.slice(eq + 1);
    if (seen.has(key)) return null;
    seen.add(key);
    if (key === "limit" && LIMIT.test(value)) input.limit = Number(value);
    else if (key === "cursor" && PLAIN_SEGMENT.test(value)) input.cursor = value;
    else if (key === "include_revoked" && form === "tokenPage" && (value === "true" || value === "false"))
      input.include_revoked = value === "true";
    else return null;
  }
  return input;
}

type Handle = (request: Request) => Response | Promise<Response>;

/**
 * Bun.serve `routes` for the operations declared `native` (serve.ts): Bun's router matched
 * the path; a request whose id or query is not in its plain form (percent-encoded, repeated,
 * unknown keys), or of another method (HEAD), goes to `fallback` (Elysia) untouched.
 */
export function nativeRoutes(
  edge: Pick<Edge, "serve">,
  operations: readonly Operation[],
  fallback: Handle,
): Record<string, Record<string, Handle>> {
  const table: Record<string, Record<string, Handle>> = {};
  for (const op of operations) {
    const form = op.native;
    if (form === undefined) continue;
    const named = /\/:([a-z_]+)$/.exec(op.path);
    const name = named?.[1];
    if (op.path.slice(0, named?.index).includes(":"))
      throw new Error(`a native route names one last segment: ${op.path}`);
    // Step 4 here is the plain decoding alone: a management body needs Elysia's schemas.
    if (op.body === "json" || op.exists) throw new Error(`a native route takes no JSON body: ${op.path}`);
    const prefix = named ? op.path.slice(0, named.index + 1) : op.path;
    const route: Handle = (request) => {
      if (request.method !== op.method) return fallback(request);
      const [path, search] = pathAndQuery(request.url);
      let params: Record<string, string> = NO_INPUT as Record<string, string>;
      if (name !== undefined) {
        const id = path.slice(prefix.length);
        if (!path.startsWith(prefix) || !PLAIN_SEGMENT.test(id)) return fallback(request);
        params = { [name]: id };
      } else if (path !== op.path) return fallback(request);
      const query = plainQuery(search, form);
      return query ? edge.serve(op, request, params, query) : fallback(request);
    };
    table[op.path] = { ...table[op.path], [op.method]: route };
  }
  return table;
}
