/**
 * README.md's last line, with real processes: two `intake serve` instances on one fresh
 * PostgreSQL database and one Redis (same pepper, secrets key and key prefix). A change made
 * through A must hold on B on B's very next request, even where B had just cached the old
 * state: that is what the acknowledged invalidation in src/cache/redis.ts is for.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Redis } from "ioredis";
import { createDeployment, type Deployment } from "../support/deployment.ts";
import type { IntakeProcess } from "../support/intake-process.ts";
import { serviceAvailable, TEST_REDIS_URL } from "../support/services.ts";
import { sign } from "../support/signing.ts";

const ok = (await serviceAvailable("postgres")) && (await serviceAvailable("redis"));

describe.skipIf(!ok)("two instances on one PostgreSQL and one Redis", () => {
  const GRACE_SECONDS = 2;
  let deployment: Deployment | undefined;
  let prefix: string;
  let a: IntakeProcess;
  let b: IntakeProcess;
  let owner: string;
  let redis: Redis | undefined;

  beforeAll(async () => {
    deployment = await createDeployment({ env: { INTAKE_ROTATION_GRACE_SECONDS: String(GRACE_SECONDS) } });
    prefix = deployment.prefix;
    owner = deployment.owner.token;
    [a, b] = await Promise.all([deployment.start("A"), deployment.start("B")]);
    redis = new Redis(TEST_REDIS_URL, { maxRetriesPerRequest: 1 });
  }, 60_000);

  afterAll(async () => {
    redis?.disconnect();
    await deployment?.close();
  }, 30_000);

  async function mint(on: IntakeProcess, name: string): Promise<{ id: string; token: string }> {
    const res = await on.fetch("/v1/api_tokens", {
      method: "POST",
      token: owner,
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ name, scope: "read_write", role: "admin" }),
    });
    expect(res.status).toBe(201);
    return (await res.json()) as { id: string; token: string };
  }

  /** PATCH is_monitored through `on`: pausing (false) or resuming (true) a service. */
  function setMonitored(on: IntakeProcess, id: string, monitored: boolean): Promise<Response> {
    return on.fetch(`/v1/services/${id}`, {
      method: "PATCH",
      token: owner,
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ is_monitored: monitored }),
    });
  }

  async function createService(on: IntakeProcess, name: string): Promise<{ id: string; signing_secret: string }> {
    const res = await on.fetch("/v1/services", {
      method: "POST",
      token: owner,
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ service_name: name }),
    });
    expect(res.status).toBe(201);
    return (await res.json()) as { id: string; signing_secret: string };
  }

  async function ingest(on: IntakeProcess, serviceId: string, secret: string): Promise<Response> {
    const body = JSON.stringify({ type: "invoice.paid", n: crypto.randomUUID() });
    return on.fetch(`/v1/ingest/${serviceId}`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-service-signature": sign(secret, body, Date.now()) },
      body,
    });
  }

  const tenantStatus = async (on: IntakeProcess, token: string) => (await on.fetch("/v1/tenant", { token })).status;

  test("a token revoked through A is refused by B on its very next request, though B had it cached", async () => {
    const victim = await mint(a, "victim");
    // Warm B: its in-process tier and Redis now both hold the token as valid.
    expect(await tenantStatus(b, victim.token)).toBe(200);
    expect(await tenantStatus(b, victim.token)).toBe(200);
    expect((await redis?.keys(`${prefix}:tok:*`))?.length ?? 0).toBeGreaterThan(0);

    const revoked = await a.fetch(`/v1/api_tokens/${victim.id}`, { method: "DELETE", token: owner });
    expect(revoked.status).toBe(200);

    const next = await b.fetch("/v1/tenant", { token: victim.token });
    expect(next.status).toBe(401);
    expect(((await next.json()) as { error: { code: string } }).error.code).toBe("invalid_credentials");
    expect(await tenantStatus(a, victim.token)).toBe(401);
    // And it stays refused (no stale fill came back into either tier).
    expect(await tenantStatus(b, victim.token)).toBe(401);
  });

  test("a token minted on A works on B at once", async () => {
    const minted = await mint(a, "fresh");
    expect(await tenantStatus(b, minted.token)).toBe(200);
    // A token minted by B's caller through B works on A too.
    const fromB = await mint(b, "from-b");
    expect(await tenantStatus(a, fromB.token)).toBe(200);
  });

  test("pausing a service through A makes B answer 409 to a signed event; resuming lets it in again", async () => {
    const service = await createService(a, "billing");
    // Warm B's signing-material cache with the service as monitored.
    expect((await ingest(b, service.id, service.signing_secret)).status).toBe(202);
    expect((await ingest(b, service.id, service.signing_secret)).status).toBe(202);

    const paused = await setMonitored(a, service.id, false);
    expect(paused.status).toBe(200);
    const refused = await ingest(b, service.id, service.signing_secret);
    expect(refused.status).toBe(409);
    expect(((await refused.json()) as { error: { code: string } }).error.code).toBe("ingestion_paused");

    const resumed = await setMonitored(a, service.id, true);
    expect(resumed.status).toBe(200);
    expect((await ingest(b, service.id, service.signing_secret)).status).toBe(202);
  });

  test("a service deleted through A is unknown to B at once", async () => {
    const service = await createService(a, "doomed");
    expect((await ingest(b, service.id, service.signing_secret)).status).toBe(202);
    expect((await a.fetch(`/v1/services/${service.id}`, { method: "DELETE", token: owner })).status).toBe(204);
    expect((await ingest(b, service.id, service.signing_secret)).status).toBe(401);
  });

  test("B's service list shows a service created, paused and deleted through A at once, though B had just listed", async () => {
    const names = async () => {
      const res = await b.fetch("/v1/services?limit=100", { token: owner });
      expect(res.status).toBe(200);
      return ((await res.json()) as { data: Array<{ service_name: string; is_monitored: boolean }> }).data;
    };
    const before = await names(); // B now holds the tenant's list
    const service = await createService(a, "listed-on-b");
    const after = await names();
    expect(after).toHaveLength(before.length + 1);
    expect(after[0]).toMatchObject({ service_name: "listed-on-b", is_monitored: true });
    const paused = await setMonitored(a, service.id, false);
    expect(paused.status).toBe(200);
    expect((await names())[0]).toMatchObject({ service_name: "listed-on-b", is_monitored: false });
    expect((await a.fetch(`/v1/services/${service.id}`, { method: "DELETE", token: owner })).status).toBe(204);
    expect((await names()).map((s) => s.service_name)).not.toContain("listed-on-b");
  });

  test("races between A and B are decided by the database: one name, one idempotency key, one last owner", async () => {
    const names = await Promise.all(
      [a, b].map((on) =>
        on.fetch("/v1/services", {
          method: "POST",
          token: owner,
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ service_name: "contested" }),
        }),
      ),
    );
    expect(names.map((r) => r.status).sort()).toEqual([201, 409]);
    const winner = names.find((r) => r.status === 201) as Response;
    const service = (await winner.json()) as { id: string; signing_secret: string };

    const body = JSON.stringify({ type: "once" });
    const sig = sign(service.signing_secret, body, Date.now());
    const sent = await Promise.all(
      [a, b].map((on) =>
        on.fetch(`/v1/ingest/${service.id}`, {
          method: "POST",
          headers: { "content-type": "application/json", "x-service-signature": sig, "idempotency-key": "k-1" },
          body,
        }),
      ),
    );
    expect(sent.map((r) => r.status).sort()).toEqual([200, 202]);
    const [first, second] = (await Promise.all(sent.map((r) => r.json()))) as Array<{ id: string }>;
    expect(first?.id).toBe(second?.id as string);

    // A tenant of its own (the CLI again), so the shared owner token above is not at stake.
    const solo = await (deployment as Deployment).bootstrap({ name: "Solo" });
    const minted = await a.fetch("/v1/api_tokens", {
      method: "POST",
      token: solo.token,
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ name: "second owner", scope: "read_write", role: "owner" }),
    });
    expect(minted.status).toBe(201);
    const secondOwner = (await minted.json()) as { id: string; token: string };
    // Each instance revokes the other owner token at once: only one may win, or no owner is left.
    const revocations = await Promise.all([
      a.fetch(`/v1/api_tokens/${secondOwner.id}`, { method: "DELETE", token: solo.token }),
      b.fetch(`/v1/api_tokens/${solo.token_id}`, { method: "DELETE", token: secondOwner.token }),
    ]);
    // The loser is 409 last_owner_token when both were authenticated before either committed,
    // or 401 when its own token was already revoked by the time it was checked. Never two 200s.
    const statuses = revocations.map((r) => r.status).sort();
    expect(statuses[0]).toBe(200);
    expect([401, 409]).toContain(statuses[1] as number);
    const alive = await Promise.all([solo.token, secondOwner.token].map((t) => tenantStatus(b, t)));
    expect(alive.sort()).toEqual([200, 401]);
  });

  test("a rotation through A: B verifies the new secret at once, and the old one until the grace window ends", async () => {
    const service = await createService(a, "rotating");
    const oldSecret = service.signing_secret;
    expect((await ingest(b, service.id, oldSecret)).status).toBe(202);

    const rotated = await a.fetch(`/v1/services/${service.id}/secret_rotations`, { method: "POST", token: owner });
    expect(rotated.status).toBe(201);
    const rotation = (await rotated.json()) as { signing_secret: string; previous_secret_expires_at: string };
    const newSecret = rotation.signing_secret;
    const graceEnds = Date.parse(rotation.previous_secret_expires_at);
    expect(graceEnds - Date.now()).toBeLessThanOrEqual(GRACE_SECONDS * 1000);

    expect((await ingest(b, service.id, newSecret)).status).toBe(202);
    // Within the window both verify (skip the check if this machine was too slow to be inside it).
    if (Date.now() < graceEnds - 500) expect((await ingest(b, service.id, oldSecret)).status).toBe(202);

    // Past the window (with a margin for clock reads between processes), on B's cached material.
    const wait = graceEnds + 250 - Date.now();
    if (wait > 0) await Bun.sleep(wait);
    const late = await ingest(b, service.id, oldSecret);
    expect(late.status).toBe(401);
    expect(((await late.json()) as { error: { code: string } }).error.code).toBe("invalid_signature");
    expect((await ingest(b, service.id, newSecret)).status).toBe(202);
    expect((await ingest(a, service.id, oldSecret)).status).toBe(401);
  }, 15_000);
});
