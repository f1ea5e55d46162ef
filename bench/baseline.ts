/**
 * The bare `Bun.serve` baseline: the ceiling for an HTTP server in this runtime on this
 * machine. GET answers a small JSON object; POST reads the whole body first (as Intake must
 * before it can verify a signature) and answers a small JSON object. Any path.
 *
 * `GET /floor/...` is a second reference, for scenario 2: the least work any server must do to
 * answer an authenticated GET the way the contract requires, hand-written with nothing else: read
 * the Authorization header, HMAC the bearer token with a pepper (tokens are stored only as
 * digests), look the digest up in a Map, answer a prebuilt tenant body with a fresh
 * X-Request-Id. No routing, validation, access rules or serialization.
 *
 * `GET /floor-limited/...` is the same floor answering also the two fields every rate-limited
 * response carries (docs/rate-limits.md): `RateLimit-Policy` and a `RateLimit` whose remaining
 * count goes down, values of Intake's length. It is the floor of scenario 2's "limits
 * configured but unspent" goal: what sending those fields costs by itself in the same run.
 *
 * Usage: PORT=<port> bun bench/baseline.ts
 */
const port = Number(process.env.PORT ?? "0");
const headers = { "content-type": "application/json; charset=utf-8" };
const getBody = JSON.stringify({ status: "ok", version: "baseline" });

const BEARER = /^Bearer +(\S+) *$/i;
const keyed = new Bun.CryptoHasher("sha256", "bench-floor-pepper-of-at-least-32-bytes");
const tenantBody = JSON.stringify({
  id: "019a9f6e-0000-7000-8000-000000000000",
  name: "bench",
  permission_mode: "role_based",
  created_at: "2026-11-22T10:00:00.000Z",
});
const principals = new Map<string, string>();

const LIMIT_POLICY = '"api";q=1000000000;w=3600';
let remaining = 999_999_999;

function floor(request: Request, limited: boolean): Response {
  const match = BEARER.exec(request.headers.get("authorization") ?? "");
  if (!match) return new Response(null, { status: 401 });
  const hasher = keyed.copy();
  hasher.update(match[1] as string);
  const digest = hasher.digest("hex");
  // The first sight of a token stands in for the store read: every later request is a hit.
  let body = principals.get(digest);
  if (body === undefined) {
    body = tenantBody;
    principals.set(digest, body);
  }
  const requestId = `req_${Buffer.from(crypto.getRandomValues(new Uint8Array(16)).buffer).toString("hex")}`;
  if (!limited) return new Response(body, { headers: { ...headers, "x-request-id": requestId } });
  return new Response(body, {
    headers: {
      ...headers,
      "x-request-id": requestId,
      "ratelimit-policy": LIMIT_POLICY,
      ratelimit: `"api";r=${remaining--};t=3600`,
    },
  });
}

const server = Bun.serve({
  hostname: "127.0.0.1",
  port,
  // As Intake's listener (src/serve.ts): production mode whatever NODE_ENV says.
  development: false,
  async fetch(request) {
    if (request.method === "POST") {
      const body = await request.arrayBuffer();
      return new Response(JSON.stringify({ received: body.byteLength }), { status: 202, headers });
    }
    if (request.url.includes("/floor/")) return floor(request, false);
    if (request.url.includes("/floor-limited/")) return floor(request, true);
    return new Response(getBody, { headers });
  },
});

process.stdout.write(`baseline listening on ${server.url.href}\n`);
process.on("SIGTERM", () => {
  void server.stop(true);
  process.exit(0);
});
