import { afterEach, expect, test } from "bun:test";
import { randomBytes } from "node:crypto";
import { createSealer } from "../../src/domain/sealing.ts";
import { createWorld, type World } from "../support/harness.ts";

let world: World;
afterEach(async () => {
  await world?.close();
});

const RECORD_KEYS = [
  "created_at",
  "id",
  "incident_auto_resolve_seconds",
  "is_monitored",
  "previous_secret_expires_at",
  "rate_limit",
  "secret_rotated_at",
  "service_name",
  "signature_scheme",
  "signing_secret_prefix",
  "updated_at",
].sort();

test("201 POST /v1/services returns the record plus signing_secret; prefix is its first 10 chars", async () => {
  world = await createWorld();
  const reply = await world.request("POST", "/v1/services", { body: { service_name: "  billing  " } });
  expect(reply.status).toBe(201);
  expect(Object.keys(reply.body).sort()).toEqual([...RECORD_KEYS, "signing_secret"].sort());
  expect(reply.body).toMatchObject({
    service_name: "billing",
    is_monitored: true,
    created_at: "2026-11-22T10:00:00.000Z",
    updated_at: "2026-11-22T10:00:00.000Z",
    secret_rotated_at: null,
    previous_secret_expires_at: null,
  });
  expect(reply.body.id).toMatch(/^svc_[0-9a-f]{32}$/);
  expect(reply.body.signing_secret).toMatch(/^whsec_[0-9A-Za-z]{43}$/);
  expect(reply.body.signing_secret_prefix).toBe(reply.body.signing_secret.slice(0, 10));
});

test("201 with is_monitored false when asked", async () => {
  world = await createWorld();
  const reply = await world.request("POST", "/v1/services", { body: { service_name: "quiet", is_monitored: false } });
  expect(reply.body.is_monitored).toBe(false);
});

test("200 GET and list return the service without the secret", async () => {
  world = await createWorld();
  const { id, secret } = await world.createService("billing");
  const got = await world.request("GET", `/v1/services/${id}`);
  expect(got.status).toBe(200);
  expect(Object.keys(got.body).sort()).toEqual(RECORD_KEYS);
  expect(got.body.signing_secret_prefix).toBe(secret.slice(0, 10));
  expect(got.text).not.toContain(secret);
  const list = await world.request("GET", "/v1/services");
  expect(list.body.data).toHaveLength(1);
  expect(Object.keys(list.body.data[0]).sort()).toEqual(RECORD_KEYS);
  expect(list.text).not.toContain(secret);
});

test("service list is newest first and keyset pages cover every service exactly once", async () => {
  world = await createWorld();
  const created: string[] = [];
  for (let i = 0; i < 11; i++) created.push((await world.createService(`s${i}`)).id);
  const seen: string[] = [];
  let cursor: string | null = null;
  for (let page = 0; page < 10; page++) {
    const suffix: string = cursor ? `&cursor=${cursor}` : "";
    const reply = await world.request("GET", `/v1/services?limit=3${suffix}`);
    seen.push(...reply.body.data.map((s: { id: string }) => s.id));
    cursor = reply.body.next_cursor;
    if (cursor === null) break;
  }
  expect(seen).toEqual([...created].reverse());
});

test("the list follows every change at once: create, pause, rate limit, rotation and delete (a held list is invalidated)", async () => {
  world = await createWorld();
  const listed = async () => (await world.request("GET", "/v1/services")).body.data as Array<Record<string, unknown>>;
  const first = await world.createService("first");
  expect((await listed()).map((s) => s.id)).toEqual([first.id]);
  const second = await world.createService("second");
  expect((await listed()).map((s) => s.id)).toEqual([second.id, first.id]);

  expect((await world.request("PATCH", `/v1/services/${first.id}`, { body: { is_monitored: false } })).status).toBe(
    200,
  );
  expect((await listed())[1]).toMatchObject({ id: first.id, is_monitored: false });

  const limit = { limit: 7, window_seconds: 60 };
  expect((await world.request("PATCH", `/v1/services/${first.id}`, { body: { rate_limit: limit } })).status).toBe(200);
  expect((await listed())[1]?.rate_limit).toEqual(limit);

  world.clock.advance(5_000);
  const rotated = await world.request("POST", `/v1/services/${second.id}/secret_rotations`);
  expect(rotated.status).toBe(201);
  expect((await listed())[0]).toMatchObject({
    id: second.id,
    signing_secret_prefix: rotated.body.signing_secret.slice(0, 10),
    secret_rotated_at: rotated.body.rotated_at,
  });

  expect((await world.request("DELETE", `/v1/services/${second.id}`)).status).toBe(204);
  expect((await listed()).map((s) => s.id)).toEqual([first.id]);
});

test("first pages of every limit, asked twice each, answer their own rows and cursor (first pages are remembered per list)", async () => {
  world = await createWorld();
  const created: string[] = [];
  for (let i = 0; i < 8; i++) created.push((await world.createService(`s${i}`)).id);
  const newestFirst = [...created].reverse();
  for (const round of [1, 2]) {
    for (const limit of [1, 2, 3, 4, 5, 6, 7, 8, 9]) {
      const reply = await world.request("GET", `/v1/services?limit=${limit}`);
      expect(reply.status, `round ${round}, limit ${limit}`).toBe(200);
      expect(reply.body.data.map((s: { id: string }) => s.id)).toEqual(newestFirst.slice(0, limit));
      if (limit >= 8) {
        expect(reply.body.next_cursor).toBeNull();
        continue;
      }
      const next = await world.request("GET", `/v1/services?limit=1&cursor=${reply.body.next_cursor}`);
      expect(next.body.data.map((s: { id: string }) => s.id)).toEqual([newestFirst[limit]]);
    }
  }
});

test("a tenant with more services than are held whole (200) pages through every one from the store, newest first", async () => {
  world = await createWorld();
  const created: string[] = [];
  for (let i = 0; i < 203; i++) created.push((await world.createService(`bulk-${i}`)).id);
  const seen: string[] = [];
  let cursor: string | null = null;
  do {
    const suffix: string = cursor ? `&cursor=${cursor}` : "";
    const reply = await world.request("GET", `/v1/services?limit=100${suffix}`);
    expect(reply.status).toBe(200);
    seen.push(...reply.body.data.map((s: { id: string }) => s.id));
    cursor = reply.body.next_cursor;
  } while (cursor !== null);
  expect(seen).toEqual([...created].reverse());
  // One deleted: 202 left, still more than are held; the next page 1 shows the change at once.
  expect((await world.request("DELETE", `/v1/services/${created[202]}`)).status).toBe(204);
  expect((await world.request("GET", "/v1/services?limit=1")).body.data[0].id).toBe(created[201]);
});

test("200 PATCH {} changes nothing, not even updated_at", async () => {
  world = await createWorld();
  const { id } = await world.createService();
  const before = await world.request("GET", `/v1/services/${id}`);
  world.clock.advance(5_000);
  const reply = await world.request("PATCH", `/v1/services/${id}`, { body: {} });
  expect(reply.status).toBe(200);
  expect(reply.body).toEqual(before.body);
  expect((await world.request("GET", `/v1/services/${id}`)).body).toEqual(before.body);
});

test("200 PATCH is_monitored toggles it and moves updated_at; the same value is a no-op", async () => {
  world = await createWorld();
  const { id } = await world.createService();
  world.clock.advance(1_000);
  const off = await world.request("PATCH", `/v1/services/${id}`, { body: { is_monitored: false } });
  expect(off.status).toBe(200);
  expect(off.body).toMatchObject({ is_monitored: false, updated_at: "2026-11-22T10:00:01.000Z" });
  world.clock.advance(1_000);
  const again = await world.request("PATCH", `/v1/services/${id}`, { body: { is_monitored: false } });
  expect(again.body).toMatchObject({ is_monitored: false, updated_at: "2026-11-22T10:00:01.000Z" });
  const on = await world.request("PATCH", `/v1/services/${id}`, { body: { is_monitored: true } });
  expect(on.body).toMatchObject({ is_monitored: true, updated_at: "2026-11-22T10:00:02.000Z" });
  expect((await world.request("GET", `/v1/services/${id}`)).body.is_monitored).toBe(true);
});

test("incident_auto_resolve_seconds: null by default, set on create or PATCH (60..2592000 or null), audited", async () => {
  world = await createWorld();
  const plain = await world.request("POST", "/v1/services", { body: { service_name: "plain" } });
  expect(plain.body.incident_auto_resolve_seconds).toBeNull();
  const made = await world.request("POST", "/v1/services", {
    body: { service_name: "alerts", incident_auto_resolve_seconds: 3600 },
  });
  expect(made.status).toBe(201);
  expect(made.body.incident_auto_resolve_seconds).toBe(3600);
  for (const bad of [59, 2_592_001, 90.5, "3600"]) {
    const res = await world.request("PATCH", `/v1/services/${made.body.id}`, {
      body: { incident_auto_resolve_seconds: bad },
    });
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe("invalid_request");
    expect(res.body.error.details.map((d: { field: string }) => d.field)).toEqual(["incident_auto_resolve_seconds"]);
  }
  const refused = await world.request("POST", "/v1/services", {
    body: { service_name: "short", incident_auto_resolve_seconds: 10 },
  });
  expect(refused.status).toBe(400);
  const min = await world.request("PATCH", `/v1/services/${made.body.id}`, {
    body: { incident_auto_resolve_seconds: 60 },
  });
  expect(min.body.incident_auto_resolve_seconds).toBe(60);
  const never = await world.request("PATCH", `/v1/services/${made.body.id}`, {
    body: { incident_auto_resolve_seconds: null },
  });
  expect(never.status).toBe(200);
  expect(never.body.incident_auto_resolve_seconds).toBeNull();
  const audit = await world.request("GET", "/v1/audit_events?action=service.update");
  expect(audit.body.data.map((e: { changes: unknown }) => e.changes)).toEqual([
    { incident_auto_resolve_seconds: { from: 60, to: null } },
    { incident_auto_resolve_seconds: { from: 3600, to: 60 } },
  ]);
});

test("204 DELETE by an owner, with no body; the service is gone", async () => {
  world = await createWorld();
  const { id } = await world.createService();
  const reply = await world.request("DELETE", `/v1/services/${id}`);
  expect(reply.status).toBe(204);
  expect(reply.text).toBe("");
  expect(reply.headers.get("x-request-id")).toMatch(/^req_[0-9a-f]{32}$/);
  expect((await world.request("GET", `/v1/services/${id}`)).status).toBe(404);
  expect((await world.request("GET", "/v1/services")).body.data).toEqual([]);
});

test("204 DELETE by an owner token minted later (not only the bootstrap one)", async () => {
  world = await createWorld();
  const { id } = await world.createService();
  const owner = await world.mint({ name: "o", scope: "read_write", role: "owner" });
  expect((await world.request("DELETE", `/v1/services/${id}`, { token: owner.token })).status).toBe(204);
});

test("201 rotation: exact response shape, new secret, previous valid until rotated_at + default 86400 s", async () => {
  world = await createWorld();
  const { id, secret } = await world.createService();
  world.clock.advance(60_000);
  const reply = await world.request("POST", `/v1/services/${id}/secret_rotations`);
  expect(reply.status).toBe(201);
  expect(Object.keys(reply.body).sort()).toEqual(
    ["previous_secret_expires_at", "rotated_at", "service_id", "signing_secret", "signing_secret_prefix"].sort(),
  );
  expect(reply.body.service_id).toBe(id);
  expect(reply.body.signing_secret).toMatch(/^whsec_[0-9A-Za-z]{43}$/);
  expect(reply.body.signing_secret).not.toBe(secret);
  expect(reply.body.signing_secret_prefix).toBe(reply.body.signing_secret.slice(0, 10));
  expect(reply.body.rotated_at).toBe("2026-11-22T10:01:00.000Z");
  expect(reply.body.previous_secret_expires_at).toBe("2026-11-23T10:01:00.000Z");
  const got = await world.request("GET", `/v1/services/${id}`);
  expect(got.body).toMatchObject({
    signing_secret_prefix: reply.body.signing_secret_prefix,
    secret_rotated_at: "2026-11-22T10:01:00.000Z",
    previous_secret_expires_at: "2026-11-23T10:01:00.000Z",
  });
  expect(got.text).not.toContain(reply.body.signing_secret);
});

test("previous_secret_expires_at = rotated_at + INTAKE_ROTATION_GRACE_SECONDS, set anew by each rotation", async () => {
  world = await createWorld({ env: { INTAKE_ROTATION_GRACE_SECONDS: "3600" } });
  const { id } = await world.createService();
  const first = await world.request("POST", `/v1/services/${id}/secret_rotations`);
  expect(Date.parse(first.body.previous_secret_expires_at) - Date.parse(first.body.rotated_at)).toBe(3_600_000);
  world.clock.advance(600_000);
  const second = await world.request("POST", `/v1/services/${id}/secret_rotations`);
  expect(second.body.rotated_at).toBe("2026-11-22T10:10:00.000Z");
  expect(second.body.previous_secret_expires_at).toBe("2026-11-22T11:10:00.000Z");
  expect(second.body.signing_secret).not.toBe(first.body.signing_secret);
});

test("grace 0: the previous secret expires at the rotation itself", async () => {
  world = await createWorld({ env: { INTAKE_ROTATION_GRACE_SECONDS: "0" } });
  const { id } = await world.createService();
  const reply = await world.request("POST", `/v1/services/${id}/secret_rotations`);
  expect(reply.body.previous_secret_expires_at).toBe(reply.body.rotated_at);
});

test("rotation leaves is_monitored, service_name and created_at alone", async () => {
  world = await createWorld();
  const { id } = await world.createService("billing");
  await world.request("PATCH", `/v1/services/${id}`, { body: { is_monitored: false } });
  world.clock.advance(1_000);
  await world.request("POST", `/v1/services/${id}/secret_rotations`);
  const got = await world.request("GET", `/v1/services/${id}`);
  expect(got.body).toMatchObject({
    service_name: "billing",
    is_monitored: false,
    created_at: "2026-11-22T10:00:00.000Z",
  });
});

test("the signing secret is stored sealed: neither it nor its random part is in the database row", async () => {
  world = await createWorld();
  const { id, secret } = await world.createService();
  const record = await world.app.store.services.get(world.tenantId, id.slice(4));
  expect(record).not.toBeNull();
  expect(JSON.stringify(record)).not.toContain(secret.slice(6));
});

test("a second rotation retires the oldest secret: the store holds exactly the two newest, sealed to the service", async () => {
  const key = randomBytes(32);
  world = await createWorld({ env: { INTAKE_SECRETS_KEY: key.toString("base64") } });
  const sealer = createSealer(new Uint8Array(key));
  const { id, secret: original } = await world.createService();
  const first = (await world.request("POST", `/v1/services/${id}/secret_rotations`)).body.signing_secret;
  world.clock.advance(1_000);
  const second = (await world.request("POST", `/v1/services/${id}/secret_rotations`)).body.signing_secret;
  const raw = id.slice(4);
  const record = await world.app.store.services.get(world.tenantId, raw);
  if (!record?.previousSecretCiphertext) throw new Error("expected a previous secret");
  expect(sealer.open(record.secretCiphertext, raw)).toBe(second);
  expect(sealer.open(record.previousSecretCiphertext, raw)).toBe(first);
  const stored = JSON.stringify(record);
  for (const secret of [original, first, second]) expect(stored).not.toContain(secret.slice(6));
});

test("previous_secret_expires_at stays on the record after the grace window has passed", async () => {
  world = await createWorld({ env: { INTAKE_ROTATION_GRACE_SECONDS: "60" } });
  const { id } = await world.createService();
  const rotation = await world.request("POST", `/v1/services/${id}/secret_rotations`);
  world.clock.advance(3_600_000);
  const got = await world.request("GET", `/v1/services/${id}`);
  expect(got.body.previous_secret_expires_at).toBe(rotation.body.previous_secret_expires_at);
  expect(got.body.secret_rotated_at).toBe(rotation.body.rotated_at);
});
