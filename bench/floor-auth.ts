/**
 * The floor for scenario 5's cold cache: the least work any server must do to answer a bearer
 * token it has not seen before, on a bare `Bun.serve`: read the Authorization header, digest the
 * token with the pepper (Intake's `createTokenHasher`; tokens are stored only as digests), miss
 * a Map, read the token and its tenant through Intake's SQLite store adapter (the very
 * statements Intake runs) and answer the tenant as JSON. Nothing else of Intake: no routing,
 * token shape check, access rules, cache namespace, last_used_at bookkeeping or framework.
 * Any path.
 *
 * Usage: PORT=<port> FLOOR_DATABASE=<sqlite file path> FLOOR_PEPPER=<INTAKE_TOKEN_PEPPER> \
 *   bun bench/floor-auth.ts
 * The database must already hold Intake's tables and the tokens (the bench points it at the
 * database of the Intake it is compared with; the two run one after the other, never at once).
 */
import { createTokenHasher } from "../src/domain/credentials.ts";
import type { TenantRecord } from "../src/domain/types.ts";
import { createSqliteStore } from "../src/store/sqlite/store.ts";
import { requiredEnv } from "./lib/procs.ts";

const port = Number(process.env.PORT ?? "0");
const hash = createTokenHasher(requiredEnv("FLOOR_PEPPER"));
const store = createSqliteStore({ path: requiredEnv("FLOOR_DATABASE") });
await store.migrate(); // already applied by Intake: a no-op that readies the store's statements
const headers = { "content-type": "application/json; charset=utf-8" };
const BEARER = /^Bearer +(\S+) *$/i;
const tenants = new Map<string, TenantRecord | null>();

async function load(digest: string): Promise<TenantRecord | null> {
  const token = await store.tokens.findByDigest(digest);
  return token ? await store.tenants.get(token.tenantId) : null;
}

const server = Bun.serve({
  hostname: "127.0.0.1",
  port,
  // As Intake's listener (src/serve.ts): production mode whatever NODE_ENV says.
  development: false,
  async fetch(request) {
    const authorization = request.headers.get("authorization");
    if (authorization === null) return new Response('{"status":"ok"}', { headers }); // readiness
    const match = BEARER.exec(authorization);
    if (!match) return new Response(null, { status: 401 });
    const digest = hash(match[1] as string);
    let tenant = tenants.get(digest);
    if (tenant === undefined) {
      tenant = await load(digest);
      tenants.set(digest, tenant);
    }
    if (tenant === null) return new Response(null, { status: 401 });
    return new Response(
      JSON.stringify({
        id: tenant.id,
        name: tenant.name,
        permission_mode: tenant.permissionMode,
        created_at: new Date(tenant.createdAt).toISOString(),
      }),
      { headers },
    );
  },
});

process.stdout.write(`auth floor listening on ${server.url.href}\n`);
process.on("SIGTERM", () => {
  void server.stop(true);
  void store.close().finally(() => process.exit(0));
});
