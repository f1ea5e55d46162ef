/**
 * The incident change stream (SPEC §17, docs/incidents.md): `GET /v1/incidents/stream` sends
 * one `event: incident` message per change (opened, acknowledged, resolved, severity_raised)
 * with the change cursor as its id, resumes from a cursor (Last-Event-ID wins over `after`),
 * and ends like the feed's stream. The guarantee: a reader cut and resumed on another instance
 * of the same store ends with exactly the committed changes, in one order.
 * Runs on SQLite (a file, for two instances) and on PostgreSQL + Redis.
 */
import { afterEach, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createClient } from "@connectrpc/connect";
import { IncidentService, IncidentStart } from "../../gen/intake/v1/incidents_pb.ts";
import { type App, createApp } from "../../src/app.ts";
import { loadKeyMaterial } from "../../src/config.ts";
import { createLogger } from "../../src/logger.ts";
import { bearer, failure, type Served, serveWorld, transportFor } from "../rpc/support.ts";
import { createWorld, type World } from "../support/harness.ts";
import { sendAlert, trigger, via } from "../support/incidents.ts";
import { openSse, type SseReader } from "../support/sse.ts";
import { testStack } from "../support/stack.ts";

let world: World | undefined;
let second: App | undefined;
let served: Served | undefined;
let readers: SseReader[] = [];
let dir: string | undefined;
afterEach(async () => {
  for (const r of readers) await r.close();
  readers = [];
  await second?.close();
  second = undefined;
  await served?.close();
  served = undefined;
  await world?.close();
  world = undefined;
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = undefined;
});

interface Change {
  id: string;
  change: string;
  incident: { id: string; dedup_key: string; status: string; severity: string; alert_count: number };
}

async function stream(w: World, query = "", headers: Record<string, string> = {}, app: Pick<App, "fetch"> = w.app) {
  const reader = await openSse(app, `/v1/incidents/stream${query}`, {
    authorization: `Bearer ${w.ownerToken}`,
    ...headers,
  });
  readers.push(reader);
  const changes = (): Change[] =>
    reader.messages
      .filter((m) => m.event === "incident")
      .map((m) => ({ id: m.id as string, ...(JSON.parse(m.data as string) as Omit<Change, "id">) }));
  return { ...reader, changes };
}

describe("GET /v1/incidents/stream", () => {
  test("200 text/event-stream: opened, severity_raised, acknowledged, resolved as `event: incident` with the incident after; joins are not sent", async () => {
    world = await createWorld();
    const w = world;
    const sender = await w.createService();
    const s = await stream(w);
    expect(s.res.status).toBe(200);
    expect(s.res.headers.get("content-type")).toBe("text/event-stream; charset=utf-8");
    const opened = await trigger(w, sender, { dedup_key: "k", severity: "warning" });
    await trigger(w, sender, { dedup_key: "k", severity: "info" }); // joined: not a change
    await trigger(w, sender, { dedup_key: "k", severity: "critical" });
    expect((await w.request("POST", `/v1/incidents/${opened.incidentId}/acknowledge`)).status).toBe(200);
    await sendAlert(w, sender, { event_action: "resolve", dedup_key: "k" });
    await s.until(() => s.changes().length >= 4);
    const changes = s.changes();
    expect(changes.map((c) => c.change)).toEqual(["opened", "severity_raised", "acknowledged", "resolved"]);
    expect(changes.map((c) => [c.incident.status, c.incident.severity, c.incident.alert_count])).toEqual([
      ["triggered", "warning", 1],
      ["triggered", "critical", 3],
      ["acknowledged", "critical", 3],
      ["resolved", "critical", 4],
    ]);
    expect(new Set(changes.map((c) => c.incident.id))).toEqual(new Set([opened.incidentId]));
    expect(new Set(changes.map((c) => c.id)).size).toBe(4);
    // The message's incident is the REST incident's JSON.
    const now = await w.request("GET", `/v1/incidents/${opened.incidentId}`);
    expect(changes[3]?.incident).toEqual(now.body);
  });

  test("resumes from a cursor: Last-Event-ID wins over after; start=latest sees only later changes; service_id filters", async () => {
    world = await createWorld();
    const w = world;
    const a = await w.createService("a");
    const b = await w.createService("b");
    await trigger(w, a, { dedup_key: "1" });
    await trigger(w, b, { dedup_key: "2" });
    await trigger(w, a, { dedup_key: "3" });
    const all = await stream(w);
    await all.until(() => all.changes().length >= 3);
    const [first, secondChange, third] = all.changes() as [Change, Change, Change];

    const resumed = await stream(w, `?after=${third.id}`, { "last-event-id": first.id });
    await resumed.until(() => resumed.changes().length >= 2);
    expect(resumed.changes().map((c) => c.id)).toEqual([secondChange.id, third.id]);

    const byAfter = await stream(w, `?after=${secondChange.id}`);
    const latest = await stream(w, "?start=latest");
    const onlyA = await stream(w, `?service_id=${a.id}`);
    await latest.until(() => latest.messages.some((m) => m.comment === "stream open"));
    await Bun.sleep(50);
    const fourth = await trigger(w, a, { dedup_key: "4" });
    await byAfter.until(() => byAfter.changes().length >= 2);
    await latest.until(() => latest.changes().length >= 1);
    await onlyA.until(() => onlyA.changes().length >= 3);
    expect(byAfter.changes().map((c) => c.incident.id)).toEqual([third.incident.id, fourth.incidentId]);
    expect(latest.changes().map((c) => c.incident.id)).toEqual([fourth.incidentId]);
    expect(onlyA.changes().map((c) => c.incident.dedup_key)).toEqual(["1", "3", "4"]);
  });

  test("400 invalid_request for a feed cursor, another tenant's cursor or a bad start; 404 for another tenant's service", async () => {
    world = await createWorld();
    const w = world;
    const sender = await w.createService();
    await trigger(w, sender);
    const feedCursor = (await w.request("GET", "/v1/feed")).body.next_cursor as string;
    const other = await w.otherTenant();
    const theirs = await w.createService("t", other.token);
    await trigger(w, theirs, {}, other.tenantId);
    const theirStream = await openSse(w.app, "/v1/incidents/stream", { authorization: `Bearer ${other.token}` });
    readers.push(theirStream);
    await theirStream.until(() => theirStream.messages.some((m) => m.event === "incident"));
    const theirCursor = theirStream.messages.find((m) => m.event === "incident")?.id as string;
    for (const [query, headers] of [
      [`?after=${feedCursor}`, {}],
      [`?after=${theirCursor}`, {}],
      ["", { "last-event-id": theirCursor }],
      ["?after=garbage!", {}],
      ["?start=middle", {}],
    ] as const) {
      const res = await w.request("GET", `/v1/incidents/stream${query}`, { headers });
      expect(res.status, query).toBe(400);
      expect(res.body.error.code).toBe("invalid_request");
    }
    const res = await w.request("GET", `/v1/incidents/stream?service_id=${theirs.id}`);
    expect(res.status).toBe(404);
    expect(res.body.error.code).toBe("not_found");
    // The feed refuses the incident stream's cursor too.
    expect((await w.request("GET", `/v1/feed?after=${theirCursor}`)).status).toBe(400);
  });

  test("ends within 1 s when its token is revoked; on drain after sending every committed change", async () => {
    world = await createWorld();
    const w = world;
    const sender = await w.createService();
    const { id, token } = await w.mint({ name: "pager", scope: "read_only" });
    const s = await openSse(w.app, "/v1/incidents/stream", { authorization: `Bearer ${token}` });
    readers.push(s);
    await s.until(() => s.messages.some((m) => m.comment === "stream open"));
    expect((await w.request("DELETE", `/v1/api_tokens/${id}`)).status).toBe(200);
    const revokedAt = Date.now();
    await s.until(() => s.ended(), 3_000);
    expect(Date.now() - revokedAt).toBeLessThan(1_500);
    expect(s.messages.at(-1)).toMatchObject({ event: "end" });
    expect(JSON.parse(s.messages.at(-1)?.data as string).error.code).toBe("invalid_credentials");

    const d = await stream(w);
    const made = [];
    for (let i = 0; i < 3; i++) made.push((await trigger(w, sender, { dedup_key: `d${i}` })).incidentId);
    w.app.drainStreams();
    await d.until(() => d.ended(), 5_000);
    expect(d.changes().map((c) => c.incident.id)).toEqual(made);
    expect(JSON.parse(d.messages.at(-1)?.data as string).error.code).toBe("unavailable");
  });

  test("ends at the token's expires_at", async () => {
    world = await createWorld();
    const w = world;
    const expiresAt = w.clock.now() + 3_600_000;
    const { token } = await w.mint({
      name: "short",
      scope: "read_only",
      expires_at: new Date(expiresAt).toISOString(),
    });
    const s = await openSse(w.app, "/v1/incidents/stream", { authorization: `Bearer ${token}` });
    readers.push(s);
    await s.until(() => s.messages.some((m) => m.comment === "stream open"));
    expect(s.ended()).toBe(false);
    w.clock.set(expiresAt);
    await s.until(() => s.ended(), 3_000);
    expect(JSON.parse(s.messages.at(-1)?.data as string).error.code).toBe("invalid_credentials");
  });

  test("a reader cut and resumed on another instance gets exactly the committed changes, in one order", async () => {
    // Two instances on one store: PostgreSQL (+ Redis wake-ups) on that stack, a SQLite file here.
    if (testStack() === "sqlite-memory") {
      dir = mkdtempSync(join(tmpdir(), "intake-incident-stream-"));
      world = await createWorld({ env: { DATABASE_URL: `sqlite:${join(dir, "intake.sqlite")}` } });
    } else {
      world = await createWorld();
    }
    const w = world;
    const config = w.app.config;
    second = await createApp({ config, keys: loadKeyMaterial(config), logger: createLogger(() => {}), clock: w.clock });
    const other = via(w, second);
    const senders = [await w.createService("a"), await w.createService("b")];

    // Changes made on both instances at once: triggers (opened / joined / severity_raised),
    // acknowledges and resolves by hand, and resolves by event.
    const expected: Array<[string, string]> = [];
    async function work(round: number) {
      const made = await Promise.all(
        [w, other].map((on, i) =>
          trigger(on, senders[i] as (typeof senders)[number], { dedup_key: `r${round}`, severity: "warning" }),
        ),
      );
      for (const m of made) expected.push([m.incidentId, "opened"]);
      const raised = await Promise.all(
        [w, other].map((on, i) =>
          trigger(on, senders[i] as (typeof senders)[number], { dedup_key: `r${round}`, severity: "error" }),
        ),
      );
      for (const m of raised) expected.push([m.incidentId, "severity_raised"]);
      const [x, y] = made as unknown as [{ incidentId: string }, { incidentId: string }];
      const acts = await Promise.all([
        w.request("POST", `/v1/incidents/${x.incidentId}/acknowledge`),
        other.request("POST", `/v1/incidents/${y.incidentId}/resolve`),
      ]);
      for (const act of acts) expect(act.status).toBe(200);
      expected.push([x.incidentId, "acknowledged"], [y.incidentId, "resolved"]);
      await sendAlert(other, senders[0] as (typeof senders)[number], {
        event_action: "resolve",
        dedup_key: `r${round}`,
      });
      expected.push([x.incidentId, "resolved"]);
    }

    const got: Change[] = [];
    let reader = await stream(w);
    let cursor: string | undefined;
    const rounds = 6;
    for (let round = 0; round < rounds; round++) {
      await work(round);
      // Cut the reader now and then (after some of what it was sent), and resume on the other instance.
      if (round % 2 === 1) {
        await reader.until(() => reader.changes().length > 0);
        const taken = reader.changes();
        await reader.close();
        got.push(...taken);
        cursor = taken.at(-1)?.id;
        const app = round % 4 === 1 ? (second as App) : w.app;
        reader = await stream(w, "", cursor ? { "last-event-id": cursor } : {}, app);
      }
    }
    const total = rounds * 7;
    await reader.until(() => got.length + reader.changes().length >= total, 15_000);
    await Bun.sleep(300);
    got.push(...reader.changes());

    // Exactly the committed changes, each once.
    expect(got).toHaveLength(total);
    expect(new Set(got.map((c) => c.id)).size).toBe(total);
    const pairs = (list: Array<[string, string]>) => list.map(([id, change]) => `${id} ${change}`).sort();
    expect(pairs(got.map((c) => [c.incident.id, c.change]))).toEqual(pairs(expected));
    // In one order: a fresh reader from the start, on either instance, sees the same sequence.
    for (const app of [w.app, second as App]) {
      const fresh = await stream(w, "", {}, app);
      await fresh.until(() => fresh.changes().length >= total, 15_000);
      expect(fresh.changes().map((c) => c.id)).toEqual(got.map((c) => c.id));
    }
    // Per incident, the order is the order the changes were made in.
    for (const [id] of expected) {
      const mine = got.filter((c) => c.incident.id === id).map((c) => c.change);
      expect(mine).toEqual(expected.filter(([e]) => e === id).map(([, change]) => change));
    }
  }, 60_000);
});

describe("StreamIncidentChanges", () => {
  test("one message per change with its cursor, the same as the SSE stream's; resumes from a cursor; 401 without a token", async () => {
    served = await serveWorld();
    const s = served;
    const sender = await s.world.createService();
    const a = await trigger(s.world, sender, { dedup_key: "a" });
    expect((await s.world.request("POST", `/v1/incidents/${a.incidentId}/resolve`)).status).toBe(200);
    await trigger(s.world, sender, { dedup_key: "b" });
    const sse = await openSse(s.world.app, "/v1/incidents/stream", { authorization: `Bearer ${s.world.ownerToken}` });
    readers.push(sse);
    await sse.until(() => sse.messages.filter((m) => m.event === "incident").length >= 3);
    const expected = sse.messages.filter((m) => m.event === "incident");

    for (const transport of ["connect-json", "grpc"] as const) {
      const client = createClient(IncidentService, transportFor(s, transport));
      const abort = new AbortController();
      const got: Array<{ cursor: string; change: string; id: string | undefined }> = [];
      try {
        for await (const message of client.streamIncidentChanges(
          { start: IncidentStart.EARLIEST },
          { ...bearer(s.world.ownerToken), signal: abort.signal },
        )) {
          got.push({ cursor: message.cursor, change: message.change, id: message.incident?.id });
          if (got.length === 3) abort.abort();
        }
      } catch (error) {
        if (!abort.signal.aborted) throw error;
      }
      expect(
        got.map((g) => g.cursor),
        transport,
      ).toEqual(expected.map((m) => m.id as string));
      expect(
        got.map((g) => [g.change, g.id]),
        transport,
      ).toEqual(expected.map((m) => [JSON.parse(m.data as string).change, JSON.parse(m.data as string).incident.id]));

      const resumed: string[] = [];
      const again = new AbortController();
      try {
        for await (const message of client.streamIncidentChanges(
          { after: got[0]?.cursor },
          { ...bearer(s.world.ownerToken), signal: again.signal },
        )) {
          resumed.push(message.cursor);
          if (resumed.length === 2) again.abort();
        }
      } catch (error) {
        if (!again.signal.aborted) throw error;
      }
      expect(resumed).toEqual(got.slice(1).map((g) => g.cursor));

      const refused = await failure(
        (async () => {
          for await (const _ of client.streamIncidentChanges({})) break;
        })(),
      );
      expect(refused.restCode).toBe("missing_credentials");
    }
  });
});
