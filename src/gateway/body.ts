/**
 * A management body's judgement, after admission (docs/api.md check order): 413 over the cap,
 * 415 without `application/json`, 400 for bytes that are not one flat-enough JSON object. The
 * schema's own validation follows (Elysia's, with the operation's body schema).
 */
import { connectErrorFor } from "../rpc/errors.ts";

const utf8 = new TextDecoder("utf-8", { fatal: true });
const JSON_MEDIA_TYPE = /^application\/json\s*(;|$)/i;

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
 * 413 → 415 → 400 on the buffered bytes (`null`: over `cap`, as readCapped says; never "no
 * body"): the decoded object.
 */
export function judgeBody(raw: Uint8Array | null, contentType: string | null, cap: number): unknown {
  if (raw === null) throw connectErrorFor("payload_too_large", `The body is larger than ${cap} bytes.`);
  if (raw.length > 0 && !JSON_MEDIA_TYPE.test(contentType ?? "")) {
    throw connectErrorFor("unsupported_media_type", "Send the body as Content-Type: application/json.");
  }
  return decodeJsonObject(raw);
}
