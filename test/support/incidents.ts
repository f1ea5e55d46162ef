/**
 * Incidents for tests, made the way senders make them: a signed alert event (SPEC §17) through
 * `POST /v1/ingest/{service}`. When ingest applies the incident rules itself (its 202 carries
 * `incident_id`), that is the whole story; until then the event is stored as a plain event and
 * its effect is applied with the store's own `applyAlerts` (docs/incidents.md), as the ingest
 * commit will.
 */
import { parseAlert } from "../../src/domain/incidents.ts";
import type { World } from "./harness.ts";
import { sign } from "./signing.ts";

export interface Sender {
  id: string;
  secret: string;
}

export interface Sent {
  /** evt_ id. */
  eventId: string;
  /** inc_ id, or null when an acknowledge or resolve found nothing open. */
  incidentId: string | null;
}

/** What sending needs of a world: its requests, clock and app (another app on the same store will do). */
export type Via = Pick<World, "request" | "clock" | "app" | "tenantId">;

/** The world's tenant and clock, through another app (an instance on the same store). */
export function via(world: World, app: World["app"]): Via {
  return {
    app,
    clock: world.clock,
    tenantId: world.tenantId,
    async request(method, path, options = {}) {
      const headers = new Headers(options.headers);
      const token = options.token === undefined ? world.ownerToken : options.token;
      if (token !== null) headers.set("authorization", `Bearer ${token}`);
      const body = options.body === undefined ? undefined : (options.body as string);
      const res = await app.fetch(new Request(`http://intake.test${path}`, { method, headers, body }));
      const text = await res.text();
      return { status: res.status, headers: res.headers, text, body: text ? JSON.parse(text) : null };
    },
  };
}

/** Posts `body` signed by `sender` (of the tenant `tenantId`, the world's own by default). */
export async function sendAlert(
  world: Via,
  sender: Sender,
  body: Record<string, unknown>,
  tenantId = world.tenantId,
): Promise<Sent> {
  const payload = JSON.stringify(body);
  const res = await world.request("POST", `/v1/ingest/${sender.id}`, {
    token: null,
    body: payload,
    headers: { "x-service-signature": sign(sender.secret, payload, world.clock.now()) },
  });
  if (res.status !== 202) throw new Error(`alert ingest failed: ${res.status} ${res.text}`);
  const eventId = res.body.id as string;
  if ("incident_id" in res.body) return { eventId, incidentId: res.body.incident_id as string | null };
  const alert = parseAlert(body, eventId);
  if (!alert) throw new Error("not an alert event");
  const [outcome] = await world.app.store.incidents.applyAlerts([
    {
      eventId: eventId.slice(4),
      tenantId,
      serviceId: sender.id.slice(4),
      receivedAt: Date.parse(res.body.received_at as string),
      alert,
    },
  ]);
  const raw = outcome?.incidentId ?? null;
  return { eventId, incidentId: raw === null ? null : `inc_${raw}` };
}

export interface TriggerFields {
  dedup_key?: string;
  summary?: string;
  source?: string;
  severity?: "critical" | "error" | "warning" | "info";
}

/** A trigger; returns the incident it opened or joined (its inc_ id) and the event. */
export async function trigger(
  world: Via,
  sender: Sender,
  fields: TriggerFields = {},
  tenantId = world.tenantId,
): Promise<Sent & { incidentId: string }> {
  const sent = await sendAlert(
    world,
    sender,
    {
      event_action: "trigger",
      ...(fields.dedup_key !== undefined && { dedup_key: fields.dedup_key }),
      payload: {
        summary: fields.summary ?? "Disk almost full on db-1",
        source: fields.source ?? "db-1",
        severity: fields.severity ?? "warning",
      },
    },
    tenantId,
  );
  if (sent.incidentId === null) throw new Error("a trigger always has an incident");
  return { ...sent, incidentId: sent.incidentId };
}

/** A new service of `token`'s tenant (the world's by default) with one open incident: its inc_ id. */
export async function openIncident(world: World, token?: string): Promise<string> {
  const sender = await world.createService(undefined, token);
  return (await trigger(world, sender, {}, await tenantOf(world, token))).incidentId;
}

/** The tenant id of `token` (the world's own without one). */
export async function tenantOf(world: World, token?: string): Promise<string> {
  if (token === undefined) return world.tenantId;
  const res = await world.request("GET", "/v1/tenant", { token });
  if (res.status !== 200) throw new Error(`tenant lookup failed: ${res.status}`);
  return res.body.id as string;
}
