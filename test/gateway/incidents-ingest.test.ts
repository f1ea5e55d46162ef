/**
 * SPEC §17 at ingest, through the gateway (docs/incidents.md): alert events open, join,
 * acknowledge and resolve incidents in their own commit; a bad one is a 400 with nothing
 * stored; a duplicate and a paused service change nothing. Incidents are read through the
 * store (their routes come later). Runs on the default stack and INTAKE_TEST_STACK=postgres-redis.
 */
import { afterEach, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createClient, createRouterTransport } from "@connectrpc/connect";
import { IngestService } from "../../gen/intake/v1/ingest_pb.ts";
import { ServiceRegistryService } from "../../gen/intake/v1/services_pb.ts";
import { createAutoResolver } from "../../src/domain/auto-resolve.ts";
import { parseId } from "../../src/domain/ids.ts";
import type { IncidentRecord } from "../../src/domain/incident-types.ts";
import { signPayload } from "../../src/domain/signing.ts";
import { createLogger } from "../../src/logger.ts";
import { createWorld, type World } from "../support/harness.ts";
import { testStack } from "../support/stack.ts";

let world: World;
afterEach(() => world?.close());

const raw = (prefixed: string) => {
  const id = parseId(prefixed.slice(0, 3) as "svc", prefixed);
  if (id === null) throw new Error(`not an id: ${prefixed}`);
  return id;
};

function post(w: World, serviceId: string, secret: string, body: unknown, idempotencyKey?: string) {
  const text = typeof body === "string" ? body : JSON.stringify(body);
  const headers: Record<string, string> = {
    "x-service-signature": signPayload(text, secret, Math.floor(w.clock.now() / 1000)),
  };
  if (idempotencyKey !== undefined) headers["idempotency-key"] = idempotencyKey;
  return w.request("POST", `/v1/ingest/${serviceId}`, { token: null, body: text, headers });
}

const trigger = (key: string | undefined, severity = "error", summary = "disk full on db-1") => ({
  event_action: "trigger",
  ...(key === undefined ? {} : { dedup_key: key }),
  payload: { summary, source: "db-1", severity },
});

async function incidents(w: World): Promise<IncidentRecord[]> {
  return w.app.store.incidents.list(w.tenantId, { limit: 100 });
}

async function incident(w: World, publicId: string): Promise<IncidentRecord> {
  const found = await w.app.store.incidents.get(w.tenantId, publicId.slice(4));
  if (found === null) throw new Error(`no incident ${publicId}`);
  return found;
}

async function events(w: World, serviceId: string) {
  const res = await w.request("GET", `/v1/services/${serviceId}/events?limit=100`);
  expect(res.status).toBe(200);
  return res.body.data as Array<{ id: string; type: string | null; incident_id: string | null }>;
}

describe("alert events at ingest (§17)", () => {
  test("202 with dedup_key and incident_id: a trigger opens a triggered incident and the event points at it", async () => {
    world = await createWorld();
    const svc = await world.createService();
    const res = await post(world, svc.id, svc.secret, { ...trigger("db-1/disk"), type: "alert.disk" });
    expect(res.status).toBe(202);
    expect(Object.keys(res.body).sort()).toEqual(["dedup_key", "id", "incident_id", "received_at"]);
    expect(res.body.dedup_key).toBe("db-1/disk");
    expect(res.body.incident_id).toMatch(/^inc_[0-9a-f]{32}$/);
    const opened = await incident(world, res.body.incident_id);
    expect(opened).toMatchObject({
      serviceId: raw(svc.id),
      dedupKey: "db-1/disk",
      status: "triggered",
      severity: "error",
      title: "disk full on db-1",
      source: "db-1",
      alertCount: 1,
      createdAt: world.clock.now(),
      resolvedAt: null,
    });
    expect(await events(world, svc.id)).toMatchObject([
      { id: res.body.id, type: "alert.disk", incident_id: res.body.incident_id },
    ]);
  });

  test("a trigger without dedup_key takes its event's id as the key", async () => {
    world = await createWorld();
    const svc = await world.createService();
    const res = await post(world, svc.id, svc.secret, trigger(undefined));
    expect(res.status).toBe(202);
    expect(res.body.dedup_key).toBe(res.body.id);
    expect((await incident(world, res.body.incident_id)).dedupKey).toBe(res.body.id);
  });

  test("a repeated trigger joins the open incident: alert_count counts it, severity rises, title stays", async () => {
    world = await createWorld();
    const svc = await world.createService();
    const first = await post(world, svc.id, svc.secret, trigger("k", "warning", "first"));
    world.clock.advance(1000);
    const second = await post(world, svc.id, svc.secret, trigger("k", "critical", "second"));
    world.clock.advance(1000);
    const third = await post(world, svc.id, svc.secret, trigger("k", "info", "third"));
    expect([second.body.incident_id, third.body.incident_id]).toEqual([first.body.incident_id, first.body.incident_id]);
    expect(await incident(world, first.body.incident_id)).toMatchObject({
      status: "triggered",
      severity: "critical",
      title: "first",
      alertCount: 3,
      lastEventAt: world.clock.now(),
    });
    expect(await incidents(world)).toHaveLength(1);
  });

  test("acknowledge makes a triggered incident acknowledged by the event; a later trigger keeps it acknowledged", async () => {
    world = await createWorld();
    const svc = await world.createService();
    const opened = await post(world, svc.id, svc.secret, trigger("k"));
    world.clock.advance(5000);
    const ack = await post(world, svc.id, svc.secret, { event_action: "acknowledge", dedup_key: "k" });
    expect(ack.status).toBe(202);
    expect(ack.body).toMatchObject({ dedup_key: "k", incident_id: opened.body.incident_id });
    await post(world, svc.id, svc.secret, trigger("k"));
    expect(await incident(world, opened.body.incident_id)).toMatchObject({
      status: "acknowledged",
      acknowledgedAt: world.clock.now(),
      acknowledgedBy: { type: "event", id: raw(ack.body.id) },
      alertCount: 3,
    });
  });

  test("acknowledge or resolve with no open incident: 202 incident_id null, the event stored, nothing opened", async () => {
    world = await createWorld();
    const svc = await world.createService();
    const ack = await post(world, svc.id, svc.secret, { event_action: "acknowledge", dedup_key: "none" });
    const resolve = await post(world, svc.id, svc.secret, { event_action: "resolve", dedup_key: "none" });
    for (const res of [ack, resolve]) {
      expect(res.status).toBe(202);
      expect(res.body).toMatchObject({ dedup_key: "none", incident_id: null });
    }
    expect(await incidents(world)).toEqual([]);
    expect((await events(world, svc.id)).map((e) => e.incident_id)).toEqual([null, null]);
  });

  test("resolve closes the open incident; the next trigger with the key opens a new one", async () => {
    world = await createWorld();
    const svc = await world.createService();
    const opened = await post(world, svc.id, svc.secret, trigger("k"));
    world.clock.advance(1000);
    const resolved = await post(world, svc.id, svc.secret, { event_action: "resolve", dedup_key: "k" });
    expect(resolved.body.incident_id).toBe(opened.body.incident_id);
    expect(await incident(world, opened.body.incident_id)).toMatchObject({
      status: "resolved",
      resolvedAt: world.clock.now(),
      resolvedBy: { type: "event", id: raw(resolved.body.id) },
      alertCount: 2,
    });
    const again = await post(world, svc.id, svc.secret, trigger("k"));
    expect(again.status).toBe(202);
    expect(again.body.incident_id).not.toBe(opened.body.incident_id);
    expect(await incident(world, again.body.incident_id)).toMatchObject({ status: "triggered", alertCount: 1 });
    const open = await world.app.store.incidents.list(world.tenantId, { limit: 10, status: "open" });
    expect(open.map((i) => i.id)).toEqual([raw(again.body.incident_id)]);
  });

  test("400 invalid_request with one detail per bad field, and nothing stored", async () => {
    world = await createWorld();
    const svc = await world.createService();
    const res = await post(world, svc.id, svc.secret, {
      event_action: "trigger",
      dedup_key: "",
      payload: { summary: "", severity: "fatal", timestamp: "yesterday" },
    });
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe("invalid_request");
    const fields = (res.body.error.details as Array<{ field: string }>).map((d) => d.field).sort();
    expect(fields).toEqual(["dedup_key", "payload.severity", "payload.source", "payload.summary", "payload.timestamp"]);
    const resolve = await post(world, svc.id, svc.secret, { event_action: "resolve" });
    expect(resolve.status).toBe(400);
    expect(resolve.body.error.details).toEqual([{ field: "dedup_key", message: "is required" }]);
    const unknown = await post(world, svc.id, svc.secret, { event_action: "snooze", dedup_key: "k" });
    expect(unknown.body.error.details.map((d: { field: string }) => d.field)).toEqual(["event_action"]);
    expect(await events(world, svc.id)).toEqual([]);
    expect(await incidents(world)).toEqual([]);
  });

  test("an Idempotency-Key repeat is a 200 duplicate that changes no incident", async () => {
    world = await createWorld();
    const svc = await world.createService();
    const first = await post(world, svc.id, svc.secret, trigger("k"), "alert-1");
    const repeat = await post(world, svc.id, svc.secret, trigger("k"), "alert-1");
    expect(repeat.status).toBe(200);
    expect(repeat.body).toEqual({ id: first.body.id, received_at: first.body.received_at, duplicate: true });
    const resolveOnce = await post(world, svc.id, svc.secret, { event_action: "resolve", dedup_key: "k" }, "r-1");
    expect(resolveOnce.status).toBe(202);
    await post(world, svc.id, svc.secret, trigger("k"), "alert-2");
    // Replaying the resolve must not close the incident the later trigger opened.
    expect((await post(world, svc.id, svc.secret, { event_action: "resolve", dedup_key: "k" }, "r-1")).status).toBe(
      200,
    );
    const all = await incidents(world);
    expect(all.map((i) => [i.status, i.alertCount])).toEqual([
      ["triggered", 1],
      ["resolved", 2],
    ]);
  });

  test("409 ingestion_paused for an alert event of a paused service, and its open incident stays as it was", async () => {
    world = await createWorld();
    const svc = await world.createService();
    const opened = await post(world, svc.id, svc.secret, trigger("k"));
    const before = await incident(world, opened.body.incident_id);
    const patch = await world.request("PATCH", `/v1/services/${svc.id}`, { body: { is_monitored: false } });
    expect(patch.status).toBe(200);
    for (const body of [trigger("k", "critical"), { event_action: "resolve", dedup_key: "k" }]) {
      const res = await post(world, svc.id, svc.secret, body);
      expect(res.status).toBe(409);
      expect(res.body.error.code).toBe("ingestion_paused");
    }
    expect(await incident(world, opened.body.incident_id)).toEqual(before);
  });

  test("a plain event's 202 is unchanged, and its type is kept from the payload", async () => {
    world = await createWorld();
    const svc = await world.createService();
    const res = await post(world, svc.id, svc.secret, { type: "invoice.paid", event: "trigger" });
    expect(res.status).toBe(202);
    expect(Object.keys(res.body).sort()).toEqual(["id", "received_at"]);
    const long = await post(world, svc.id, svc.secret, { type: "x".repeat(256) });
    expect(long.status).toBe(202);
    expect((await events(world, svc.id)).map((e) => [e.type, e.incident_id])).toEqual([
      [null, null],
      ["invoice.paid", null],
    ]);
    expect(await incidents(world)).toEqual([]);
  });

  test("RPC Ingest answers dedup_key and incident_id; ListEvents carries type and incident_id", async () => {
    world = await createWorld();
    const svc = await world.createService();
    const transport = createRouterTransport(({ service }) => service(IngestService, world.app.impls.ingest), {
      router: { interceptors: [world.app.admission.interceptor] },
    });
    const rpc = createClient(IngestService, transport);
    const send = (body: unknown) => {
      const payload = new TextEncoder().encode(JSON.stringify(body));
      const signature = signPayload(payload, svc.secret, Math.floor(world.clock.now() / 1000));
      return rpc.ingest({ serviceId: svc.id, signature, payload });
    };
    const opened = await send({ ...trigger("k"), type: "alert" });
    expect(opened.dedupKey).toBe("k");
    expect(opened.incidentId).toMatch(/^inc_[0-9a-f]{32}$/);
    const nothing = await send({ event_action: "resolve", dedup_key: "other" });
    expect(nothing.dedupKey).toBe("other");
    expect(nothing.incidentId).toBeUndefined();
    const plain = await send({ n: 1 });
    expect(plain.dedupKey).toBeUndefined();
    const listed = await rpc.listEvents(
      { serviceId: svc.id, limit: 10 },
      { headers: { authorization: `Bearer ${world.ownerToken}` } },
    );
    expect(listed.data.map((e) => [e.type, e.incidentId])).toEqual([
      [undefined, undefined],
      [undefined, undefined],
      ["alert", opened.incidentId],
    ]);
  });

  test("GET /metrics counts incident changes and reads open incidents per severity from the store", async () => {
    world = await createWorld();
    const svc = await world.createService();
    await post(world, svc.id, svc.secret, trigger("a", "critical"));
    await post(world, svc.id, svc.secret, trigger("a", "critical"));
    await post(world, svc.id, svc.secret, trigger("b", "info"));
    await post(world, svc.id, svc.secret, { event_action: "resolve", dedup_key: "b" });
    const res = await world.request("GET", "/metrics", { token: null });
    expect(res.status).toBe(200);
    expect(res.text).toContain('intake_incident_changes_total{change="opened"} 2');
    expect(res.text).toContain('intake_incident_changes_total{change="resolved"} 1');
    expect(res.text).toContain('intake_incident_changes_total{change="acknowledged"} 0');
    expect(res.text).toContain('intake_incidents_open{severity="critical"} 1');
    expect(res.text).toContain('intake_incidents_open{severity="info"} 0');
  });

  test("deleting a service deletes its incidents", async () => {
    world = await createWorld();
    const svc = await world.createService();
    const other = await world.createService();
    await post(world, svc.id, svc.secret, trigger("k"));
    const kept = await post(world, other.id, other.secret, trigger("k"));
    expect((await world.request("DELETE", `/v1/services/${svc.id}`)).status).toBe(204);
    expect((await incidents(world)).map((i) => i.id)).toEqual([raw(kept.body.incident_id)]);
  });
});

describe.skipIf(testStack() !== "sqlite-memory")("alert events on a SQLite file (the writer worker)", () => {
  test("concurrent triggers on one key, committed by the worker, make one incident counting every event", async () => {
    const dir = mkdtempSync(join(tmpdir(), "intake-incidents-"));
    try {
      world = await createWorld({ env: { DATABASE_URL: `sqlite:${join(dir, "intake.sqlite")}` } });
      const svc = await world.createService();
      const answers = await Promise.all(
        Array.from({ length: 40 }, () => post(world, svc.id, svc.secret, trigger("k"))),
      );
      expect(answers.map((r) => r.status)).toEqual(Array(40).fill(202));
      const ids = new Set(answers.map((r) => r.body.incident_id));
      expect(ids.size).toBe(1);
      expect(await incident(world, [...ids][0] as string)).toMatchObject({ status: "triggered", alertCount: 40 });
      const duplicate = await post(world, svc.id, svc.secret, trigger("k"), "once");
      await post(world, svc.id, svc.secret, trigger("k"), "once");
      expect((await incident(world, duplicate.body.incident_id)).alertCount).toBe(41);
    } finally {
      await world?.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("auto-resolve and retention (§17)", () => {
  async function autoResolving(w: World, serviceId: string, seconds: number | null) {
    const res = await w.request("PATCH", `/v1/services/${serviceId}`, {
      body: { incident_auto_resolve_seconds: seconds },
    });
    expect(res.status).toBe(200);
    expect(res.body.incident_auto_resolve_seconds).toBe(seconds);
  }

  test("RPC CreateService and UpdateService set incident_auto_resolve_seconds; the reset flag clears it", async () => {
    world = await createWorld();
    const transport = createRouterTransport(
      ({ service }) => service(ServiceRegistryService, world.app.impls.services),
      { router: { interceptors: [world.app.admission.interceptor] } },
    );
    const rpc = createClient(ServiceRegistryService, transport);
    const headers = { authorization: `Bearer ${world.ownerToken}` };
    const made = await rpc.createService({ serviceName: "alerts", incidentAutoResolveSeconds: 120 }, { headers });
    expect(made.service?.incidentAutoResolveSeconds).toBe(120);
    const id = made.service?.id as string;
    const reset = await rpc.updateService({ id, resetIncidentAutoResolveSeconds: true }, { headers });
    expect(reset.service?.incidentAutoResolveSeconds).toBeUndefined();
    expect((await world.request("GET", `/v1/services/${id}`)).body.incident_auto_resolve_seconds).toBeNull();
  });

  test("an incident with no alert event for incident_auto_resolve_seconds is resolved by auto, once", async () => {
    world = await createWorld();
    const svc = await world.createService();
    await autoResolving(world, svc.id, 60);
    const opened = await post(world, svc.id, svc.secret, trigger("k"));
    world.clock.advance(30_000);
    await post(world, svc.id, svc.secret, trigger("k"));
    world.clock.advance(59_999);
    expect(await world.app.domain.autoResolve.pass()).toEqual([]);
    world.clock.advance(1);
    const [resolved, ...more] = await world.app.domain.autoResolve.pass();
    expect(more).toEqual([]);
    expect(resolved).toMatchObject({
      id: raw(opened.body.incident_id),
      status: "resolved",
      resolvedAt: world.clock.now(),
      resolvedBy: { type: "auto" },
    });
    expect(await world.app.domain.autoResolve.pass()).toEqual([]);
    expect(await incident(world, opened.body.incident_id)).toMatchObject({ status: "resolved" });
  });

  test("a paused service's open incidents are not auto-resolved; a service without the setting never is", async () => {
    world = await createWorld();
    const paused = await world.createService();
    const never = await world.createService();
    await autoResolving(world, paused.id, 60);
    const a = await post(world, paused.id, paused.secret, trigger("k"));
    const b = await post(world, never.id, never.secret, trigger("k"));
    expect((await world.request("PATCH", `/v1/services/${paused.id}`, { body: { is_monitored: false } })).status).toBe(
      200,
    );
    world.clock.advance(86_400_000);
    expect(await world.app.domain.autoResolve.pass()).toEqual([]);
    for (const id of [a.body.incident_id, b.body.incident_id]) {
      expect((await incident(world, id)).status).toBe("triggered");
    }
  });

  test("the background loop resolves a due incident without being called", async () => {
    world = await createWorld();
    const svc = await world.createService();
    await autoResolving(world, svc.id, 60);
    const opened = await post(world, svc.id, svc.secret, trigger("k"));
    world.clock.advance(60_000);
    const loop = createAutoResolver({
      store: world.app.store,
      clock: world.clock,
      logger: createLogger(() => {}),
      intervalMs: 20,
    });
    loop.start();
    try {
      for (let i = 0; i < 250 && (await incident(world, opened.body.incident_id)).status !== "resolved"; i++) {
        await Bun.sleep(20);
      }
    } finally {
      await loop.stop();
    }
    expect((await incident(world, opened.body.incident_id)).resolvedBy).toEqual({ type: "auto" });
  });

  test("INTAKE_INCIDENT_RETENTION_DAYS deletes incidents resolved longer ago; open and recent ones stay", async () => {
    world = await createWorld({ env: { INTAKE_INCIDENT_RETENTION_DAYS: "1" } });
    const svc = await world.createService();
    const old = await post(world, svc.id, svc.secret, trigger("old"));
    await post(world, svc.id, svc.secret, { event_action: "resolve", dedup_key: "old" });
    const open = await post(world, svc.id, svc.secret, trigger("open"));
    world.clock.advance(86_400_000 + 1);
    const recent = await post(world, svc.id, svc.secret, trigger("recent"));
    await post(world, svc.id, svc.secret, { event_action: "resolve", dedup_key: "recent" });
    const swept = await world.app.domain.retention.sweep();
    expect(swept.incidents).toBe(1);
    expect((await incidents(world)).map((i) => i.id).sort()).toEqual(
      [raw(open.body.incident_id), raw(recent.body.incident_id)].sort(),
    );
    expect(await world.app.store.incidents.get(world.tenantId, raw(old.body.incident_id))).toBeNull();
  });
});
