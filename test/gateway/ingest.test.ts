import { afterEach, describe, expect, spyOn, test } from "bun:test";
import Stripe from "stripe";
import { OPERATOR } from "../../src/domain/audit.ts";
import { DomainError } from "../../src/domain/errors.ts";
import { signPayload } from "../../src/domain/signing.ts";
import { createWorld, type Reply, type World } from "../support/harness.ts";

let world: World;
afterEach(() => world?.close());

const enc = new TextEncoder();

function nowSeconds(w: World): number {
  return Math.floor(w.clock.now() / 1000);
}

interface PostOptions {
  /** Defaults to a valid signature of the body at the world's current time. */
  signature?: string | null;
  idempotencyKey?: string;
  headers?: Record<string, string>;
}

/** POST /v1/ingest/{id} with no bearer token, signed like a sender would. */
function post(w: World, serviceId: string, secret: string, body: string | Uint8Array, opts: PostOptions = {}) {
  const headers: Record<string, string> = { ...opts.headers };
  const signature = opts.signature === undefined ? signPayload(body, secret, nowSeconds(w)) : opts.signature;
  if (signature !== null) headers["x-service-signature"] = signature;
  if (opts.idempotencyKey !== undefined) headers["idempotency-key"] = opts.idempotencyKey;
  return w.request("POST", `/v1/ingest/${serviceId}`, { token: null, body, headers });
}

function list(w: World, serviceId: string, query = "") {
  return w.request("GET", `/v1/services/${serviceId}/events${query}`);
}

async function count(w: World, serviceId: string): Promise<number> {
  const res = await list(w, serviceId, "?limit=100");
  expect(res.status).toBe(200);
  return res.body.data.length;
}

/** The error body without its request id: what every 401 must have in common. */
function sansRequestId(res: Reply) {
  const { request_id, ...rest } = res.body.error;
  expect(request_id).toMatch(/^req_[0-9a-f]{32}$/);
  return rest;
}

describe("202 and the listing", () => {
  test("202 {id, received_at}, then listed with the exact bytes (non-ASCII, odd whitespace, key order)", async () => {
    world = await createWorld();
    const svc = await world.createService();
    const body = '{ "z" :\t"héllo ☃ 😀 \\u00e9",\r\n  "a":[1 , 2.50e1,{}] ,"n":null}  \n';
    const res = await post(world, svc.id, svc.secret, body);
    expect(res.status).toBe(202);
    expect(Object.keys(res.body).sort()).toEqual(["id", "received_at"]);
    expect(res.body.id).toMatch(/^evt_[0-9a-f]{32}$/);
    expect(res.body.received_at).toBe("2026-11-22T10:00:00.000Z");
    expect(res.headers.get("content-type")).toBe("application/json; charset=utf-8");

    const listed = await list(world, svc.id);
    expect(listed.status).toBe(200);
    // Verbatim: the stored bytes appear as they were sent, not re-serialized.
    expect(listed.text).toContain(`"payload":${body}}`);
    expect(listed.body).toEqual({
      data: [
        {
          id: res.body.id,
          service_id: svc.id,
          received_at: "2026-11-22T10:00:00.000Z",
          idempotency_key: null,
          type: null,
          incident_id: null,
          payload: JSON.parse(body),
        },
      ],
      next_cursor: null,
    });
  });

  test("any Content-Type is accepted (senders vary)", async () => {
    world = await createWorld();
    const svc = await world.createService();
    for (const type of ["text/plain", "application/octet-stream", "application/x-www-form-urlencoded"]) {
      const res = await post(world, svc.id, svc.secret, '{"t":1}', { headers: { "content-type": type } });
      expect(res.status).toBe(202);
    }
    expect(await post(world, svc.id, svc.secret, '{"t":1}').then((r) => r.status)).toBe(202);
  });

  test("listing is newest first with keyset pages; the idempotency key is listed", async () => {
    world = await createWorld();
    const svc = await world.createService();
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) {
      world.clock.advance(1000);
      const res = await post(world, svc.id, svc.secret, `{"i":${i}}`, { idempotencyKey: `k-${i}` });
      ids.push(res.body.id);
    }
    const first = await list(world, svc.id, "?limit=2");
    expect(first.body.data.map((e: { id: string }) => e.id)).toEqual([ids[4], ids[3]]);
    expect(first.body.data[0].idempotency_key).toBe("k-4");
    const second = await list(world, svc.id, `?limit=2&cursor=${first.body.next_cursor}`);
    expect(second.body.data.map((e: { id: string }) => e.id)).toEqual([ids[2], ids[1]]);
    const third = await list(world, svc.id, `?limit=2&cursor=${second.body.next_cursor}`);
    expect(third.body.data.map((e: { id: string }) => e.id)).toEqual([ids[0]]);
    expect(third.body.next_cursor).toBeNull();
  });

  test("listing: 400 for a bad limit or cursor, 401 without a token, read_only may read", async () => {
    world = await createWorld();
    const svc = await world.createService();
    expect((await list(world, svc.id, "?limit=0")).status).toBe(400);
    expect((await list(world, svc.id, "?limit=101")).status).toBe(400);
    expect((await list(world, svc.id, "?cursor=%21%21")).status).toBe(400);
    const anon = await world.request("GET", `/v1/services/${svc.id}/events`, { token: null });
    expect(anon.status).toBe(401);
    expect(anon.body.error.code).toBe("missing_credentials");
    const reader = await world.mint({ scope: "read_only" });
    expect((await world.request("GET", `/v1/services/${svc.id}/events`, { token: reader.token })).status).toBe(200);
  });

  test("listing: 404 for an unknown, malformed or other tenant's service", async () => {
    world = await createWorld();
    const svc = await world.createService();
    const other = await world.otherTenant();
    expect((await list(world, "svc_00000000000000000000000000000000")).status).toBe(404);
    expect((await list(world, "nope")).status).toBe(404);
    const foreign = await world.request("GET", `/v1/services/${svc.id}/events`, { token: other.token });
    expect(foreign.status).toBe(404);
    expect(foreign.body.error.code).toBe("not_found");
  });

  test("405 for another method on the ingest path, with Allow: POST", async () => {
    world = await createWorld();
    const svc = await world.createService();
    const res = await world.request("GET", `/v1/ingest/${svc.id}`, { token: null });
    expect(res.status).toBe(405);
    expect(res.headers.get("allow")).toBe("POST");
  });
});

describe("401 invalid_signature", () => {
  test("401 when the body is altered by one byte after signing; nothing stored", async () => {
    world = await createWorld();
    const svc = await world.createService();
    const body = '{"amount":100}';
    const res = await post(world, svc.id, svc.secret, '{"amount":900}', {
      signature: signPayload(body, svc.secret, nowSeconds(world)),
    });
    expect(res.status).toBe(401);
    expect(res.body.error.code).toBe("invalid_signature");
    expect(await count(world, svc.id)).toBe(0);
  });

  test("500, nothing stored: a sealed secret opened for its service does not verify for another whose cache entry holds it", async () => {
    world = await createWorld();
    const a = await world.createService("a");
    const b = await world.createService("b");
    const body = '{"a":1}';
    expect((await post(world, a.id, a.secret, body)).status).toBe(202); // A's secret is opened and held
    // A shared cache tier that hands B's id A's material (ciphertext included) must not make
    // A's secret verify for B: the ciphertext is bound to A.
    const { signingCache } = world.app.domain;
    const rawA = a.id.slice("svc_".length);
    const rawB = b.id.slice("svc_".length);
    const materialA = signingCache.peek(rawA);
    expect(materialA).toBeTruthy();
    await signingCache.invalidate(rawB);
    await signingCache.getOrLoad(rawB, async () => materialA ?? null);
    const res = await post(world, b.id, a.secret, body);
    // Not a sender's mistake but a corrupted cache: the fixed 500, and nothing stored.
    expect(res.status).toBe(500);
    expect(res.body.error.code).toBe("internal_error");
    expect(await count(world, b.id)).toBe(0);
    // A itself still verifies.
    expect((await post(world, a.id, a.secret, body)).status).toBe(202);
  });

  test("401 for a stale timestamp and for one too far in the future; exactly at the tolerance is fine", async () => {
    world = await createWorld({ env: { INTAKE_SIGNATURE_TOLERANCE_SECONDS: "300" } });
    const svc = await world.createService();
    const body = '{"a":1}';
    const at = (offset: number) => ({ signature: signPayload(body, svc.secret, nowSeconds(world) + offset) });
    expect((await post(world, svc.id, svc.secret, body, at(-301))).status).toBe(401);
    expect((await post(world, svc.id, svc.secret, body, at(301))).status).toBe(401);
    expect((await post(world, svc.id, svc.secret, body, at(-300))).status).toBe(202);
    expect((await post(world, svc.id, svc.secret, body, at(300))).status).toBe(202);
  });

  test("401 identical (code, message, no WWW-Authenticate) for an unknown service and every signature failure", async () => {
    world = await createWorld();
    const svc = await world.createService();
    const body = '{"a":1}';
    const t = nowSeconds(world);
    const attempts: Array<Promise<Reply>> = [
      post(world, "svc_0000000000000000000000000000abcd", svc.secret, body),
      post(world, "svc_not-an-id", svc.secret, body),
      post(world, "evt_0000000000000000000000000000abcd", svc.secret, body),
      post(world, "%E0%A4%A", svc.secret, body),
      post(world, "%FF", svc.secret, body),
      post(world, svc.id, svc.secret, body, { signature: null }),
      post(world, svc.id, svc.secret, body, { signature: "" }),
      post(world, svc.id, svc.secret, body, { signature: "garbage" }),
      post(world, svc.id, svc.secret, body, { signature: `t=${t}` }),
      post(world, svc.id, svc.secret, body, { signature: signPayload(body, svc.secret, t - 3600) }),
      post(world, svc.id, svc.secret, body, { signature: signPayload(body, svc.secret, t + 3600) }),
      post(world, svc.id, svc.secret, body, { signature: signPayload(body, "whsec_wrong", t) }),
      post(world, svc.id, svc.secret, body, { signature: signPayload('{"a":2}', svc.secret, t) }),
    ];
    const replies = await Promise.all(attempts);
    const expected = sansRequestId(replies[0] as Reply);
    expect(expected.code).toBe("invalid_signature");
    for (const res of replies) {
      expect(res.status).toBe(401);
      expect(sansRequestId(res)).toEqual(expected);
      expect(Object.keys(res.body)).toEqual(["error"]);
      expect(res.headers.get("www-authenticate")).toBeNull();
    }
    expect(await count(world, svc.id)).toBe(0);
  });

  test("401 for a service deleted after its material was cached", async () => {
    world = await createWorld();
    const svc = await world.createService();
    expect((await post(world, svc.id, svc.secret, "{}")).status).toBe(202);
    expect((await world.request("DELETE", `/v1/services/${svc.id}`)).status).toBe(204);
    const res = await post(world, svc.id, svc.secret, "{}");
    expect(res.status).toBe(401);
    expect(res.body.error.code).toBe("invalid_signature");
  });

  test("an event whose service is deleted between verification and commit fails alone (401); its batch-mates are stored", async () => {
    world = await createWorld();
    const a = await world.createService();
    const b = await world.createService();
    // Cache both services' material, so the next ingests verify without touching the store.
    expect((await post(world, a.id, a.secret, "{}")).status).toBe(202);
    expect((await post(world, b.id, b.secret, "{}")).status).toBe(202);
    const ingest = (svc: { id: string; secret: string }) =>
      world.app.domain.ingest.ingest({
        serviceId: svc.id,
        signature: signPayload('{"x":1}', svc.secret, nowSeconds(world)),
        payload: enc.encode('{"x":1}'),
      });
    // The batch's commit waits until b's service is gone. Without the gate the test races the
    // group commit's 1 ms timer against the delete's round trip: on PostgreSQL a busy machine
    // can let the insert reach the server first, and then both events are stored.
    const { events } = world.app.store;
    const insertBatch = events.insertBatch.bind(events);
    let deleted!: () => void;
    const gate = new Promise<void>((resolve) => {
      deleted = resolve;
    });
    spyOn(events, "insertBatch").mockImplementation(async (batch) => {
      await gate;
      return insertBatch(batch);
    });
    const pa = ingest(a);
    const pb = ingest(b).catch((e: unknown) => e);
    // Both are queued for the same group commit; b's service disappears before it runs.
    const gone = world.app.domain.audit.record(world.tenantId, OPERATOR, "service.delete", {
      type: "service",
      id: b.id.slice(4),
    });
    expect(await world.app.store.services.delete(world.tenantId, b.id.slice(4), gone)).toBe(true);
    deleted();
    expect((await pa).duplicate).toBe(false);
    const failure = await pb;
    expect(failure).toBeInstanceOf(DomainError);
    expect((failure as DomainError).code).toBe("invalid_signature");
    expect(await count(world, a.id)).toBe(2);
    // They did share a transaction: it failed as a whole and was retried one event at a time.
    expect(world.logs.some((l) => l.includes("retrying its events one by one"))).toBe(true);
  });
});

describe("409 ingestion_paused", () => {
  test("409 when is_monitored is false, and nothing is stored; 202 again once resumed", async () => {
    world = await createWorld();
    const svc = await world.createService();
    await world.request("PATCH", `/v1/services/${svc.id}`, { body: { is_monitored: false } });
    const res = await post(world, svc.id, svc.secret, '{"a":1}');
    expect(res.status).toBe(409);
    expect(res.body.error.code).toBe("ingestion_paused");
    expect(await count(world, svc.id)).toBe(0);
    await world.request("PATCH", `/v1/services/${svc.id}`, { body: { is_monitored: true } });
    expect((await post(world, svc.id, svc.secret, '{"a":1}')).status).toBe(202);
  });

  test("check order on a paused service: a bad signature is 401; a bad key or body is still 409", async () => {
    world = await createWorld();
    const svc = await world.createService();
    await world.request("PATCH", `/v1/services/${svc.id}`, { body: { is_monitored: false } });
    expect((await post(world, svc.id, svc.secret, "{}", { signature: "t=1,v1=00" })).status).toBe(401);
    expect((await post(world, svc.id, svc.secret, "{}", { idempotencyKey: "" })).status).toBe(409);
    expect((await post(world, svc.id, svc.secret, "[1]")).status).toBe(409);
  });

  test("409 even to a repeat of an Idempotency-Key already stored", async () => {
    world = await createWorld();
    const svc = await world.createService();
    expect((await post(world, svc.id, svc.secret, "{}", { idempotencyKey: "order-1" })).status).toBe(202);
    await world.request("PATCH", `/v1/services/${svc.id}`, { body: { is_monitored: false } });
    const res = await post(world, svc.id, svc.secret, "{}", { idempotencyKey: "order-1" });
    expect(res.status).toBe(409);
    expect(res.body.error.code).toBe("ingestion_paused");
  });
});

describe("Idempotency-Key", () => {
  test("200 duplicate:true with the first event's id and received_at; the repeat's body is not compared", async () => {
    world = await createWorld();
    const svc = await world.createService();
    const first = await post(world, svc.id, svc.secret, '{"v":1}', { idempotencyKey: "order-1" });
    expect(first.status).toBe(202);
    world.clock.advance(5_000);
    const again = await post(world, svc.id, svc.secret, '{"v":2}', { idempotencyKey: "order-1" });
    expect(again.status).toBe(200);
    expect(again.body).toEqual({ id: first.body.id, received_at: first.body.received_at, duplicate: true });
    const listed = await list(world, svc.id);
    expect(listed.body.data).toHaveLength(1);
    expect(listed.body.data[0].payload).toEqual({ v: 1 });
  });

  test("keys are per service: the same key in another service is a new event", async () => {
    world = await createWorld();
    const a = await world.createService();
    const b = await world.createService();
    expect((await post(world, a.id, a.secret, "{}", { idempotencyKey: "k" })).status).toBe(202);
    expect((await post(world, b.id, b.secret, "{}", { idempotencyKey: "k" })).status).toBe(202);
  });

  test("100 concurrent posts with the same key store exactly one event; every answer names it", async () => {
    world = await createWorld();
    const svc = await world.createService();
    const replies = await Promise.all(
      Array.from({ length: 100 }, (_, i) => post(world, svc.id, svc.secret, `{"i":${i}}`, { idempotencyKey: "same" })),
    );
    const statuses = replies.map((r) => r.status).sort();
    expect(statuses.filter((s) => s === 202)).toHaveLength(1);
    expect(statuses.filter((s) => s === 200)).toHaveLength(99);
    expect(new Set(replies.map((r) => r.body.id)).size).toBe(1);
    expect(await count(world, svc.id)).toBe(1);
  });

  const badKeys: Array<[string, string]> = [
    ["empty", ""],
    ["256 characters", "k".repeat(256)],
    ["a space inside", "order 1"],
    ["non-ASCII", "clé"],
    ["a DEL character", "ab\x7f"],
  ];
  for (const [name, key] of badKeys) {
    test(`400 invalid_request for an Idempotency-Key with ${name}`, async () => {
      world = await createWorld();
      const svc = await world.createService();
      const res = await post(world, svc.id, svc.secret, "{}", { idempotencyKey: key });
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe("invalid_request");
      expect(res.body.error.details).toEqual([
        { field: "Idempotency-Key", message: "must be 1 to 255 visible ASCII characters" },
      ]);
      expect(await count(world, svc.id)).toBe(0);
    });
  }

  test("a key of 255 visible ASCII characters is accepted", async () => {
    world = await createWorld();
    const svc = await world.createService();
    const key = `!~${"a".repeat(253)}`;
    expect((await post(world, svc.id, svc.secret, "{}", { idempotencyKey: key })).status).toBe(202);
  });
});

describe("400 body", () => {
  const bad: Array<[string, string | Uint8Array]> = [
    ["an array", "[1,2]"],
    ["a string", '"hello"'],
    ["a number", "42"],
    ["null", "null"],
    ["truncated JSON", '{"a":'],
    ["an empty body", ""],
    ["invalid UTF-8", new Uint8Array([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xff, 0x22, 0x7d])],
    ["a UTF-8 BOM before the object", new Uint8Array([0xef, 0xbb, 0xbf, 0x7b, 0x7d])],
    ["two objects", "{}{}"],
  ];
  for (const [name, body] of bad) {
    test(`400 invalid_request for ${name}; nothing stored`, async () => {
      world = await createWorld();
      const svc = await world.createService();
      const res = await post(world, svc.id, svc.secret, body);
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe("invalid_request");
      expect(await count(world, svc.id)).toBe(0);
    });
  }
});

describe("413 payload_too_large", () => {
  const env = { INTAKE_MAX_EVENT_BYTES: "64" };
  const exactly = (n: number) => `{"p":"${"x".repeat(n - 8)}"}`;

  test("413 over INTAKE_MAX_EVENT_BYTES; exactly at the limit is 202", async () => {
    world = await createWorld({ env });
    const svc = await world.createService();
    expect(exactly(64)).toHaveLength(64);
    expect((await post(world, svc.id, svc.secret, exactly(64))).status).toBe(202);
    const res = await post(world, svc.id, svc.secret, exactly(65));
    expect(res.status).toBe(413);
    expect(res.body.error.code).toBe("payload_too_large");
    expect(await count(world, svc.id)).toBe(1);
  });

  test("413 comes before 401 for a known service (judged while reading)", async () => {
    world = await createWorld({ env });
    const svc = await world.createService();
    const res = await post(world, svc.id, svc.secret, exactly(65), { signature: "garbage" });
    expect(res.status).toBe(413);
  });

  function chunked(w: World, serviceId: string, secret: string, chunks: string[]) {
    const body = chunks.join("");
    const stream = new ReadableStream<Uint8Array>({
      start(controller) {
        for (const chunk of chunks) controller.enqueue(enc.encode(chunk));
        controller.close();
      },
    });
    const request = new Request(`http://intake.test/v1/ingest/${serviceId}`, {
      method: "POST",
      headers: { "x-service-signature": signPayload(body, secret, nowSeconds(w)) },
      body: stream,
      duplex: "half",
    } as RequestInit);
    expect(request.headers.get("content-length")).toBeNull();
    return w.app.fetch(request);
  }

  test("413 for a chunked body with no Content-Length that grows past the limit", async () => {
    world = await createWorld({ env });
    const svc = await world.createService();
    const res = await chunked(world, svc.id, svc.secret, ['{"p":"', "x".repeat(40), "x".repeat(40), '"}']);
    expect(res.status).toBe(413);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe("payload_too_large");
  });

  test("a chunked body within the limit is read whole and accepted", async () => {
    world = await createWorld({ env });
    const svc = await world.createService();
    const res = await chunked(world, svc.id, svc.secret, ['{"p":', '"abc"', "}"]);
    expect(res.status).toBe(202);
    expect((await list(world, svc.id)).text).toContain('"payload":{"p":"abc"}}');
  });

  test("an unknown service is refused with the same 401 before its (oversized) body is read", async () => {
    world = await createWorld({ env });
    const res = await post(world, "svc_0000000000000000000000000000abcd", "whsec_x", exactly(1000));
    expect(res.status).toBe(401);
    expect(res.body.error.code).toBe("invalid_signature");
  });
});

describe("secret rotation grace window", () => {
  const env = { INTAKE_ROTATION_GRACE_SECONDS: "3600" };

  test("old secret verifies during the window and 401 after it; the new one verifies at once", async () => {
    world = await createWorld({ env });
    const svc = await world.createService();
    const rotated = await world.request("POST", `/v1/services/${svc.id}/secret_rotations`);
    expect(rotated.status).toBe(201);
    const fresh = rotated.body.signing_secret as string;
    expect((await post(world, svc.id, fresh, '{"n":1}')).status).toBe(202);
    expect((await post(world, svc.id, svc.secret, '{"o":1}')).status).toBe(202);
    world.clock.advance(3_599_000);
    expect((await post(world, svc.id, svc.secret, '{"o":2}')).status).toBe(202);
    world.clock.advance(1_000); // now == previous_secret_expires_at: no longer valid
    const late = await post(world, svc.id, svc.secret, '{"o":3}');
    expect(late.status).toBe(401);
    expect(late.body.error.code).toBe("invalid_signature");
    expect((await post(world, svc.id, fresh, '{"n":2}')).status).toBe(202);
  });

  test("a second rotation inside the window retires the oldest secret at once", async () => {
    world = await createWorld({ env });
    const svc = await world.createService();
    const second = (await world.request("POST", `/v1/services/${svc.id}/secret_rotations`)).body.signing_secret;
    world.clock.advance(60_000);
    const third = (await world.request("POST", `/v1/services/${svc.id}/secret_rotations`)).body.signing_secret;
    expect((await post(world, svc.id, svc.secret, "{}")).status).toBe(401);
    expect((await post(world, svc.id, second, "{}")).status).toBe(202);
    expect((await post(world, svc.id, third, "{}")).status).toBe(202);
  });
});

describe("service deletion", () => {
  test("deleting a service deletes its events: list → 404, and a re-created service has none", async () => {
    world = await createWorld();
    const svc = await world.createService("billing");
    expect((await post(world, svc.id, svc.secret, "{}", { idempotencyKey: "k1" })).status).toBe(202);
    expect(await count(world, svc.id)).toBe(1);
    expect((await world.request("DELETE", `/v1/services/${svc.id}`)).status).toBe(204);
    expect((await list(world, svc.id)).status).toBe(404);
    const again = await world.createService("billing");
    expect(again.id).not.toBe(svc.id);
    expect(await count(world, again.id)).toBe(0);
    // The old key is free again in the new service.
    expect((await post(world, again.id, again.secret, "{}", { idempotencyKey: "k1" })).status).toBe(202);
  });
});

describe("commit", () => {
  test("concurrent events share one insertBatch transaction (group commit)", async () => {
    world = await createWorld();
    const svc = await world.createService();
    const spy = spyOn(world.app.store.events, "insertBatch");
    const replies = await Promise.all(
      Array.from({ length: 40 }, (_, i) => post(world, svc.id, svc.secret, `{"i":${i}}`)),
    );
    expect(replies.every((r) => r.status === 202)).toBe(true);
    expect(spy.mock.calls.length).toBeLessThan(40);
    expect(spy.mock.calls.reduce((n, [batch]) => n + batch.length, 0)).toBe(40);
  });

  test("INTAKE_INGEST_COMMIT=per_request commits each event alone", async () => {
    world = await createWorld({ env: { INTAKE_INGEST_COMMIT: "per_request" } });
    const svc = await world.createService();
    const spy = spyOn(world.app.store.events, "insertBatch");
    await Promise.all(Array.from({ length: 10 }, (_, i) => post(world, svc.id, svc.secret, `{"i":${i}}`)));
    expect(spy.mock.calls.map(([batch]) => batch.length)).toEqual(Array(10).fill(1));
    expect(await count(world, svc.id)).toBe(10);
  });

  test("503 unavailable for exactly the events of a batch the store could not commit; the next batch is 202", async () => {
    world = await createWorld();
    const svc = await world.createService();
    const spy = spyOn(world.app.store.events, "insertBatch").mockImplementationOnce(() =>
      Promise.reject(new DomainError("unavailable", "The store cannot be reached.")),
    );
    const failed = await Promise.all([post(world, svc.id, svc.secret, "{}"), post(world, svc.id, svc.secret, "{}")]);
    expect(failed.map((r) => r.status)).toEqual([503, 503]);
    expect(failed[0]?.body.error.code).toBe("unavailable");
    spy.mockRestore();
    expect((await post(world, svc.id, svc.secret, "{}")).status).toBe(202);
    expect(await count(world, svc.id)).toBe(1);
  });

  test("500 internal_error (fixed message, cause only in the log) when the store fails otherwise", async () => {
    world = await createWorld();
    const svc = await world.createService();
    spyOn(world.app.store.events, "insertBatch").mockImplementation(() => Promise.reject(new Error("SQL boom")));
    const res = await post(world, svc.id, svc.secret, "{}");
    expect(res.status).toBe(500);
    expect(res.body.error.code).toBe("internal_error");
    expect(res.text).not.toContain("boom");
    expect(world.logs.some((l) => l.includes("SQL boom"))).toBe(true);
  });

  test("the signing secret never reaches the log", async () => {
    world = await createWorld();
    const svc = await world.createService();
    spyOn(world.app.store.events, "insertBatch").mockImplementation(() => Promise.reject(new Error("boom")));
    await post(world, svc.id, svc.secret, "{}");
    await post(world, svc.id, svc.secret, "{}", { signature: "t=1,v1=00" });
    expect(world.logs.join("\n")).not.toContain(svc.secret);
  });
});

describe("Stripe's SDK", () => {
  const stripe = new Stripe("sk_test_placeholder_not_used_for_network");

  test("202 for an event signed with stripe.webhooks.generateTestHeaderString", async () => {
    world = await createWorld();
    const svc = await world.createService();
    const payload = JSON.stringify({ id: "evt_test", object: "event", data: { amount: 1999, note: "naïve" } });
    const header = await stripe.webhooks.generateTestHeaderStringAsync({
      payload,
      secret: svc.secret,
      timestamp: nowSeconds(world),
    });
    const res = await post(world, svc.id, svc.secret, payload, { signature: header });
    expect(res.status).toBe(202);
    expect((await list(world, svc.id)).text).toContain(`"payload":${payload}}`);
  });

  test("Stripe's own verifier accepts what signPayload produces", async () => {
    const secret = "whsec_0123456789abcdefghijklmnopqrstuvwxyzABCDEFG";
    const payload = '{"hello":"wörld"}';
    const t = Math.floor(Date.now() / 1000);
    const event = await stripe.webhooks.constructEventAsync(payload, signPayload(payload, secret, t), secret);
    expect(event as unknown).toEqual({ hello: "wörld" });
  });
});
