/**
 * The signing snippets a service page offers (src/console/snippets.ts) run as a sender would run
 * them — bash with curl and openssl, Node with the stripe and standardwebhooks packages — against
 * a live server, with only INTAKE_SIGNING_SECRET set: each must get a 202 and its event stored.
 * A snippet that drifts from what the server verifies fails here, not in a sender's hands.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { ingestUrl, snippetsFor } from "../../src/console/snippets.ts";
import { createWorld, type World } from "../support/harness.ts";

let world: World;
let server: ReturnType<typeof Bun.serve>;
let base: string;
/** Inside the repository, so Node resolves `stripe` and `standardwebhooks` from its node_modules. */
const scratch = join(import.meta.dir, "../../test-results/snippets");

beforeAll(async () => {
  mkdirSync(scratch, { recursive: true });
  world = await createWorld();
  // Senders sign with the real time: the server's clock follows it.
  world.clock.now = () => Date.now();
  server = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: world.app.fetch });
  base = `http://127.0.0.1:${server.port}`;
});

afterAll(async () => {
  await server?.stop(true);
  await world?.close();
  rmSync(scratch, { recursive: true, force: true });
});

async function service(name: string, scheme: "stripe" | "standard_webhooks") {
  const res = await world.request("POST", "/v1/services", { body: { service_name: name, signature_scheme: scheme } });
  expect(res.status).toBe(201);
  return { id: res.body.id as string, secret: res.body.signing_secret as string };
}

async function run(command: string[], secret: string): Promise<string> {
  const proc = Bun.spawn(command, {
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin", INTAKE_SIGNING_SECRET: secret },
    stdout: "pipe",
    stderr: "pipe",
  });
  const [out, err, code] = await Promise.all([
    new Response(proc.stdout).text(),
    new Response(proc.stderr).text(),
    proc.exited,
  ]);
  expect({ code, err }).toEqual({ code: 0, err: "" });
  return out;
}

async function storedEvents(serviceId: string): Promise<number> {
  const res = await world.request("GET", `/v1/services/${serviceId}/events`);
  return (res.body.data as unknown[]).length;
}

describe("the service page's signing snippets, run as a sender runs them", () => {
  for (const scheme of ["stripe", "standard_webhooks"] as const) {
    test(`${scheme}: the curl + openssl snippet gets 202 and its event is stored`, async () => {
      const svc = await service(`curl-${scheme}`, scheme);
      const [curl] = snippetsFor(scheme, ingestUrl(base, svc.id));
      expect(curl?.title).toBe("curl + openssl");
      const out = await run(["bash", "-c", curl?.code ?? ""], svc.secret);
      expect(out).toMatch(/"id":"evt_[0-9a-f]{32}"/);
      expect(out.trim()).toEndWith("HTTP 202");
      expect(await storedEvents(svc.id)).toBe(1);
    });

    test(`${scheme}: the Node snippet gets 202 and its event is stored`, async () => {
      const svc = await service(`node-${scheme}`, scheme);
      const node = snippetsFor(scheme, ingestUrl(base, svc.id))[1];
      expect(node?.language).toBe("javascript");
      const file = join(scratch, `${scheme}.mjs`);
      writeFileSync(file, node?.code ?? "");
      const out = await run(["node", file], svc.secret);
      expect(out).toStartWith("202 ");
      expect(await storedEvents(svc.id)).toBe(1);
    });
  }

  test("standard_webhooks after a switch: the curl snippet signs with the service's older, Stripe-form secret", async () => {
    const svc = await service("switched", "stripe");
    const patched = await world.request("PATCH", `/v1/services/${svc.id}`, {
      body: { signature_scheme: "standard_webhooks" },
    });
    expect(patched.status).toBe(200);
    const [curl] = snippetsFor("standard_webhooks", ingestUrl(base, svc.id));
    const out = await run(["bash", "-c", curl?.code ?? ""], svc.secret);
    expect(out.trim()).toEndWith("HTTP 202");
  });

  test("a wrong secret: the same snippet gets the one 401 a refused sender always gets", async () => {
    const svc = await service("wrong-secret", "stripe");
    const [curl] = snippetsFor("stripe", ingestUrl(base, svc.id));
    const out = await run(["bash", "-c", curl?.code ?? ""], `${svc.secret.slice(0, -1)}x`);
    expect(out).toContain('"code":"invalid_signature"');
    expect(out.trim()).toEndWith("HTTP 401");
  });
});
