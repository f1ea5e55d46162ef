/**
 * §17's exactly-once rule on the group commit's fallback (domain/ingest.ts): when a batch
 * fails and its events are committed one by one, each alert event's effect is applied once,
 * in the commit that stores it.
 */
import { afterEach, expect, test } from "bun:test";
import { parseId } from "../../src/domain/ids.ts";
import { createDomainWorld, type DomainWorld } from "../support/domain.ts";

let world: DomainWorld;
afterEach(() => world?.close());

const trigger = JSON.stringify({
  event_action: "trigger",
  dedup_key: "k",
  payload: { summary: "disk full", source: "db-1", severity: "error" },
});

test("a batch retried one event at a time applies its alert event's effect once", async () => {
  world = await createDomainWorld();
  const alerting = await world.createService("alerting");
  const doomed = await world.createService("doomed");
  // Both services' signing material cached, so the next two ingests reach the group commit at once.
  const first = await world.ingest(alerting, trigger);
  await world.ingest(doomed, "{}");

  const joined = world.ingest(alerting, trigger);
  const orphan = world.ingest(doomed, "{}").catch((error: unknown) => error);
  // Deleted after its event verified, before the batch commits: its foreign key fails the batch.
  await world.domain.services.deleteService(world.owner, doomed.id, null);

  const result = await joined;
  expect(result.incident?.incidentId).toBe(first.incident?.incidentId as string);
  expect(await orphan).toMatchObject({ code: "invalid_signature" });
  expect(world.logs.some((line) => line.includes("retrying its events one by one"))).toBe(true);
  const incident = await world.store.incidents.get(world.owner.tenantId, first.incident?.incidentId as string);
  expect(incident?.alertCount).toBe(2);
  const timeline = await world.store.incidents.events(world.owner.tenantId, incident?.id as string, { limit: 10 });
  expect(timeline.map((e) => e.id)).toEqual([first.id, result.id]);
  expect(parseId("svc", alerting.id)).toBe(incident?.serviceId as string);
});
