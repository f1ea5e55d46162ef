import type { TSchema } from "elysia";
import { ErrorResponse } from "./schemas.ts";

/**
 * Response map for a route's documentation: its success schema plus the error statuses it can
 * answer. Every route that uses it is a limited one (docs/rate-limits.md): 429 is always listed.
 */
export function responses(success: Record<number, TSchema>, ...errorStatuses: number[]): Record<number, TSchema> {
  const map: Record<number, TSchema> = { ...success };
  for (const status of [401, 404, 429, 500, 503, ...errorStatuses]) map[status] = ErrorResponse;
  return map;
}

export const bearerSecurity = [{ bearer: [] }];
