/**
 * The feed paging floor's handlers (bench scenario 8): `GET /v1/feed?after=<cursor>&limit=<n>`
 * answered with ONE prepared statement over the same rows and the same bytes Intake writes
 * (each event's JSON around its stored payload, the same cursor encoding), and nothing else:
 * no authentication, no routing, no validation beyond the numbers. One on SQLite (a bun:sqlite
 * statement), one on PostgreSQL (Bun's SQL client, which Intake's PostgreSQL store uses too:
 * one constant text, prepared once per connection); both write their page with
 * `feedPageBody`, compressed as offered. Served by bench/floor-feed.ts; the SQLite one is also called in process by
 * bench/inproc.ts (scenario feed1000floor).
 */
import type { Database } from "bun:sqlite";
import { brotliCompressSync, constants } from "node:zlib";
import type { SQL } from "bun";
import { decodeFeedCursor, encodeFeedCursor } from "../../src/domain/feed-cursor.ts";
import { pickEncoding } from "../../src/gateway/compression.ts";

/**
 * One event row as the floor reads it. bun:sqlite gives the integers as numbers; Bun's
 * PostgreSQL client gives `bigint` columns as strings.
 */
export interface FeedFloorRow {
  id: string;
  service_id: string;
  received_at: number | string;
  idempotency_key: string | null;
  payload: Uint8Array;
  position: number | string;
}

const COLUMNS = "SELECT id, service_id, received_at, idempotency_key, payload, position FROM events";
const SQLITE_PAGE = `${COLUMNS} WHERE tenant_id = ?1 AND position > ?2 ORDER BY position LIMIT ?3`;
/** The text of Intake's own feed read (src/store/postgres/event-reads.ts, FEED), fewer columns. */
const POSTGRES_PAGE = `${COLUMNS} WHERE tenant_id = $1 AND position > $2 ORDER BY position LIMIT $3`;

const utf8 = new TextEncoder();
const headers = { "content-type": "application/json; charset=utf-8" };

/**
 * The page's bytes, as Intake's GET /v1/feed writes them: `{"data":[` the events `],"next_cursor":"…"}`,
 * the cursor at the last row's position (at `position` itself when the page is empty).
 */
export function feedPageBody(tenantId: string, position: number, rows: readonly FeedFloorRow[]): Buffer {
  const parts: Uint8Array[] = [utf8.encode('{"data":[')];
  rows.forEach((e, i) => {
    const head =
      `${i === 0 ? "" : ","}{"id":"evt_${e.id}","service_id":"svc_${e.service_id}",` +
      `"received_at":"${new Date(Number(e.received_at)).toISOString()}","idempotency_key":${JSON.stringify(e.idempotency_key)},"payload":`;
    parts.push(utf8.encode(head), e.payload, utf8.encode("}"));
  });
  const last = rows[rows.length - 1];
  parts.push(utf8.encode(`],"next_cursor":"${encodeFeedCursor(tenantId, last ? Number(last.position) : position)}"}`));
  return Buffer.concat(parts);
}

/** The page a request asks for; null for anything but /v1/feed (the readiness probe). */
function pageOf(request: Request, tenantId: string): { position: number; limit: number } | null {
  const url = new URL(request.url);
  if (url.pathname !== "/v1/feed") return null;
  const after = url.searchParams.get("after");
  return {
    position: after ? decodeFeedCursor(tenantId, after) : 0,
    limit: Number(url.searchParams.get("limit") ?? "100"),
  };
}

/**
 * The page as SPEC §20 requires it be sent: br where the client offers it (Bun's fetch, the
 * bench's reader, does), else gzip where offered, else plain (Intake's own reading of
 * Accept-Encoding); at the fastest setting, the least the contract asks.
 */
function answer(request: Request, body: Buffer): Response {
  const encoding = pickEncoding(request.headers.get("accept-encoding") ?? "");
  if (encoding === "br") {
    const br = brotliCompressSync(body, { params: { [constants.BROTLI_PARAM_QUALITY]: 1 } });
    return new Response(br, { headers: { ...headers, "content-encoding": "br" } });
  }
  if (encoding === "gzip") {
    return new Response(Bun.gzipSync(body as Uint8Array<ArrayBuffer>, { level: 1 }), {
      headers: { ...headers, "content-encoding": "gzip" },
    });
  }
  return new Response(body, { headers });
}

const ready = () => new Response('{"status":"ok"}', { headers });

/** On a SQLite file: one prepared bun:sqlite statement. */
export function feedFloor(db: Database, tenantId: string): (request: Request) => Response {
  const page = db.prepare<FeedFloorRow, [string, number, number]>(SQLITE_PAGE);
  return (request) => {
    const wanted = pageOf(request, tenantId);
    if (!wanted) return ready();
    const rows = page.all(tenantId, wanted.position, wanted.limit);
    return answer(request, feedPageBody(tenantId, wanted.position, rows));
  };
}

/**
 * On PostgreSQL: one constant statement through Bun's SQL client, which prepares it once per
 * connection (a named statement; `prepare: true` is the client's default and the caller's
 * `sql` must keep it) and then only binds and executes it.
 */
export function feedFloorPostgres(sql: SQL, tenantId: string): (request: Request) => Promise<Response> {
  return async (request) => {
    const wanted = pageOf(request, tenantId);
    if (!wanted) return ready();
    const rows: FeedFloorRow[] = await sql.unsafe(POSTGRES_PAGE, [tenantId, wanted.position, wanted.limit]);
    return answer(request, feedPageBody(tenantId, wanted.position, rows));
  };
}
