/**
 * The feed paging floor's handler (bench scenario 8): `GET /v1/feed?after=<cursor>&limit=<n>`
 * answered with ONE prepared bun:sqlite statement over the same rows and the same bytes Intake
 * writes (each event's JSON around its stored payload, the same cursor encoding), and nothing
 * else: no authentication, no routing, no validation beyond the numbers. Served by
 * bench/floor-feed.ts; called in process by bench/inproc.ts (scenario feed1000floor).
 */
import type { Database } from "bun:sqlite";
import { decodeFeedCursor, encodeFeedCursor } from "../../src/domain/feed.ts";

export function feedFloor(db: Database, tenantId: string): (request: Request) => Response {
  const page = db.prepare<
    {
      id: string;
      service_id: string;
      received_at: number;
      idempotency_key: string | null;
      payload: Uint8Array;
      position: number;
    },
    [string, number, number]
  >(
    "SELECT id, service_id, received_at, idempotency_key, payload, position FROM events " +
      "WHERE tenant_id = ?1 AND position > ?2 ORDER BY position LIMIT ?3",
  );
  const utf8 = new TextEncoder();
  const headers = { "content-type": "application/json; charset=utf-8" };

  return (request) => {
    const url = new URL(request.url);
    if (url.pathname !== "/v1/feed") return new Response('{"status":"ok"}', { headers }); // readiness
    const after = url.searchParams.get("after");
    const position = after ? decodeFeedCursor(tenantId, after) : 0;
    const limit = Number(url.searchParams.get("limit") ?? "100");
    const rows = page.all(tenantId, position, limit);
    const parts: Uint8Array[] = [utf8.encode('{"data":[')];
    rows.forEach((e, i) => {
      const head =
        `${i === 0 ? "" : ","}{"id":"evt_${e.id}","service_id":"svc_${e.service_id}",` +
        `"received_at":"${new Date(e.received_at).toISOString()}","idempotency_key":${JSON.stringify(e.idempotency_key)},"payload":`;
      parts.push(utf8.encode(head), e.payload, utf8.encode("}"));
    });
    const last = rows[rows.length - 1];
    parts.push(utf8.encode(`],"next_cursor":"${encodeFeedCursor(tenantId, last ? last.position : position)}"}`));
    return new Response(Buffer.concat(parts), { headers });
  };
}
