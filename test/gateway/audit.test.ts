/**
 * The audit log through the REST surface (docs/api.md, "Audit log"): every successful change
 * writes exactly one event naming its actor, target, request id and changes; nothing else
 * writes one; members of role_based tenants cannot read it; no event ever holds a credential,
 * secret, digest or payload. Runs on SQLite + memory cache and on PostgreSQL + Redis.
 */
import { afterEach, describe, expect, test } from "bun:test";
import { AUDIT_ACTIONS } from "../../src/domain/audit.ts";
import { createIdGenerator } from "../../src/domain/ids.ts";
import { signPayload } from "../../src/domain/signing.ts";
import { createWorld, type Reply, type World } from "../support/harness.ts";

let world: World;
afterEach(async () => {
  await world?.close();
});

const REQUEST_ID = /^req_[0-9a-f]{32}$/;

// biome-ignore lint/suspicious/noExplicitAny: tests read reply fields freely
type Event = any;

/** Every audit event of the world's tenant, newest first, following every cursor. */
async function allEvents(w: World, token?: string, query = ""): Promise<Event[]> {
  const events: Event[] = [];
  let cursor: string | null = null;
  do {
    const page: Reply = await w.request(
      "GET",
      `/v1/audit_events?limit=100${query}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`,
      token === undefined ? {} : { token },
    );
    expect(page.status).toBe(200);
    events.push(...page.body.data);
    cursor = page.body.next_cursor;
  } while (cursor);
  return events;
}

/** Runs a change and returns its reply with the one audit event it wrote (fails on zero or several). */
async function audited(w: World, change: () => Promise<Reply>): Promise<{ reply: Reply; event: Event }> {
  const before = (await allEvents(w)).length;
  const reply = await change();
  expect(reply.status).toBeLessThan(300);
  const after = await allEvents(w);
  expect(after.length - before).toBe(1);
  return { reply, event: after[0] };
}

describe("GET /v1/audit_events", () => {
  test("each change writes exactly one event with its actor, target, request id and (for updates) changes", async () => {
    world = await createWorld();
    const owner = { type: "api_token", id: world.ownerTokenId };
    const at = new Date(world.clock.now()).toISOString();

    // The bootstrap (the CLI's path): the tenant and its first token, by the operator, no request.
    const boot = await allEvents(world);
    expect(boot).toEqual([
      {
        id: expect.stringMatching(/^aud_[0-9a-f]{32}$/),
        occurred_at: at,
        action: "api_token.create",
        actor: { type: "operator" },
        target: { type: "api_token", id: world.ownerTokenId },
        request_id: null,
      },
      {
        id: expect.stringMatching(/^aud_[0-9a-f]{32}$/),
        occurred_at: at,
        action: "tenant.create",
        actor: { type: "operator" },
        target: { type: "tenant", id: world.tenantId },
        request_id: null,
      },
    ]);

    const expectEvent = (reply: Reply, event: Event, expected: Record<string, unknown>) => {
      expect(reply.headers.get("x-request-id")).toMatch(REQUEST_ID);
      expect(event).toEqual({
        id: expect.stringMatching(/^aud_[0-9a-f]{32}$/),
        occurred_at: new Date(world.clock.now()).toISOString(),
        request_id: reply.headers.get("x-request-id"),
        ...expected,
      });
    };

    world.clock.advance(1000);
    const minted = await audited(world, () =>
      world.request("POST", "/v1/api_tokens", { body: { name: "admin", scope: "read_write", role: "admin" } }),
    );
    const admin = { id: minted.reply.body.id as string, token: minted.reply.body.token as string };
    expectEvent(minted.reply, minted.event, {
      action: "api_token.create",
      actor: owner,
      target: { type: "api_token", id: admin.id },
    });

    // The actor is whichever token made the call.
    const byAdmin = { type: "api_token", id: admin.id };
    const created = await audited(world, () =>
      world.request("POST", "/v1/services", { token: admin.token, body: { service_name: "billing" } }),
    );
    const svc = created.reply.body.id as string;
    expectEvent(created.reply, created.event, {
      action: "service.create",
      actor: byAdmin,
      target: { type: "service", id: svc },
    });

    world.clock.advance(1000);
    const paused = await audited(world, () =>
      world.request("PATCH", `/v1/services/${svc}`, { token: admin.token, body: { is_monitored: false } }),
    );
    expectEvent(paused.reply, paused.event, {
      action: "service.update",
      actor: byAdmin,
      target: { type: "service", id: svc },
      changes: { is_monitored: { from: true, to: false } },
    });

    // A service's own rate limit is an updatable field too: recorded in its REST form.
    const limited = await audited(world, () =>
      world.request("PATCH", `/v1/services/${svc}`, { body: { rate_limit: { limit: 50, window_seconds: 10 } } }),
    );
    expectEvent(limited.reply, limited.event, {
      action: "service.update",
      actor: owner,
      target: { type: "service", id: svc },
      changes: { rate_limit: { from: null, to: { limit: 50, window_seconds: 10 } } },
    });

    const rotated = await audited(world, () => world.request("POST", `/v1/services/${svc}/secret_rotations`));
    expectEvent(rotated.reply, rotated.event, {
      action: "service.secret_rotate",
      actor: owner,
      target: { type: "service", id: svc },
    });

    const renamed = await audited(world, () => world.request("PATCH", "/v1/tenant", { body: { name: "  Globex " } }));
    expectEvent(renamed.reply, renamed.event, {
      action: "tenant.update",
      actor: owner,
      target: { type: "tenant", id: world.tenantId },
      changes: { name: { from: "Acme", to: "Globex" } },
    });

    const deleted = await audited(world, () => world.request("DELETE", `/v1/services/${svc}`));
    expectEvent(deleted.reply, deleted.event, {
      action: "service.delete",
      actor: owner,
      target: { type: "service", id: svc },
    });

    const revoked = await audited(world, () => world.request("DELETE", `/v1/api_tokens/${admin.id}`));
    expectEvent(revoked.reply, revoked.event, {
      action: "api_token.revoke",
      actor: owner,
      target: { type: "api_token", id: admin.id },
    });

    // An operator's recovery token (CLI bootstrap --tenant-id): by the operator, no request.
    const recovery = await world.app.domain.onboarding.mintRecoveryToken(world.tenantId);
    const [latest] = await allEvents(world);
    expect(latest).toMatchObject({
      action: "api_token.create",
      actor: { type: "operator" },
      target: { type: "api_token", id: `tok_${recovery.record.id}` },
      request_id: null,
    });
    expect(latest).not.toHaveProperty("changes");
  });

  test("a tenant made through a setup link (POST /v1/setup) is audited with actor setup_link and that request's id", async () => {
    world = await createWorld();
    const { code } = await world.app.domain.onboarding.issueSetupCode({ expiresInSeconds: 600 });
    const setup = await world.request("POST", "/v1/setup", {
      token: null,
      body: { setup_code: code, tenant_name: "Initech" },
    });
    expect(setup.status).toBe(201);
    const requestId = setup.headers.get("x-request-id");
    expect(requestId).toMatch(REQUEST_ID);
    const events = await allEvents(world, setup.body.token);
    expect(events.map((e) => [e.action, e.actor, e.request_id, e.target.id])).toEqual([
      ["api_token.create", { type: "setup_link" }, requestId, setup.body.token_id],
      ["tenant.create", { type: "setup_link" }, requestId, setup.body.tenant_id],
    ]);
    // A used code is refused (401) and writes nothing.
    const again = await world.request("POST", "/v1/setup", {
      token: null,
      body: { setup_code: code, tenant_name: "Again" },
    });
    expect(again.status).toBe(401);
    expect(await allEvents(world, setup.body.token)).toEqual(events);
  });

  test("nothing is audited for a change that changes nothing, a failed attempt, a read or an ingest", async () => {
    world = await createWorld();
    const svc = await world.createService("billing");
    const token = await world.mint({ name: "doomed" });
    await world.request("DELETE", `/v1/api_tokens/${token.id}`);
    const reader = await world.mint({ name: "reader", scope: "read_only", role: "admin" });
    const before = await allEvents(world);

    const calls: Array<[string, string, unknown?, string?]> = [
      // No-ops answered 200: PATCH {}, the same values, a repeated revocation.
      ["PATCH", `/v1/services/${svc.id}`, {}],
      ["PATCH", `/v1/services/${svc.id}`, { is_monitored: true }],
      ["PATCH", "/v1/tenant", {}],
      ["PATCH", "/v1/tenant", { name: " Acme " }],
      ["DELETE", `/v1/api_tokens/${token.id}`],
      // Failures: 409, 403, 400, 404.
      ["POST", "/v1/services", { service_name: "billing" }],
      ["DELETE", `/v1/api_tokens/${world.ownerTokenId}`],
      ["POST", "/v1/services", { service_name: "x" }, reader.token],
      ["POST", "/v1/api_tokens", { name: "" }],
      ["PATCH", `/v1/services/${svc.id}`, { service_name: "ledger" }],
      ["DELETE", "/v1/services/svc_00000000000000000000000000000000"],
      // Reads.
      ["GET", `/v1/services/${svc.id}`],
      ["GET", "/v1/tenant"],
    ];
    for (const [method, path, body, as] of calls) {
      await world.request(method, path, { ...(body === undefined ? {} : { body }), ...(as ? { token: as } : {}) });
    }
    const payload = '{"invoice":1}';
    const t = Math.floor(world.clock.now() / 1000);
    const ingested = await world.request("POST", `/v1/ingest/${svc.id}`, {
      token: null,
      body: payload,
      headers: { "x-service-signature": signPayload(payload, svc.secret, t) },
    });
    expect(ingested.status).toBe(202);

    expect(await allEvents(world)).toEqual(before);
  });

  test("403 admin_required for a member token in role_based mode; owners and admins read it, read_only too", async () => {
    world = await createWorld();
    const member = await world.mint({ name: "member", scope: "read_write", role: "member" });
    const denied = await world.request("GET", "/v1/audit_events", { token: member.token });
    expect(denied.status).toBe(403);
    expect(denied.body.error).toMatchObject({ code: "admin_required", request_id: denied.headers.get("x-request-id") });
    // Check order: 401 before 403, and 403 before a bad query (400).
    expect((await world.request("GET", "/v1/audit_events", { token: null })).status).toBe(401);
    const badQuery = await world.request("GET", "/v1/audit_events?action=nope", { token: member.token });
    expect(badQuery.body.error.code).toBe("admin_required");

    for (const role of ["admin", "owner"]) {
      const reader = await world.mint({ name: role, scope: "read_only", role });
      expect((await world.request("GET", "/v1/audit_events", { token: reader.token })).status).toBe(200);
    }
  });

  test("200 for a member token in flat mode: any token reads the audit log", async () => {
    world = await createWorld({ permissionMode: "flat" });
    const member = await world.mint({ name: "member", scope: "read_only", role: "member" });
    const events = await allEvents(world, member.token);
    expect(events.map((e) => e.action)).toEqual(["api_token.create", "api_token.create", "tenant.create"]);
  });

  test("filters by action and target_id, pages newest first, and never shows another tenant's events", async () => {
    world = await createWorld();
    const a = await world.createService("a");
    const b = await world.createService("b");
    await world.request("PATCH", `/v1/services/${a.id}`, { body: { is_monitored: false } });
    await world.request("POST", `/v1/services/${a.id}/secret_rotations`);
    await world.request("PATCH", "/v1/tenant", { body: { name: "Renamed" } });
    const other = await world.otherTenant();
    await world.createService("theirs", other.token);

    const all = await allEvents(world);
    expect(all.map((e) => e.action)).toEqual([
      "tenant.update",
      "service.secret_rotate",
      "service.update",
      "service.create",
      "service.create",
      "api_token.create",
      "tenant.create",
    ]);
    const ids = all.map((e) => e.id);
    expect([...ids].sort().reverse()).toEqual(ids);

    const created = await allEvents(world, undefined, "&action=service.create");
    expect(created.map((e) => e.target.id)).toEqual([b.id, a.id]);
    const aboutA = await allEvents(world, undefined, `&target_id=${a.id}`);
    expect(aboutA.map((e) => e.action)).toEqual(["service.secret_rotate", "service.update", "service.create"]);
    expect(await allEvents(world, undefined, `&target_id=${a.id}&action=service.update`)).toHaveLength(1);
    const aboutTenant = await allEvents(world, undefined, `&target_id=${world.tenantId}`);
    expect(aboutTenant.map((e) => e.action)).toEqual(["tenant.update", "tenant.create"]);
    expect(await allEvents(world, undefined, `&target_id=${world.ownerTokenId}`)).toHaveLength(1);
    expect(await allEvents(world, undefined, `&target_id=${other.tenantId}`)).toEqual([]);

    // Keyset pages of 3: the same events, in the same order, no overlap.
    const first = await world.request("GET", "/v1/audit_events?limit=3");
    expect(first.body.data).toEqual(all.slice(0, 3));
    const second = await world.request("GET", `/v1/audit_events?limit=3&cursor=${first.body.next_cursor}`);
    expect(second.body.data).toEqual(all.slice(3, 6));
    const third = await world.request("GET", `/v1/audit_events?limit=3&cursor=${second.body.next_cursor}`);
    expect(third.body).toEqual({ data: all.slice(6), next_cursor: null });
    // The cursor belongs to this list and tenant: another list refuses it.
    const foreign = await world.request("GET", `/v1/services?cursor=${first.body.next_cursor}`);
    expect([foreign.status, foreign.body.error.details[0].field]).toEqual([400, "cursor"]);
  });

  test("400 invalid_request naming the parameter for an unknown action, a foreign-looking target_id, a bad limit or cursor", async () => {
    world = await createWorld();
    for (const [query, field] of [
      ["action=token.create", "action"],
      ["target_id=evt_0193a1b2c3d4e5f60718293a4b5c6d7e", "target_id"],
      ["target_id=", "target_id"],
      ["limit=0", "limit"],
      ["cursor=!!", "cursor"],
    ] as const) {
      const reply = await world.request("GET", `/v1/audit_events?${query}`);
      expect(reply.status, query).toBe(400);
      expect(reply.body.error.code).toBe("invalid_request");
      expect(reply.body.error.details.map((d: { field: string }) => d.field)).toContain(field);
    }
    for (const action of AUDIT_ACTIONS) {
      expect((await world.request("GET", `/v1/audit_events?action=${action}`)).status).toBe(200);
    }
  });

  test("INTAKE_AUDIT_RETENTION_DAYS: the retention sweep deletes audit events older than the horizon, keeps the rest", async () => {
    world = await createWorld({ env: { INTAKE_AUDIT_RETENTION_DAYS: "2" } });
    world.clock.advance(3 * 86_400_000);
    const svc = await world.createService("recent");
    // The background sweep may have run already; a sweep now leaves the same state.
    await world.app.domain.retention.sweep();
    const kept = await allEvents(world);
    expect(kept.map((e) => [e.action, e.target.id])).toEqual([["service.create", svc.id]]);
  });

  test("no audit event holds a token, signing secret, digest, ciphertext or payload, after every action", async () => {
    world = await createWorld();
    const needles: string[] = [world.ownerToken];
    const minted = await world.mint({ name: "ci", scope: "read_write", role: "admin" });
    needles.push(minted.token);
    const svc = await world.createService("billing");
    needles.push(svc.secret);
    const rotated = await world.request("POST", `/v1/services/${svc.id}/secret_rotations`);
    needles.push(rotated.body.signing_secret);
    await world.request("PATCH", `/v1/services/${svc.id}`, { body: { is_monitored: false } });
    await world.request("PATCH", `/v1/services/${svc.id}`, { body: { is_monitored: true } });
    const payload = `{"card":"${crypto.randomUUID()}"}`;
    const t = Math.floor(world.clock.now() / 1000);
    const ingested = await world.request("POST", `/v1/ingest/${svc.id}`, {
      token: null,
      body: payload,
      headers: { "x-service-signature": signPayload(payload, rotated.body.signing_secret, t) },
    });
    expect(ingested.status).toBe(202);
    needles.push(payload, JSON.parse(payload).card);
    await world.request("PATCH", "/v1/tenant", { body: { name: "Renamed" } });
    const recovery = await world.app.domain.onboarding.mintRecoveryToken(world.tenantId);
    needles.push(recovery.token);

    // The stored forms: every token's digest, the service's sealed secrets.
    const { store } = world.app;
    for (const id of [world.ownerTokenId, minted.id, `tok_${recovery.record.id}`]) {
      const record = await store.tokens.get(world.tenantId, id.slice(4));
      needles.push(record?.digest as string, record?.prefix as string);
    }
    const sealed = await store.services.get(world.tenantId, svc.id.slice(4));
    needles.push(sealed?.secretCiphertext as string, sealed?.previousSecretCiphertext as string);
    // Incidents have no routes yet: their audited changes go through the store as the routes will.
    const eventId = (ingested.body.id as string).slice(4);
    const [alert] = await store.incidents.applyAlerts([
      {
        eventId,
        tenantId: world.tenantId,
        serviceId: svc.id.slice(4),
        receivedAt: world.clock.now(),
        alert: { action: "trigger", dedupKey: "k", summary: "s", source: "src", severity: "info" },
      },
    ]);
    const incidentId = alert?.incidentId as string;
    const newId = createIdGenerator(() => world.clock.now());
    const by = { type: "api_token", id: world.ownerTokenId.slice(4) } as const;
    for (const action of ["incident.acknowledge", "incident.resolve"] as const) {
      const record = {
        id: newId(),
        tenantId: world.tenantId,
        occurredAt: world.clock.now(),
        action,
        actor: by,
        target: { type: "incident", id: incidentId } as const,
        requestId: null,
        changes: null,
      };
      const change = action === "incident.acknowledge" ? store.incidents.acknowledge : store.incidents.resolve;
      expect((await change(world.tenantId, incidentId, by, world.clock.now(), record)).kind).toBe("changed");
    }
    await world.request("DELETE", `/v1/services/${svc.id}`);
    await world.request("DELETE", `/v1/api_tokens/${minted.id}`);

    const served = JSON.stringify(await allEvents(world));
    const stored = JSON.stringify(await store.audit.list(world.tenantId, { limit: 100 }));
    // The session exercised every action, so the scan covered every kind of event.
    expect(new Set(JSON.parse(served).map((e: Event) => e.action))).toEqual(new Set(AUDIT_ACTIONS));
    for (const needle of needles) {
      expect(needle.length).toBeGreaterThan(8);
      const body = needle.replace(/^(service_live_|whsec_)/, "");
      for (const text of [served, stored]) {
        expect(text.includes(needle), needle).toBe(false);
        expect(text.includes(body.slice(0, 12)), needle).toBe(false);
      }
    }
    expect(served).not.toMatch(/service_live_|whsec_/);
  });
});
