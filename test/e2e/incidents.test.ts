/**
 * SPEC §17 under concurrency, with real processes: two `intake serve` instances on one
 * PostgreSQL database. Alert events on one dedup key, split across the instances and sent at
 * once, must make exactly one incident that counts every accepted event (docs/incidents.md,
 * "Concurrency: one open incident per key, exactly once"). Incidents are read from the
 * database directly (their routes come later).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { SQL } from "bun";
import { createDeployment, type Deployment } from "../support/deployment.ts";
import type { IntakeProcess } from "../support/intake-process.ts";
import { serviceAvailable } from "../support/services.ts";
import { sign } from "../support/signing.ts";

const ok = (await serviceAvailable("postgres")) && (await serviceAvailable("redis"));

describe.skipIf(!ok)("incidents on two instances of one PostgreSQL", () => {
  let deployment: Deployment | undefined;
  let a: IntakeProcess;
  let b: IntakeProcess;
  let sql: SQL | undefined;

  beforeAll(async () => {
    deployment = await createDeployment();
    [a, b] = await Promise.all([deployment.start("A"), deployment.start("B")]);
    sql = new SQL(deployment.database.url);
  }, 60_000);

  afterAll(async () => {
    await sql?.close();
    await deployment?.close();
  }, 30_000);

  async function createService(name: string): Promise<{ id: string; secret: string }> {
    const res = await a.fetch("/v1/services", {
      method: "POST",
      token: deployment?.owner.token as string,
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ service_name: name }),
    });
    expect(res.status).toBe(201);
    const body = (await res.json()) as { id: string; signing_secret: string };
    return { id: body.id, secret: body.signing_secret };
  }

  async function send(on: IntakeProcess, svc: { id: string; secret: string }, body: unknown) {
    const text = JSON.stringify(body);
    const res = await on.fetch(`/v1/ingest/${svc.id}`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-service-signature": sign(svc.secret, text, Date.now()) },
      body: text,
    });
    return { status: res.status, body: (await res.json()) as { incident_id?: string | null } };
  }

  const trigger = (n: number) => ({
    event_action: "trigger",
    dedup_key: "db-1/disk",
    payload: { summary: `disk full #${n}`, source: "db-1", severity: n % 7 === 0 ? "critical" : "warning" },
  });

  test("200 concurrent triggers on one key across two instances make one incident with alert_count 200", async () => {
    const svc = await createService("concurrent-triggers");
    const answers = await Promise.all(
      Array.from({ length: 200 }, (_, n) => send(n % 2 === 0 ? a : b, svc, trigger(n))),
    );
    expect(answers.map((r) => r.status)).toEqual(Array(200).fill(202));
    const ids = new Set(answers.map((r) => r.body.incident_id));
    expect(ids.size).toBe(1);
    const rows =
      await (sql as SQL)`select id, status, severity, alert_count from incidents where service_id = ${svc.id.slice(4)}`;
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ status: "triggered", severity: "critical" });
    expect(Number(rows[0].alert_count)).toBe(200);
    expect(`inc_${rows[0].id}`).toBe([...ids][0] as string);
    const [linked] = await (sql as SQL)`select count(*)::int as n from events where incident_id = ${rows[0].id}`;
    expect(linked.n).toBe(200);
  }, 60_000);

  test("interleaved triggers and resolves on both instances never leave two open incidents, and count every event once", async () => {
    const svc = await createService("interleaved");
    const answers = await Promise.all(
      Array.from({ length: 120 }, (_, n) =>
        send(n % 2 === 0 ? a : b, svc, n % 3 === 2 ? { event_action: "resolve", dedup_key: "db-1/disk" } : trigger(n)),
      ),
    );
    expect(answers.map((r) => r.status)).toEqual(Array(120).fill(202));
    const touched = answers.filter((r) => r.body.incident_id !== null).length;
    const rows = await (sql as SQL)`select status, alert_count from incidents where service_id = ${svc.id.slice(4)}`;
    expect(rows.filter((r: { status: string }) => r.status !== "resolved").length).toBeLessThanOrEqual(1);
    expect(rows.reduce((sum: number, r: { alert_count: string | number }) => sum + Number(r.alert_count), 0)).toBe(
      touched,
    );
  }, 60_000);
});
