/**
 * SPEC §17 "exactly once", through a crash: a real `intake serve` takes a stream of signed alert
 * events (triggers, acknowledges, resolves on a few dedup keys, each with an Idempotency-Key)
 * from concurrent senders and is killed with SIGKILL mid-stream (no drain, no close). After a
 * restart on the same store:
 *
 * - every event whose 202 the client received is stored, linked to the incident its 202 named;
 * - every incident counts exactly the events stored against it (`alert_count` = its timeline):
 *   no change without its event, no event without its change;
 * - each incident's status, severity, title and `_by` fields are what its stored events imply,
 *   and no key has two open incidents;
 * - the senders' retries of the requests the crash left unanswered (same Idempotency-Key) are
 *   each applied once: a 200 `duplicate` where the commit had happened, a 202 where not, and the
 *   state above still holds afterwards.
 *
 * On a SQLite file (the writer worker's transaction) and on PostgreSQL (a pooled transaction
 * the server drops with the connection). docs/incidents.md, "Concurrency: one open incident per
 * key, exactly once".
 */
import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createDeployment, type Deployment } from "../support/deployment.ts";
import { type IntakeProcess, runCli, startIntake, stopAll } from "../support/intake-process.ts";
import { serviceAvailable } from "../support/services.ts";
import { sign } from "../support/signing.ts";

const KEYS = ["db-1/disk", "db-2/disk", "api/latency", "api/errors", "queue/depth"];
const SEVERITIES = ["info", "warning", "error", "critical"] as const;
const RANK: Record<string, number> = { info: 0, warning: 1, error: 2, critical: 3 };
const SENDERS = 16;
/** Acknowledged events before the kill: enough that the crash lands among many in flight. */
const ACKED_BEFORE_KILL = 300;
/** Kills per store, each followed by a restart and the senders' retries. */
const CRASHES = 3;

type Action = "trigger" | "acknowledge" | "resolve";

interface Request {
  idempotencyKey: string;
  action: Action;
  key: string;
  body: string;
}

interface Answered {
  request: Request;
  eventId: string;
  incidentId: string | null;
}

interface StoredEvent {
  id: string;
  incident_id: string | null;
  payload: { event_action: Action; dedup_key: string; payload?: { summary: string; severity: string } };
}

interface Incident {
  id: string;
  dedup_key: string;
  status: string;
  severity: string;
  title: string;
  alert_count: number;
  acknowledged_by: { type: string; id?: string } | null;
  resolved_by: { type: string; id?: string } | null;
}

/** The n-th request of sender `w`: mostly triggers, some acknowledges and resolves, over KEYS. */
function request(w: number, n: number, round: number): Request {
  const mix = (w * 7919 + n * 104729) % 20;
  const action: Action = mix < 12 ? "trigger" : mix < 15 ? "acknowledge" : "resolve";
  const key = KEYS[(w + n * 3) % KEYS.length] as string;
  const body =
    action === "trigger"
      ? {
          event_action: action,
          dedup_key: key,
          payload: {
            summary: `${key} from sender ${w} #${n}`,
            source: `host-${w}`,
            severity: SEVERITIES[(w + n) % SEVERITIES.length],
          },
        }
      : { event_action: action, dedup_key: key };
  return { idempotencyKey: `crash-${round}-${w}-${n}`, action, key, body: JSON.stringify(body) };
}

interface Sender {
  id: string;
  secret: string;
}

async function post(base: string, svc: Sender, r: Request): Promise<Response> {
  return fetch(`${base}/v1/ingest/${svc.id}`, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      "x-service-signature": sign(svc.secret, r.body, Date.now()),
      "idempotency-key": r.idempotencyKey,
    },
    body: r.body,
    signal: AbortSignal.timeout(10_000),
  });
}

async function getJson<T>(server: IntakeProcess, path: string, token: string): Promise<T> {
  const res = await server.fetch(path, { token });
  if (res.status !== 200) throw new Error(`GET ${path}: ${res.status} ${await res.text()}`);
  return (await res.json()) as T;
}

async function pages<T>(server: IntakeProcess, path: string, token: string): Promise<T[]> {
  const all: T[] = [];
  let cursor: string | null = null;
  do {
    const sep = path.includes("?") ? "&" : "?";
    const page: { data: T[]; next_cursor: string | null } = await getJson(
      server,
      `${path}${sep}limit=100${cursor ? `&cursor=${cursor}` : ""}`,
      token,
    );
    all.push(...page.data);
    cursor = page.next_cursor;
  } while (cursor);
  return all;
}

/**
 * What the store holds after the restart, checked against the answers the senders received and
 * against §17's rules applied to each incident's own stored events.
 */
async function checkState(server: IntakeProcess, token: string, svc: Sender, answered: Answered[]) {
  const incidents = await pages<Incident>(server, `/v1/incidents?service_id=${svc.id}`, token);
  const timelines = new Map<string, StoredEvent[]>();
  for (const incident of incidents) {
    timelines.set(incident.id, await pages<StoredEvent>(server, `/v1/incidents/${incident.id}/events`, token));
  }

  // Every acknowledged event is stored, with the effect its 202 reported.
  const missing: string[] = [];
  const wrongLink: string[] = [];
  for (const a of answered) {
    const res = await server.fetch(`/v1/events/${a.eventId}`, { token });
    if (res.status !== 200) {
      missing.push(`${a.eventId} (${res.status})`);
      continue;
    }
    const event = (await res.json()) as StoredEvent;
    if (event.incident_id !== a.incidentId) wrongLink.push(`${a.eventId}: ${event.incident_id} ≠ ${a.incidentId}`);
    if (a.incidentId !== null && !timelines.get(a.incidentId)?.some((e) => e.id === a.eventId))
      wrongLink.push(`${a.eventId} not in ${a.incidentId}'s timeline`);
  }
  expect(missing).toEqual([]);
  expect(wrongLink).toEqual([]);

  // Each incident is exactly what its stored events make of it.
  const open = new Map<string, string[]>();
  for (const incident of incidents) {
    const events = timelines.get(incident.id) as StoredEvent[];
    const actions = events.map((e) => e.payload.event_action);
    const triggers = events.filter((e) => e.payload.event_action === "trigger");
    const resolves = events.filter((e) => e.payload.event_action === "resolve");
    const acknowledges = events.filter((e) => e.payload.event_action === "acknowledge");
    const what = `${incident.id} (${actions.join(",")})`;
    // A timeline is in id order, which concurrent requests may commit in another: the checks
    // below hold in any order.
    expect({ what, count: incident.alert_count }).toEqual({ what, count: events.length });
    expect(events.every((e) => e.incident_id === incident.id && e.payload.dedup_key === incident.dedup_key)).toBe(true);
    expect({ what, opened: triggers.length > 0, resolves: resolves.length <= 1 }).toEqual({
      what,
      opened: true,
      resolves: true,
    });
    expect(triggers.map((e) => e.payload.payload?.summary)).toContain(incident.title);
    const highest = triggers.reduce((top, e) => Math.max(top, RANK[e.payload.payload?.severity ?? "info"] ?? 0), 0);
    expect(RANK[incident.severity]).toBe(highest);
    const status = resolves.length > 0 ? "resolved" : acknowledges.length > 0 ? "acknowledged" : "triggered";
    expect({ what, status: incident.status }).toEqual({ what, status });
    const resolvedBy = resolves[0] ? { type: "event", id: resolves[0].id } : null;
    expect({ what, by: incident.resolved_by }).toEqual({ what, by: resolvedBy });
    if (acknowledges.length > 0)
      expect(acknowledges.map((e) => e.id)).toContain(incident.acknowledged_by?.id as string);
    else expect(incident.acknowledged_by).toBeNull();
    if (incident.status !== "resolved")
      open.set(incident.dedup_key, [...(open.get(incident.dedup_key) ?? []), incident.id]);
  }
  for (const [key, ids] of open) expect({ key, open: ids.length }).toEqual({ key, open: 1 });
  return { incidents, open };
}

async function createService(server: IntakeProcess, token: string): Promise<Sender> {
  const res = await server.fetch("/v1/services", {
    method: "POST",
    token,
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ service_name: "paging" }),
  });
  expect(res.status).toBe(201);
  const body = (await res.json()) as { id: string; signing_secret: string };
  return { id: body.id, secret: body.signing_secret };
}

/**
 * Concurrent senders stream alert events at `server` until ACKED_BEFORE_KILL have been answered
 * 202, then it is SIGKILLed: what was answered, and the requests the kill left without an answer.
 */
async function streamUntilKilled(server: IntakeProcess, svc: Sender, round: number) {
  const answered: Answered[] = [];
  const unanswered: Request[] = [];
  const unexpected: string[] = [];
  let killed = false;
  async function sender(w: number) {
    for (let n = 0; !killed; n++) {
      const r = request(w, n, round);
      let res: Response;
      try {
        res = await post(server.base, svc, r);
      } catch {
        // No answer: the crash took it. It may or may not have been committed.
        unanswered.push(r);
        return;
      }
      const text = await res.text().catch(() => null);
      if (text === null) {
        unanswered.push(r);
        return;
      }
      if (res.status !== 202) {
        unexpected.push(`${res.status} ${text}`);
        return;
      }
      const body = JSON.parse(text) as { id: string; incident_id: string | null };
      answered.push({ request: r, eventId: body.id, incidentId: body.incident_id });
    }
  }
  const senders = Array.from({ length: SENDERS }, (_, w) => sender(w));
  const deadline = Date.now() + 20_000;
  while (answered.length < ACKED_BEFORE_KILL && unexpected.length === 0 && Date.now() < deadline) await Bun.sleep(5);
  server.proc.kill("SIGKILL");
  killed = true;
  await server.proc.exited;
  await Promise.all(senders);
  expect(unexpected).toEqual([]);
  expect(answered.length).toBeGreaterThanOrEqual(ACKED_BEFORE_KILL);
  expect([...new Set(answered.map((a) => a.request.action))].sort()).toEqual(["acknowledge", "resolve", "trigger"]);
  return { answered, unanswered };
}

/**
 * The whole story on one store, CRASHES times over: `start()` starts an instance on it (the
 * first, then one after each crash).
 */
async function crashAndRestart(start: () => Promise<IntakeProcess>, token: string) {
  let server = await start();
  const svc = await createService(server, token);
  const answered: Answered[] = [];
  let unansweredTotal = 0;
  let duplicates = 0;
  let state = { incidents: [] as Incident[], open: new Map<string, string[]>() };
  for (let round = 0; round < CRASHES; round++) {
    const streamed = await streamUntilKilled(server, svc, round);
    answered.push(...streamed.answered);
    unansweredTotal += streamed.unanswered.length;

    server = await start();
    await checkState(server, token, svc, answered);

    // The senders retry what the crash left unanswered, with the same Idempotency-Key.
    for (const r of streamed.unanswered) {
      const res = await post(server.base, svc, r);
      const body = (await res.json()) as { id: string; incident_id?: string | null; duplicate?: boolean };
      expect([200, 202]).toContain(res.status);
      if (res.status === 200) {
        expect(body.duplicate).toBe(true);
        duplicates++;
      } else {
        answered.push({ request: r, eventId: body.id, incidentId: body.incident_id ?? null });
      }
    }
    state = await checkState(server, token, svc, answered);
  }
  // The kills landed among requests in flight. One may fall just after a group commit answered
  // every request then in flight (all senders then stop before sending another), not all three.
  expect(unansweredTotal).toBeGreaterThan(0);

  // A repeat of an acknowledged request changes nothing either.
  const repeated = answered[0] as Answered;
  const again = await post(server.base, svc, repeated.request);
  expect(again.status).toBe(200);
  expect(((await again.json()) as { id: string }).id).toBe(repeated.eventId);

  // The store took up where it was: a trigger on each key joins its open incident or opens one.
  for (const key of KEYS) {
    const r: Request = {
      idempotencyKey: `after-${key}`,
      action: "trigger",
      key,
      body: JSON.stringify({
        event_action: "trigger",
        dedup_key: key,
        payload: { summary: "after the restart", source: "host-x", severity: "info" },
      }),
    };
    const res = await post(server.base, svc, r);
    expect(res.status).toBe(202);
    const { incident_id } = (await res.json()) as { incident_id: string };
    const openId = state.open.get(key)?.[0];
    if (openId) expect(incident_id).toBe(openId);
    else expect(state.incidents.some((i) => i.id === incident_id)).toBe(false);
  }
  console.log(
    `incidents crash: ${CRASHES} kills; ${answered.length} events answered 202, ${unansweredTotal} left unanswered by a kill (${duplicates} of them had been committed), ${state.incidents.length} incidents`,
  );
}

describe("a SIGKILL in the middle of alert ingest, on a SQLite file", () => {
  const dataDir = mkdtempSync(join(tmpdir(), "intake-incidents-crash-"));
  afterAll(async () => {
    await stopAll();
    rmSync(dataDir, { recursive: true, force: true });
  });

  test("every acknowledged alert event's effect is applied after the restart and no other; retries apply once", async () => {
    const env = { INTAKE_DATA_DIR: dataDir };
    const { token } = JSON.parse(await runCli(["bootstrap", "--tenant-name", "Crash", "--create", "--json"], env)) as {
      token: string;
    };
    let generation = 0;
    await crashAndRestart(() => startIntake(`sqlite-${++generation}`, env), token);
  }, 90_000);
});

const pg = (await serviceAvailable("postgres")) && (await serviceAvailable("redis"));

describe.skipIf(!pg)("a SIGKILL in the middle of alert ingest, on PostgreSQL", () => {
  let deployment: Deployment | undefined;
  afterAll(async () => {
    await deployment?.close();
  }, 30_000);

  test("every acknowledged alert event's effect is applied after the restart and no other; retries apply once", async () => {
    deployment = await createDeployment({ tenantName: "Crash" });
    const d = deployment;
    let generation = 0;
    await crashAndRestart(() => d.start(`postgres-${++generation}`), d.owner.token);
  }, 90_000);
});
