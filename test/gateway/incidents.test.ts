/**
 * Reading and handling incidents through the REST surface (SPEC §17, docs/incidents.md):
 * the list and its filters and cursors, one incident, its timeline, and acknowledge/resolve by
 * hand with their audit records. Incidents are made by signed alert events
 * (test/support/incidents.ts). Runs on SQLite + memory cache and on PostgreSQL + Redis.
 */
import { afterEach, describe, expect, test } from "bun:test";
import { createWorld, type World } from "../support/harness.ts";
import { sendAlert, trigger } from "../support/incidents.ts";
import { sign } from "../support/signing.ts";

let world: World;
afterEach(async () => {
  await world?.close();
});

const INCIDENT_ID = /^inc_[0-9a-f]{32}$/;
const TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

async function get(path: string, token?: string) {
  return world.request("GET", path, token === undefined ? {} : { token });
}

async function post(path: string, token?: string) {
  return world.request("POST", path, token === undefined ? {} : { token });
}

/** Every incident id of a listing, following every cursor at `limit`. */
async function allIds(query: string, limit: number): Promise<string[]> {
  const ids: string[] = [];
  let cursor: string | null = null;
  do {
    const sep = query ? "&" : "";
    const res = await get(
      `/v1/incidents?${query}${sep}limit=${limit}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`,
    );
    expect(res.status).toBe(200);
    expect(res.body.data.length).toBeLessThanOrEqual(limit);
    ids.push(...res.body.data.map((i: { id: string }) => i.id));
    cursor = res.body.next_cursor;
  } while (cursor);
  return ids;
}

describe("GET /v1/incidents/{id}", () => {
  test("200 the §17 incident: a trigger opens it triggered, with title, source, severity and alert_count 1", async () => {
    world = await createWorld();
    const sender = await world.createService("db");
    const { incidentId, eventId } = await trigger(world, sender, {
      dedup_key: "disk/db-1",
      summary: "Disk 95% on db-1",
      source: "db-1",
      severity: "error",
    });
    const res = await get(`/v1/incidents/${incidentId}`);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("application/json; charset=utf-8");
    expect(res.body).toEqual({
      id: incidentId,
      service_id: sender.id,
      dedup_key: "disk/db-1",
      status: "triggered",
      severity: "error",
      title: "Disk 95% on db-1",
      source: "db-1",
      alert_count: 1,
      created_at: expect.stringMatching(TIME),
      last_event_at: expect.stringMatching(TIME),
      acknowledged_at: null,
      resolved_at: null,
      acknowledged_by: null,
      resolved_by: null,
    });
    expect(incidentId).toMatch(INCIDENT_ID);
    expect(eventId).toMatch(/^evt_/);
  });

  test("404 not_found for an unknown, a malformed and another tenant's incident id", async () => {
    world = await createWorld();
    const other = await world.otherTenant();
    const theirs = await world.createService("theirs", other.token);
    const { incidentId } = await trigger(world, theirs, {}, other.tenantId);
    for (const id of ["inc_00000000000000000000000000000000", "inc_nothex", "svc_00000000000000000000000000000000"]) {
      const res = await get(`/v1/incidents/${id}`);
      expect(res.status).toBe(404);
      expect(res.body.error.code).toBe("not_found");
    }
    expect((await get(`/v1/incidents/${incidentId}`)).status).toBe(404);
    expect((await get(`/v1/incidents/${incidentId}`, other.token)).status).toBe(200);
  });
});

describe("GET /v1/incidents", () => {
  test("200 newest first in the list shape; only the caller's tenant's incidents", async () => {
    world = await createWorld();
    const sender = await world.createService();
    const first = await trigger(world, sender, { dedup_key: "a" });
    const second = await trigger(world, sender, { dedup_key: "b" });
    const other = await world.otherTenant();
    await trigger(world, await world.createService("x", other.token), { dedup_key: "a" }, other.tenantId);
    const res = await get("/v1/incidents");
    expect(res.status).toBe(200);
    expect(res.body.next_cursor).toBeNull();
    expect(res.body.data.map((i: { id: string }) => i.id)).toEqual([second.incidentId, first.incidentId]);
    expect(res.body.data[0].dedup_key).toBe("b");
  });

  test("filters by status (open, triggered, acknowledged, resolved), severity and service_id, combined", async () => {
    world = await createWorld();
    const a = await world.createService("a");
    const b = await world.createService("b");
    const triggered = (await trigger(world, a, { dedup_key: "t", severity: "critical" })).incidentId;
    const acknowledged = (await trigger(world, a, { dedup_key: "k", severity: "info" })).incidentId;
    const resolved = (await trigger(world, b, { dedup_key: "r", severity: "critical" })).incidentId;
    expect((await post(`/v1/incidents/${acknowledged}/acknowledge`)).status).toBe(200);
    expect((await post(`/v1/incidents/${resolved}/resolve`)).status).toBe(200);

    expect(await allIds("status=open", 20)).toEqual([acknowledged, triggered]);
    expect(await allIds("status=triggered", 20)).toEqual([triggered]);
    expect(await allIds("status=acknowledged", 20)).toEqual([acknowledged]);
    expect(await allIds("status=resolved", 20)).toEqual([resolved]);
    expect(await allIds("severity=critical", 20)).toEqual([resolved, triggered]);
    expect(await allIds(`service_id=${b.id}`, 20)).toEqual([resolved]);
    expect(await allIds(`service_id=${a.id}&status=open&severity=critical`, 20)).toEqual([triggered]);
    expect(await allIds(`service_id=${b.id}&status=open`, 20)).toEqual([]);
  });

  test("cursor paging returns every incident once, newest first, whatever the page size", async () => {
    world = await createWorld();
    const sender = await world.createService();
    const made: string[] = [];
    for (let i = 0; i < 7; i++) made.push((await trigger(world, sender, { dedup_key: `k${i}` })).incidentId);
    const newestFirst = [...made].reverse();
    for (const limit of [1, 2, 3, 7, 100]) expect(await allIds("", limit)).toEqual(newestFirst);
    const page = await get("/v1/incidents?limit=3&status=open");
    expect(page.body.data).toHaveLength(3);
    expect(page.body.next_cursor).toEqual(expect.any(String));
  });

  test("400 invalid_request for a bad status, severity, limit or cursor; a cursor of another list is refused", async () => {
    world = await createWorld();
    const sender = await world.createService();
    const { incidentId } = await trigger(world, sender);
    await trigger(world, sender);
    const timeline = await get(`/v1/incidents/${incidentId}/events?limit=1`);
    const services = await get("/v1/services?limit=1");
    await world.createService();
    const serviceCursor = (await get("/v1/services?limit=1")).body.next_cursor as string;
    expect(services.status).toBe(200);
    const bad = [
      "status=closed",
      "status=",
      "severity=fatal",
      "limit=0",
      "limit=101",
      "limit=two",
      "cursor=",
      "cursor=garbage!",
      `cursor=${serviceCursor}`,
    ];
    if (timeline.body.next_cursor) bad.push(`cursor=${timeline.body.next_cursor}`);
    for (const query of bad) {
      const res = await get(`/v1/incidents?${query}`);
      expect(res.status, query).toBe(400);
      expect(res.body.error.code, query).toBe("invalid_request");
      expect(res.body.error.details?.length, query).toBeGreaterThan(0);
    }
  });

  test("404 not_found for a service_id that is unknown, malformed or another tenant's (as the feed's filter)", async () => {
    world = await createWorld();
    const other = await world.otherTenant();
    const theirs = await world.createService("theirs", other.token);
    for (const id of [theirs.id, "svc_00000000000000000000000000000000", "svc_x"]) {
      const res = await get(`/v1/incidents?service_id=${id}`);
      expect(res.status, id).toBe(404);
      expect(res.body.error.code).toBe("not_found");
    }
  });
});

describe("GET /v1/incidents/{id}/events", () => {
  test("200 the alert events that touched it, oldest first, paged by cursor; plain events and other keys never", async () => {
    world = await createWorld();
    const sender = await world.createService();
    const first = await trigger(world, sender, { dedup_key: "cpu" });
    await trigger(world, sender, { dedup_key: "other-key" });
    const plain = '{"hello":"world"}';
    const ingested = await world.request("POST", `/v1/ingest/${sender.id}`, {
      token: null,
      body: plain,
      headers: { "x-service-signature": sign(sender.secret, plain, world.clock.now()) },
    });
    expect(ingested.status).toBe(202);
    const second = await trigger(world, sender, { dedup_key: "cpu", severity: "critical" });
    const ack = await sendAlert(world, sender, { event_action: "acknowledge", dedup_key: "cpu" });
    expect(second.incidentId).toBe(first.incidentId);
    expect(ack.incidentId).toBe(first.incidentId);
    const expected = [first.eventId, second.eventId, ack.eventId];

    const whole = await get(`/v1/incidents/${first.incidentId}/events`);
    expect(whole.status).toBe(200);
    expect(whole.body.next_cursor).toBeNull();
    expect(whole.body.data.map((e: { id: string }) => e.id)).toEqual(expected);
    expect(whole.body.data[0]).toMatchObject({
      service_id: sender.id,
      payload: { event_action: "trigger", dedup_key: "cpu" },
    });

    const paged: string[] = [];
    let cursor: string | null = null;
    do {
      const res = await get(
        `/v1/incidents/${first.incidentId}/events?limit=1${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`,
      );
      expect(res.status).toBe(200);
      paged.push(...res.body.data.map((e: { id: string }) => e.id));
      cursor = res.body.next_cursor;
    } while (cursor);
    expect(paged).toEqual(expected);

    const incident = await get(`/v1/incidents/${first.incidentId}`);
    expect(incident.body).toMatchObject({ alert_count: 3, severity: "critical", status: "acknowledged" });
    expect(incident.body.acknowledged_by).toEqual({ type: "event", id: ack.eventId });
  });

  test("400 for another incident's cursor; 404 for an unknown or another tenant's incident", async () => {
    world = await createWorld();
    const sender = await world.createService();
    const a = await trigger(world, sender, { dedup_key: "a" });
    await trigger(world, sender, { dedup_key: "a" });
    const b = await trigger(world, sender, { dedup_key: "b" });
    const cursor = (await get(`/v1/incidents/${a.incidentId}/events?limit=1`)).body.next_cursor as string;
    expect(cursor).toEqual(expect.any(String));
    const res = await get(`/v1/incidents/${b.incidentId}/events?cursor=${encodeURIComponent(cursor)}`);
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe("invalid_request");
    expect((await get("/v1/incidents/inc_00000000000000000000000000000000/events")).status).toBe(404);
    const other = await world.otherTenant();
    const theirs = await trigger(world, await world.createService("t", other.token), {}, other.tenantId);
    expect((await get(`/v1/incidents/${theirs.incidentId}/events`)).status).toBe(404);
  });
});

describe("POST /v1/incidents/{id}/acknowledge and /resolve", () => {
  /** The audit events of the world's tenant for one incident, newest first. */
  async function auditOf(incidentId: string) {
    const res = await get(`/v1/audit_events?target_id=${incidentId}`);
    expect(res.status).toBe(200);
    return res.body.data as Array<Record<string, unknown>>;
  }

  test("200 acknowledged by the token, audited once as incident.acknowledge; a repeat is 200 and changes nothing", async () => {
    world = await createWorld();
    const sender = await world.createService();
    const { incidentId } = await trigger(world, sender);
    const member = await world.mint({ name: "on-call", scope: "read_write", role: "member" });
    world.clock.advance(60_000);
    const res = await post(`/v1/incidents/${incidentId}/acknowledge`, member.token);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      id: incidentId,
      status: "acknowledged",
      acknowledged_at: new Date(world.clock.now()).toISOString(),
      acknowledged_by: { type: "api_token", id: member.id },
      resolved_at: null,
      resolved_by: null,
      alert_count: 1,
    });
    const audit = await auditOf(incidentId);
    expect(audit).toHaveLength(1);
    expect(audit[0]).toMatchObject({
      action: "incident.acknowledge",
      actor: { type: "api_token", id: member.id },
      target: { type: "incident", id: incidentId },
      request_id: res.headers.get("x-request-id"),
    });

    world.clock.advance(60_000);
    const again = await post(`/v1/incidents/${incidentId}/acknowledge`);
    expect(again.status).toBe(200);
    expect(again.body).toEqual(res.body);
    expect(await auditOf(incidentId)).toHaveLength(1);
    expect((await get(`/v1/incidents/${incidentId}`)).body).toEqual(res.body);
  });

  test("200 resolved from triggered or acknowledged, audited as incident.resolve; a repeat is 200 and changes nothing", async () => {
    world = await createWorld();
    const sender = await world.createService();
    const fromTriggered = (await trigger(world, sender, { dedup_key: "a" })).incidentId;
    const fromAcknowledged = (await trigger(world, sender, { dedup_key: "b" })).incidentId;
    expect((await post(`/v1/incidents/${fromAcknowledged}/acknowledge`)).status).toBe(200);
    for (const id of [fromTriggered, fromAcknowledged]) {
      world.clock.advance(1_000);
      const res = await post(`/v1/incidents/${id}/resolve`);
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({
        status: "resolved",
        resolved_at: new Date(world.clock.now()).toISOString(),
        resolved_by: { type: "api_token", id: world.ownerTokenId },
      });
      world.clock.advance(1_000);
      const again = await post(`/v1/incidents/${id}/resolve`);
      expect(again.status).toBe(200);
      expect(again.body).toEqual(res.body);
      const actions = (await auditOf(id)).map((e) => e.action);
      expect(actions.filter((a) => a === "incident.resolve")).toHaveLength(1);
    }
  });

  test("409 incident_resolved when acknowledging a resolved incident; nothing written", async () => {
    world = await createWorld();
    const sender = await world.createService();
    const { incidentId } = await trigger(world, sender);
    const resolved = await post(`/v1/incidents/${incidentId}/resolve`);
    expect(resolved.status).toBe(200);
    const res = await post(`/v1/incidents/${incidentId}/acknowledge`);
    expect(res.status).toBe(409);
    expect(res.body.error.code).toBe("incident_resolved");
    expect(res.body.error.request_id).toBe(res.headers.get("x-request-id"));
    expect((await get(`/v1/incidents/${incidentId}`)).body).toEqual(resolved.body);
    expect((await auditOf(incidentId)).map((e) => e.action)).toEqual(["incident.resolve"]);
  });

  test("after a resolve by hand, the next trigger of the key opens a new incident", async () => {
    world = await createWorld();
    const sender = await world.createService();
    const first = await trigger(world, sender, { dedup_key: "k" });
    expect((await post(`/v1/incidents/${first.incidentId}/resolve`)).status).toBe(200);
    const next = await trigger(world, sender, { dedup_key: "k" });
    expect(next.incidentId).not.toBe(first.incidentId);
    expect((await get(`/v1/incidents/${next.incidentId}`)).body.status).toBe("triggered");
  });

  test("404 not_found for an unknown, malformed or another tenant's incident; 403 for a read_only token", async () => {
    world = await createWorld();
    const other = await world.otherTenant();
    const theirs = await trigger(world, await world.createService("t", other.token), {}, other.tenantId);
    for (const action of ["acknowledge", "resolve"]) {
      for (const id of [theirs.incidentId, "inc_00000000000000000000000000000000", "inc_1"]) {
        const res = await post(`/v1/incidents/${id}/${action}`);
        expect(res.status, `${action} ${id}`).toBe(404);
        expect(res.body.error.code).toBe("not_found");
      }
    }
    expect((await get(`/v1/incidents/${theirs.incidentId}`, other.token)).body.status).toBe("triggered");
    const mine = await trigger(world, await world.createService("m"));
    const reader = await world.mint({ name: "reader", scope: "read_only", role: "owner" });
    const res = await post(`/v1/incidents/${mine.incidentId}/resolve`, reader.token);
    expect(res.status).toBe(403);
    expect(res.body.error.code).toBe("token_scope_insufficient");
  });
});
