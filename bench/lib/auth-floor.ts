/**
 * Scenario 2's floor (bench/baseline.ts serves it at `GET /floor/…` and `/floor-limited/…`;
 * bench/inproc.ts `--scenario tenantfloor` calls it in process): the least work any server must
 * do to answer an authenticated GET the way the contract requires, hand-written with nothing
 * else: read the Authorization header, HMAC the bearer token with a pepper (tokens are stored
 * only as digests), look the digest up in a Map, answer a prebuilt tenant body with a fresh
 * X-Request-Id. No routing, validation, access rules or serialization.
 *
 * `limited`: the same answer with the two fields every rate-limited response carries
 * (docs/rate-limits.md): `RateLimit-Policy` and a `RateLimit` whose remaining count goes down,
 * values of Intake's length — the floor of the "limits configured but unspent" goal.
 */
const BEARER = /^Bearer +(\S+) *$/i;
const JSON_TYPE = "application/json; charset=utf-8";
const LIMIT_POLICY = '"api";q=1000000000;w=3600';
const tenantBody = JSON.stringify({
  id: "019a9f6e-0000-7000-8000-000000000000",
  name: "bench",
  permission_mode: "role_based",
  created_at: "2026-11-22T10:00:00.000Z",
});

export function authFloor(): (request: Request, limited: boolean) => Response {
  const keyed = new Bun.CryptoHasher("sha256", "bench-floor-pepper-of-at-least-32-bytes");
  const principals = new Map<string, string>();
  let remaining = 999_999_999;
  return (request, limited) => {
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
    if (!limited) return new Response(body, { headers: { "content-type": JSON_TYPE, "x-request-id": requestId } });
    return new Response(body, {
      headers: {
        "content-type": JSON_TYPE,
        "x-request-id": requestId,
        "ratelimit-policy": LIMIT_POLICY,
        ratelimit: `"api";r=${remaining--};t=3600`,
      },
    });
  };
}
