/**
 * intake.v1.IncidentService against the REST operations on one served world (SPEC §17): the
 * same reads give the same incidents and timelines; acknowledge and resolve by hand follow the
 * same rules with the same codes (twin incidents, one handled through each surface); and the
 * service answers on every transport (Connect JSON and binary, gRPC-Web, gRPC).
 * Runs on SQLite + memory cache and on PostgreSQL + Redis.
 */
import { afterEach, describe, expect, test } from "bun:test";
import { toJson } from "@bufbuild/protobuf";
import { createClient } from "@connectrpc/connect";
import { type Incident, IncidentSchema, IncidentService } from "../../gen/intake/v1/incidents_pb.ts";
import { ERROR_TABLE } from "../../src/rpc/errors.ts";
import { trigger } from "../support/incidents.ts";
import { bearer, codeName, failure, type Served, serveWorld, TRANSPORTS, transportFor } from "./support.ts";

let served: Served | undefined;
afterEach(async () => {
  await served?.close();
  served = undefined;
});

type Json = Record<string, unknown>;
type Outcome = { ok: true; body: unknown } | { ok: false; code: string };

/** The message in the REST shape: proto names; int64 as a number; unset optionals as REST's nulls. */
function restShape(message: Incident | undefined): Json {
  if (!message) throw new Error("missing incident");
  const json = toJson(IncidentSchema, message, { useProtoFieldName: true, alwaysEmitImplicit: true }) as Json;
  const out: Json = { ...json, alert_count: Number(json.alert_count) };
  // Protobuf JSON writes a Timestamp without zero milliseconds; REST always has three digits.
  for (const field of ["created_at", "last_event_at", "acknowledged_at", "resolved_at"]) {
    if (typeof out[field] === "string") out[field] = new Date(out[field] as string).toISOString();
  }
  for (const field of ["acknowledged_at", "resolved_at", "acknowledged_by", "resolved_by"]) out[field] ??= null;
  return out;
}

async function rpcOutcome(run: () => Promise<unknown>): Promise<Outcome> {
  try {
    return { ok: true, body: await run() };
  } catch (error) {
    const f = await failure(Promise.reject(error));
    expect(f.code).toBe(codeName(ERROR_TABLE[f.restCode as keyof typeof ERROR_TABLE].connect));
    return { ok: false, code: f.restCode as string };
  }
}

async function restOutcome(s: Served, method: string, path: string, token?: string): Promise<Outcome> {
  const res = await s.world.request(method, path, token === undefined ? {} : { token });
  return res.status >= 400 ? { ok: false, code: res.body.error.code } : { ok: true, body: res.body };
}

/** An outcome with the twin-specific values (ids, keys, actor ids) taken out. */
function twinless(outcome: Outcome): unknown {
  if (!outcome.ok) return outcome;
  const { id: _id, dedup_key: _key, ...rest } = outcome.body as Json;
  return rest;
}

describe("IncidentService matches the REST operations", () => {
  test("ListIncidents, GetIncident and ListIncidentEvents return what REST returns, filters and cursors included", async () => {
    served = await serveWorld();
    const s = served;
    const { world } = s;
    const sender = await world.createService("db");
    const a = await trigger(world, sender, { dedup_key: "a", severity: "critical" });
    await trigger(world, sender, { dedup_key: "a", severity: "info" });
    const b = await trigger(world, sender, { dedup_key: "b" });
    expect((await world.request("POST", `/v1/incidents/${b.incidentId}/acknowledge`)).status).toBe(200);
    const client = createClient(IncidentService, transportFor(s, "connect-json"));
    const auth = bearer(world.ownerToken);

    for (const query of [{}, { status: "open" }, { status: "acknowledged" }, { severity: "critical" }, { limit: 1 }]) {
      const qs = new URLSearchParams(Object.entries(query).map(([k, v]): [string, string] => [k, String(v)]));
      const rest = await restOutcome(s, "GET", `/v1/incidents?${qs}`);
      const rpc = await client.listIncidents(query, auth);
      expect({ data: rpc.data.map(restShape), next_cursor: rpc.nextCursor ?? null } as unknown).toEqual(
        (rest as { body: unknown }).body,
      );
    }
    const page1 = await client.listIncidents({ limit: 1 }, auth);
    const page2 = await client.listIncidents({ limit: 1, cursor: page1.nextCursor }, auth);
    expect(page2.data.map((i) => i.id)).toEqual([a.incidentId]);

    const got = await client.getIncident({ id: a.incidentId }, auth);
    expect(restShape(got.incident) as unknown).toEqual(
      ((await restOutcome(s, "GET", `/v1/incidents/${a.incidentId}`)) as { body: unknown }).body,
    );
    expect(restShape(got.incident)).toMatchObject({ alert_count: 2, severity: "critical" });

    const timeline = await client.listIncidentEvents({ id: a.incidentId }, auth);
    const restTimeline = (await restOutcome(s, "GET", `/v1/incidents/${a.incidentId}/events`)) as {
      body: { data: Array<{ id: string; payload: unknown }> };
    };
    expect(timeline.data.map((e) => e.id)).toEqual(restTimeline.body.data.map((e) => e.id));
    expect(timeline.data.map((e) => JSON.parse(new TextDecoder().decode(e.payload)))).toEqual(
      restTimeline.body.data.map((e) => e.payload),
    );

    for (const [label, rpc, path] of [
      ["bad status", () => client.listIncidents({ status: "closed" }, auth), "/v1/incidents?status=closed"],
      ["bad severity", () => client.listIncidents({ severity: "fatal" }, auth), "/v1/incidents?severity=fatal"],
      ["bad cursor", () => client.listIncidents({ cursor: "x!" }, auth), "/v1/incidents?cursor=x!"],
      ["limit 0", () => client.listIncidents({ limit: 0 }, auth), "/v1/incidents?limit=0"],
      [
        "unknown service",
        () => client.listIncidents({ serviceId: "svc_00000000000000000000000000000000" }, auth),
        "/v1/incidents?service_id=svc_00000000000000000000000000000000",
      ],
      ["unknown incident", () => client.getIncident({ id: "inc_x" }, auth), "/v1/incidents/inc_x"],
      ["unknown timeline", () => client.listIncidentEvents({ id: "inc_x" }, auth), "/v1/incidents/inc_x/events"],
    ] as const) {
      const viaRpc = await rpcOutcome(rpc);
      expect(viaRpc, label).toEqual(await restOutcome(s, "GET", path));
      expect(viaRpc.ok, label).toBe(false);
    }
  });

  test("AcknowledgeIncident and ResolveIncident follow REST's rules: change, repeat, 409 incident_resolved, 404, 403", async () => {
    served = await serveWorld();
    const s = served;
    const { world } = s;
    const sender = await world.createService("db");
    const viaRest = (await trigger(world, sender, { dedup_key: "rest" })).incidentId;
    const viaRpc = (await trigger(world, sender, { dedup_key: "rpc" })).incidentId;
    const client = createClient(IncidentService, transportFor(s, "connect-json"));
    const auth = bearer(world.ownerToken);
    const reader = await world.mint({ name: "reader", scope: "read_only", role: "owner" });
    const other = await world.otherTenant();
    const theirs = await trigger(world, await world.createService("t", other.token), {}, other.tenantId);

    const steps: Array<[string, () => Promise<Outcome>, () => Promise<Outcome>]> = [
      [
        "read_only acknowledge",
        () => restOutcome(s, "POST", `/v1/incidents/${viaRest}/acknowledge`, reader.token),
        () => rpcOutcome(() => client.acknowledgeIncident({ id: viaRpc }, bearer(reader.token))),
      ],
      [
        "acknowledge",
        () => restOutcome(s, "POST", `/v1/incidents/${viaRest}/acknowledge`),
        () => rpcOutcome(async () => restShape((await client.acknowledgeIncident({ id: viaRpc }, auth)).incident)),
      ],
      [
        "acknowledge again",
        () => restOutcome(s, "POST", `/v1/incidents/${viaRest}/acknowledge`),
        () => rpcOutcome(async () => restShape((await client.acknowledgeIncident({ id: viaRpc }, auth)).incident)),
      ],
      [
        "resolve",
        () => restOutcome(s, "POST", `/v1/incidents/${viaRest}/resolve`),
        () => rpcOutcome(async () => restShape((await client.resolveIncident({ id: viaRpc }, auth)).incident)),
      ],
      [
        "resolve again",
        () => restOutcome(s, "POST", `/v1/incidents/${viaRest}/resolve`),
        () => rpcOutcome(async () => restShape((await client.resolveIncident({ id: viaRpc }, auth)).incident)),
      ],
      [
        "acknowledge resolved",
        () => restOutcome(s, "POST", `/v1/incidents/${viaRest}/acknowledge`),
        () => rpcOutcome(() => client.acknowledgeIncident({ id: viaRpc }, auth)),
      ],
      [
        "another tenant's",
        () => restOutcome(s, "POST", `/v1/incidents/${theirs.incidentId}/resolve`),
        () => rpcOutcome(() => client.resolveIncident({ id: theirs.incidentId }, auth)),
      ],
    ];
    for (const [label, rest, rpc] of steps) {
      world.clock.advance(1_000);
      const [r, p] = [await rest(), await rpc()];
      expect(twinless(p), label).toEqual(twinless(r));
    }
    // Not vacuous: the outcomes are the contract's.
    expect(await restOutcome(s, "POST", `/v1/incidents/${viaRest}/acknowledge`)).toEqual({
      ok: false,
      code: "incident_resolved",
    });
    expect(await rpcOutcome(() => client.acknowledgeIncident({ id: viaRpc }, auth))).toEqual({
      ok: false,
      code: "incident_resolved",
    });
    const audit = await world.request("GET", `/v1/audit_events?target_id=${viaRpc}`);
    expect(audit.body.data.map((e: { action: string }) => e.action)).toEqual([
      "incident.resolve",
      "incident.acknowledge",
    ]);
    expect(audit.body.data[0].request_id).toMatch(/^req_[0-9a-f]{32}$/);
  });

  test("IncidentService answers on Connect JSON, Connect binary, gRPC-Web and gRPC", async () => {
    served = await serveWorld();
    const s = served;
    const sender = await s.world.createService("db");
    const { incidentId } = await trigger(s.world, sender, { severity: "error" });
    for (const name of TRANSPORTS) {
      const client = createClient(IncidentService, transportFor(s, name));
      const got = await client.getIncident({ id: incidentId }, bearer(s.world.ownerToken));
      expect(got.incident?.severity, name).toBe("error");
      expect((await failure(client.getIncident({ id: incidentId }))).restCode, name).toBe("missing_credentials");
    }
  });
});
