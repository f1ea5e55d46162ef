/**
 * A served world with something on every console page, for the tests that look at the pages as
 * a whole (test/browser/console-lighthouse.test.ts, console-pages.test.ts): two services with
 * signed events of a few kinds, incidents of several severities (one acknowledged, one
 * resolved), a second token, and the server on a real port for the browser. Its clock is real
 * time, since the browser's requests carry real timestamps.
 */
import { mainPort } from "../../src/serve.ts";
import { createWorld, type World } from "./harness.ts";
import { sendAlert, trigger } from "./incidents.ts";
import { sign } from "./signing.ts";

export interface ConsoleWorld {
  world: World;
  /** http://127.0.0.1:<port> */
  base: string;
  /** The service named "billing", with events and incidents. */
  billing: { id: string; secret: string };
  /** The service named "shipping". */
  shipping: { id: string; secret: string };
  /** evt_ ids of billing's events, oldest first. */
  events: string[];
  /** inc_ ids: [critical triggered, warning acknowledged, error resolved]. */
  incidents: string[];
  close(): Promise<void>;
}

async function post(base: string, sender: { id: string; secret: string }, body: unknown): Promise<string> {
  const payload = JSON.stringify(body);
  const res = await fetch(`${base}/v1/ingest/${sender.id}`, {
    method: "POST",
    headers: { "x-service-signature": sign(sender.secret, payload, Date.now()) },
    body: payload,
  });
  if (res.status !== 202) throw new Error(`ingest failed: ${res.status} ${await res.text()}`);
  return ((await res.json()) as { id: string }).id;
}

export async function consoleWorld(): Promise<ConsoleWorld> {
  const world = await createWorld();
  world.clock.advance(Date.now() - world.clock.now());
  // As `serve` listens: its routes, idle timeout, and live streams lifting it.
  const server = Bun.serve({ port: 0, hostname: "127.0.0.1", ...mainPort(world.app) });
  world.app.listening(server);
  const base = `http://127.0.0.1:${server.port}`;
  try {
    const billing = await world.createService("billing");
    const shipping = await world.createService("shipping");
    await world.mint({ name: "dashboard", scope: "read_only" });
    const events: string[] = [];
    for (let i = 0; i < 12; i++) {
      events.push(
        await post(base, billing, {
          type: i % 3 === 0 ? "invoice.paid" : "invoice.created",
          customer: `cus_${1000 + i}`,
          email: `Customer${i}@Example.com`,
          amount: 4200 + i,
          lines: [{ sku: "plan-pro", quantity: 1 }],
        }),
      );
    }
    await post(base, shipping, { type: "parcel.shipped", parcel: "pcl_77", carrier: "DHL" });
    const critical = await trigger(world, billing, {
      dedup_key: "db-disk",
      summary: "Disk 95% on db-1",
      severity: "critical",
    });
    const warning = await trigger(world, billing, {
      dedup_key: "queue-lag",
      summary: "Queue lag over 30 s",
      severity: "warning",
    });
    await sendAlert(world, billing, { event_action: "acknowledge", dedup_key: "queue-lag" });
    const resolved = await trigger(world, shipping, {
      dedup_key: "carrier-api",
      summary: "Carrier API answering 502",
      severity: "error",
    });
    await sendAlert(world, shipping, { event_action: "resolve", dedup_key: "carrier-api" });
    return {
      world,
      base,
      billing,
      shipping,
      events,
      incidents: [critical.incidentId, warning.incidentId, resolved.incidentId],
      close: async () => {
        await server.stop(true);
        await world.close();
      },
    };
  } catch (error) {
    await server.stop(true);
    await world.close();
    throw error;
  }
}
