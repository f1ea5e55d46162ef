/**
 * Strict numbers (SPEC §20, docs/api.md "Numbers"): step 4 of the edge, before the schemas.
 * Elysia's validators coerce a string to the number a schema expects ("5", "0x10" and "1e3"
 * all passed as `rate_limit.limit`, the second stored as 16); in a JSON body a number is a
 * JSON number, so such a string is a 400 naming the field. A query parameter is text by
 * nature: an integer one must be plain decimal digits within its bounds, and says so (instead
 * of Elysia's "should be one of: 'integer', 'integer'").
 */
import type { TSchema } from "elysia";
import type { FieldIssue } from "../domain/errors.ts";
import { connectErrorFor } from "../rpc/errors.ts";

interface Shape {
  type?: unknown;
  properties?: Record<string, Shape>;
  anyOf?: Shape[];
  items?: Shape;
  minimum?: number;
  maximum?: number;
}

const isNumeric = (s: Shape) => s.type === "integer" || s.type === "number";

function holdsNumber(s: Shape): boolean {
  if (isNumeric(s)) return true;
  if (s.properties && Object.values(s.properties).some(holdsNumber)) return true;
  if (s.anyOf?.some(holdsNumber)) return true;
  return s.items !== undefined && holdsNumber(s.items);
}

function kind(s: Shape): string {
  return s.type === "integer" || s.anyOf?.some((m) => m.type === "integer") ? "a whole JSON number" : "a JSON number";
}

function collect(s: Shape, value: unknown, field: string, issues: FieldIssue[]): void {
  if (typeof value === "string") {
    if (isNumeric(s) || s.anyOf?.some(isNumeric))
      issues.push({ field, message: `must be ${kind(s)}, not a string (${JSON.stringify(value.slice(0, 20))})` });
    return;
  }
  if (typeof value !== "object" || value === null) return;
  if (Array.isArray(value)) {
    if (s.items) for (const [i, item] of value.entries()) collect(s.items, item, `${field}.${i}`, issues);
    return;
  }
  const objects = s.properties ? [s] : (s.anyOf ?? []).filter((m) => m.properties);
  const record = value as Record<string, unknown>;
  for (const o of objects) {
    for (const [key, property] of Object.entries(o.properties ?? {})) {
      if (key in record) collect(property, record[key], field === "" ? key : `${field}.${key}`, issues);
    }
  }
}

interface Checks {
  body: Shape | null;
  query: Array<[name: string, min: number | undefined, max: number | undefined]>;
}

const NONE: Checks = { body: null, query: [] };
const checksOf = new WeakMap<object, Checks>();

/** What an operation's schemas ask of numbers, worked out once per operation. */
function checks(schemas: { body?: TSchema; query?: TSchema }): Checks {
  let found = checksOf.get(schemas);
  if (found) return found;
  const body = schemas.body && holdsNumber(schemas.body as Shape) ? (schemas.body as Shape) : null;
  // Elysia rewrites a query integer in place into `anyOf: [numeric string, integer]`.
  const query: Checks["query"] = [];
  for (const [name, s] of Object.entries((schemas.query as Shape | undefined)?.properties ?? {})) {
    const integer = s.type === "integer" ? s : s.anyOf?.find((m) => m.type === "integer");
    if (integer) query.push([name, integer.minimum ?? s.minimum, integer.maximum ?? s.maximum]);
  }
  found = body === null && query.length === 0 ? NONE : { body, query };
  checksOf.set(schemas, found);
  return found;
}

const DIGITS = /^[0-9]{1,16}$/;

function range(min: number | undefined, max: number | undefined): string {
  if (min !== undefined && max !== undefined) return ` from ${min} to ${max}`;
  if (min !== undefined) return ` of at least ${min}`;
  return max !== undefined ? ` of at most ${max}` : "";
}

/** 400 for a number written as a string in the body, or an integer query parameter that is not one. */
export function checkNumbers(schemas: { body?: TSchema; query?: TSchema }, query: unknown, body: unknown): void {
  const { body: bodyShape, query: integers } = checks(schemas);
  if (bodyShape === null && integers.length === 0) return;
  const issues: FieldIssue[] = [];
  if (integers.length > 0 && typeof query === "object" && query !== null) {
    const q = query as Record<string, unknown>;
    for (const [name, min, max] of integers) {
      const raw = q[name];
      if (typeof raw !== "string") continue;
      const n = Number(raw);
      if (!DIGITS.test(raw) || (min !== undefined && n < min) || (max !== undefined && n > max))
        issues.push({
          field: name,
          message: `must be a whole number${range(min, max)} (got ${JSON.stringify(raw.slice(0, 20))})`,
        });
    }
  }
  if (bodyShape !== null) collect(bodyShape, body, "", issues);
  if (issues.length > 0) throw connectErrorFor("invalid_request", "The request is invalid.", issues);
}
