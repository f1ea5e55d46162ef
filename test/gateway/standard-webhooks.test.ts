/**
 * §19: services of the `standard_webhooks` scheme, with events signed by the `standardwebhooks`
 * and `svix` npm libraries as their senders (docs/ingest.md, "Standard Webhooks").
 */
import { afterEach, describe, expect, test } from "bun:test";
import { Webhook } from "standardwebhooks";
import { Webhook as Svix } from "svix";
import { signPayload } from "../../src/domain/signing.ts";
import { createWorld, type World } from "../support/harness.ts";

let world: World;
afterEach(() => world?.close());

const SW_SECRET = /^whsec_[A-Za-z0-9+/]{43}=$/;

async function createSwService(w: World, name = "sw"): Promise<{ id: string; secret: string }> {
  const res = await w.request("POST", "/v1/services", {
    body: { service_name: name, signature_scheme: "standard_webhooks" },
  });
  expect(res.status).toBe(201);
  expect(res.body.signature_scheme).toBe("standard_webhooks");
  return { id: res.body.id, secret: res.body.signing_secret };
}

type Library = "standardwebhooks" | "svix";

/** The headers a sender built with `library` puts on the event, at the world's current time (or `at`). */
function signed(
  w: World,
  library: Library,
  secret: string,
  msgId: string,
  body: string,
  at?: Date,
): Record<string, string> {
  const when = at ?? new Date(w.clock.now());
  if (library === "svix") {
    const signature = new Svix(secret).sign(msgId, when, body);
    return {
      "svix-id": msgId,
      "svix-timestamp": String(Math.floor(when.getTime() / 1000)),
      "svix-signature": signature,
    };
  }
  const signature = new Webhook(secret).sign(msgId, when, body);
  return {
    "webhook-id": msgId,
    "webhook-timestamp": String(Math.floor(when.getTime() / 1000)),
    "webhook-signature": signature,
  };
}

function post(w: World, serviceId: string, body: string, headers: Record<string, string>) {
  return w.request("POST", `/v1/ingest/${serviceId}`, { token: null, body, headers });
}

describe("standard_webhooks services", () => {
  test("201: a new service of the scheme gets whsec_ + base64 of 32 bytes, which both libraries take", async () => {
    world = await createWorld();
    const svc = await createSwService(world);
    expect(svc.secret).toMatch(SW_SECRET);
    expect(Buffer.from(svc.secret.slice(6), "base64").length).toBe(32);
    // The constructors decode the secret (and throw on one that is not base64).
    expect(() => new Webhook(svc.secret)).not.toThrow();
    expect(() => new Svix(svc.secret)).not.toThrow();
    const stripe = await world.request("POST", "/v1/services", { body: { service_name: "st" } });
    expect(stripe.body.signature_scheme).toBe("stripe");
    expect(stripe.body.signing_secret).toMatch(/^whsec_[0-9A-Za-z]{43}$/);
  });

  for (const library of ["standardwebhooks", "svix"] as const) {
    test(`202 for an event signed by the ${library} library, stored with webhook-id as its idempotency key`, async () => {
      world = await createWorld();
      const svc = await createSwService(world);
      const body = '{"type":"invoice.paid","n":1}';
      const res = await post(world, svc.id, body, signed(world, library, svc.secret, "msg_abc123", body));
      expect(res.status).toBe(202);
      const listed = await world.request("GET", `/v1/services/${svc.id}/events`);
      expect(listed.body.data[0].idempotency_key).toBe("msg_abc123");
      expect(listed.text).toContain(`"payload":${body}}`);
    });

    test(`401 invalid_signature for a ${library} event signed with another secret, a changed body, or stale`, async () => {
      world = await createWorld();
      const svc = await createSwService(world);
      const other = `whsec_${Buffer.alloc(32, 7).toString("base64")}`;
      const body = '{"n":1}';
      const wrong = await post(world, svc.id, body, signed(world, library, other, "msg_1", body));
      expect(wrong.status).toBe(401);
      expect(wrong.body.error.code).toBe("invalid_signature");
      const tampered = await post(world, svc.id, '{"n":2}', signed(world, library, svc.secret, "msg_2", body));
      expect(tampered.status).toBe(401);
      const past = new Date(world.clock.now() - 301_000);
      const stale = await post(world, svc.id, body, signed(world, library, svc.secret, "msg_3", body, past));
      expect(stale.status).toBe(401);
      const future = new Date(world.clock.now() + 301_000);
      const early = await post(world, svc.id, body, signed(world, library, svc.secret, "msg_4", body, future));
      expect(early.status).toBe(401);
      // Within the tolerance either way: accepted.
      const near = new Date(world.clock.now() - 299_000);
      expect((await post(world, svc.id, body, signed(world, library, svc.secret, "msg_5", body, near))).status).toBe(
        202,
      );
    });
  }

  test("200 duplicate: true for a repeated webhook-id, the first event's id, nothing new stored", async () => {
    world = await createWorld();
    const svc = await createSwService(world);
    const first = await post(
      world,
      svc.id,
      '{"a":1}',
      signed(world, "standardwebhooks", svc.secret, "msg_dup", '{"a":1}'),
    );
    expect(first.status).toBe(202);
    world.clock.advance(10_000);
    // A retry re-signs (fresh timestamp), and Svix's spelling names the same id.
    const again = await post(world, svc.id, '{"a":2}', signed(world, "svix", svc.secret, "msg_dup", '{"a":2}'));
    expect(again.status).toBe(200);
    expect(again.body).toEqual({ id: first.body.id, received_at: first.body.received_at, duplicate: true });
    const listed = await world.request("GET", `/v1/services/${svc.id}/events`);
    expect(listed.body.data.length).toBe(1);
  });

  test("400 invalid_request when an Idempotency-Key is also sent and differs from webhook-id; 202 when equal", async () => {
    world = await createWorld();
    const svc = await createSwService(world);
    const body = '{"a":1}';
    const mismatch = await post(world, svc.id, body, {
      ...signed(world, "standardwebhooks", svc.secret, "msg_1", body),
      "idempotency-key": "other",
    });
    expect(mismatch.status).toBe(400);
    expect(mismatch.body.error.code).toBe("invalid_request");
    expect(mismatch.body.error.details).toEqual([
      { field: "Idempotency-Key", message: "must equal webhook-id when both are sent" },
    ]);
    const same = await post(world, svc.id, body, {
      ...signed(world, "standardwebhooks", svc.secret, "msg_1", body),
      "idempotency-key": "msg_1",
    });
    expect(same.status).toBe(202);
  });

  test("401 for a webhook-id with a dot or over 255 characters, though correctly signed", async () => {
    world = await createWorld();
    const svc = await createSwService(world);
    const body = "{}";
    for (const id of ["msg.1", "m".repeat(256)]) {
      const res = await post(world, svc.id, body, signed(world, "standardwebhooks", svc.secret, id, body));
      expect(res.status).toBe(401);
    }
  });

  test("401: Standard Webhooks headers to a stripe service, and X-Service-Signature to a standard_webhooks one", async () => {
    world = await createWorld();
    const stripe = await world.createService("st");
    const body = '{"a":1}';
    const toStripe = await post(
      world,
      stripe.id,
      body,
      signed(world, "standardwebhooks", stripe.secret, "msg_1", body),
    );
    expect(toStripe.status).toBe(401);
    expect(toStripe.body.error.code).toBe("invalid_signature");
    const sw = await createSwService(world);
    const now = Math.floor(world.clock.now() / 1000);
    const toSw = await post(world, sw.id, body, { "x-service-signature": signPayload(body, sw.secret, now) });
    expect(toSw.status).toBe(401);
    // The same answer for both (no oracle for the scheme).
    expect(toSw.body.error.message).toBe(toStripe.body.error.message);
  });

  test("409 ingestion_paused holds for a verified standard_webhooks event, even a repeat", async () => {
    world = await createWorld();
    const svc = await createSwService(world);
    const body = "{}";
    expect((await post(world, svc.id, body, signed(world, "svix", svc.secret, "msg_p", body))).status).toBe(202);
    await world.request("PATCH", `/v1/services/${svc.id}`, { body: { is_monitored: false } });
    const paused = await post(world, svc.id, body, signed(world, "svix", svc.secret, "msg_p", body));
    expect(paused.status).toBe(409);
  });
});

describe("switching schemes", () => {
  test("PATCH signature_scheme is audited from and to; a stripe secret then verifies through both libraries", async () => {
    world = await createWorld();
    const svc = await world.createService("switch");
    const patched = await world.request("PATCH", `/v1/services/${svc.id}`, {
      body: { signature_scheme: "standard_webhooks" },
    });
    expect(patched.status).toBe(200);
    expect(patched.body.signature_scheme).toBe("standard_webhooks");
    const audit = await world.request("GET", "/v1/audit_events?limit=1");
    expect(audit.body.data[0].action).toBe("service.update");
    expect(audit.body.data[0].changes).toEqual({ signature_scheme: { from: "stripe", to: "standard_webhooks" } });
    // The existing secret (43 base62) keeps working: the key is its base64 decoding, as the libraries take it.
    const body = '{"switched":true}';
    for (const library of ["standardwebhooks", "svix"] as const) {
      const res = await post(world, svc.id, body, signed(world, library, svc.secret, `msg_${library}`, body));
      expect(res.status).toBe(202);
    }
    // The Stripe header no longer verifies for it.
    const now = Math.floor(world.clock.now() / 1000);
    expect(
      (await post(world, svc.id, body, { "x-service-signature": signPayload(body, svc.secret, now) })).status,
    ).toBe(401);
    // And back: the same secret signs Stripe's way again.
    await world.request("PATCH", `/v1/services/${svc.id}`, { body: { signature_scheme: "stripe" } });
    expect(
      (await post(world, svc.id, body, { "x-service-signature": signPayload(body, svc.secret, now) })).status,
    ).toBe(202);
  });

  test("400 invalid_request for an unknown signature_scheme on create and PATCH", async () => {
    world = await createWorld();
    const created = await world.request("POST", "/v1/services", {
      body: { service_name: "x", signature_scheme: "svix" },
    });
    expect(created.status).toBe(400);
    expect(created.body.error.code).toBe("invalid_request");
    const svc = await world.createService("y");
    const patched = await world.request("PATCH", `/v1/services/${svc.id}`, { body: { signature_scheme: "hmac" } });
    expect(patched.status).toBe(400);
    expect(patched.body.error.code).toBe("invalid_request");
  });

  test("PATCH to the scheme a service already has changes nothing and writes no audit event", async () => {
    world = await createWorld();
    const svc = await createSwService(world);
    const before = await world.request("GET", "/v1/audit_events?limit=1");
    const patched = await world.request("PATCH", `/v1/services/${svc.id}`, {
      body: { signature_scheme: "standard_webhooks" },
    });
    expect(patched.status).toBe(200);
    const after = await world.request("GET", "/v1/audit_events?limit=1");
    expect(after.body.data[0].id).toBe(before.body.data[0].id);
  });
});

describe("rotation with the standard_webhooks scheme", () => {
  test("the new secret has the scheme's form; the previous one verifies during the grace window, then 401", async () => {
    world = await createWorld({ env: { INTAKE_ROTATION_GRACE_SECONDS: "3600" } });
    const svc = await createSwService(world);
    const rotated = await world.request("POST", `/v1/services/${svc.id}/secret_rotations`);
    expect(rotated.status).toBe(201);
    const fresh = rotated.body.signing_secret as string;
    expect(fresh).toMatch(SW_SECRET);
    expect(fresh).not.toBe(svc.secret);
    const body = "{}";
    expect((await post(world, svc.id, body, signed(world, "standardwebhooks", fresh, "msg_n1", body))).status).toBe(
      202,
    );
    expect((await post(world, svc.id, body, signed(world, "svix", svc.secret, "msg_o1", body))).status).toBe(202);
    world.clock.advance(3_600_000);
    expect((await post(world, svc.id, body, signed(world, "svix", svc.secret, "msg_o2", body))).status).toBe(401);
    expect((await post(world, svc.id, body, signed(world, "svix", fresh, "msg_n2", body))).status).toBe(202);
  });
});
