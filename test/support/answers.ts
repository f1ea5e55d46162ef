/**
 * Two answers to the same request, compared: test/gateway/native-routes.test.ts checks that an
 * operation served by a Bun native route answers exactly what its Elysia route answers.
 */
import { expect } from "bun:test";

export interface Seen {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/**
 * Status, headers and body, with what differs by design between two answers masked: the
 * request's own id (and the Date), the RateLimit count that went down between the two, and a new
 * event's id.
 */
export async function seen(response: Response): Promise<Seen> {
  const requestId = response.headers.get("x-request-id");
  expect(requestId).toMatch(/^req_[0-9a-f]{32}$/);
  const headers: Record<string, string> = {};
  for (const [name, value] of response.headers) {
    if (name === "x-request-id" || name === "date") continue;
    headers[name] = name === "ratelimit" ? value.replace(/;r=\d+;/, ";r=N;") : value;
  }
  const body = (await response.text()).replaceAll(requestId as string, "REQ").replace(/evt_[0-9a-f]{32}/g, "EVT");
  return { status: response.status, headers, body };
}
