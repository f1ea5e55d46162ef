/**
 * Ingest at the domain level (docs/ingest.md): what a sender sees for a signed event, a
 * repeated Idempotency-Key, every refusal, and what a reader then finds — through
 * domain.ingest on a real in-memory SQLite store, no HTTP.
 */
import { afterEach, describe, expect, test } from "bun:test";
import { DomainError } from "../../src/domain/errors.ts";
import { SignatureRefused } from "../../src/domain/ingest.ts";
import { createDomainWorld, type DomainWorld } from "../support/domain.ts";

let world: DomainWorld;
afterEach(() => world?.close());

/** The error a promise rejects with; fails the test if it resolves. */
async function refusal(promise: Promise<unknown>): Promise<DomainError> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof DomainError) return error;
    throw error;
  }
  throw new Error("expected a refusal, got a result");
}

const text = (bytes: Uint8Array) => new TextDecoder().decode(bytes);

describe("accepted events", () => {
  test("a signed event is stored with its exact bytes and listed newest first", async () => {
    world = await createDomainWorld();
    const service = await world.createService("billing");
    const first = await world.ingest(service, '{"n": 1,  "spaced":true}');
    world.clock.advance(1_000);
    const second = await world.ingest(service, '{"n":2}');
    expect([first.duplicate, second.duplicate]).toEqual([false, false]);
    expect(second.receivedAt - first.receivedAt).toBe(1_000);

    const page = await world.domain.ingest.listEvents(world.owner, service.id, {});
    expect(page.items.map((e) => e.id)).toEqual([second.id, first.id]);
    expect(page.items.map((e) => text(e.payload))).toEqual(['{"n":2}', '{"n": 1,  "spaced":true}']);
  });

  test("a repeated Idempotency-Key answers with the first event (duplicate) and stores nothing new", async () => {
    world = await createDomainWorld();
    const service = await world.createService("billing");
    const first = await world.ingest(service, '{"try":1}', { idempotencyKey: "order-42" });
    const again = await world.ingest(service, '{"try":2}', { idempotencyKey: "order-42" });
    expect(again).toEqual({ id: first.id, receivedAt: first.receivedAt, duplicate: true, incident: null });
    const page = await world.domain.ingest.listEvents(world.owner, service.id, {});
    expect(page.items.map((e) => [e.idempotencyKey, text(e.payload)])).toEqual([["order-42", '{"try":1}']]);
  });

  test("the same Idempotency-Key on another service is another event", async () => {
    world = await createDomainWorld();
    const a = await world.createService("a");
    const b = await world.createService("b");
    const onA = await world.ingest(a, "{}", { idempotencyKey: "k" });
    const onB = await world.ingest(b, "{}", { idempotencyKey: "k" });
    expect(onB.duplicate).toBe(false);
    expect(onB.id).not.toBe(onA.id);
  });

  test("64 events sent at once are each stored once, with 64 different ids", async () => {
    world = await createDomainWorld();
    const service = await world.createService("busy");
    const results = await Promise.all(Array.from({ length: 64 }, (_, n) => world.ingest(service, `{"n":${n}}`)));
    expect(new Set(results.map((r) => r.id)).size).toBe(64);
    const page = await world.domain.ingest.listEvents(world.owner, service.id, { limit: 100 });
    expect(page.items).toHaveLength(64);
  });
});

describe("refusals", () => {
  test("invalid_signature for a wrong secret, a missing header, an unknown service and a timestamp outside the tolerance", async () => {
    world = await createDomainWorld({ INTAKE_SIGNATURE_TOLERANCE_SECONDS: "300" });
    const service = await world.createService("billing");
    const other = await world.createService("other");
    const payload = new TextEncoder().encode("{}");
    const now = world.clock.now();
    const cases: Array<[string, Promise<unknown>]> = [
      ["another service's secret", world.ingest({ id: service.id, secret: other.secret }, "{}")],
      ["no header", world.domain.ingest.ingest({ serviceId: service.id, signature: null, payload })],
      ["unknown service", world.ingest({ id: "svc_00000000000000000000000000000000", secret: service.secret }, "{}")],
      ["301 s old", world.ingest(service, "{}", { atMs: now - 301_000 })],
      ["301 s ahead", world.ingest(service, "{}", { atMs: now + 301_000 })],
    ];
    for (const [what, attempt] of cases) {
      const error = await refusal(attempt);
      expect({ what, code: error.code }).toEqual({ what, code: "invalid_signature" });
      expect(error).toBeInstanceOf(SignatureRefused);
    }
    // Exactly at the tolerance still verifies, both ways.
    expect((await world.ingest(service, '{"edge":1}', { atMs: now - 300_000 })).duplicate).toBe(false);
    expect((await world.ingest(service, '{"edge":2}', { atMs: now + 300_000 })).duplicate).toBe(false);
    const page = await world.domain.ingest.listEvents(world.owner, service.id, {});
    expect(page.items).toHaveLength(2);
  });

  test("the refusal says why only as data: wrong secret and unknown service give the same code and message", async () => {
    world = await createDomainWorld();
    const service = await world.createService("billing");
    const wrong = await refusal(world.ingest({ id: service.id, secret: "whsec_wrong" }, "{}"));
    const unknown = await refusal(world.ingest({ id: "svc_00000000000000000000000000000000", secret: "x" }, "{}"));
    expect([wrong.code, wrong.message]).toEqual([unknown.code, unknown.message]);
    expect([(wrong as SignatureRefused).reason, (unknown as SignatureRefused).reason]).toEqual([
      "no_matching_signature",
      "unknown_service",
    ]);
  });

  test("invalid_request for a body that is not a JSON object; nothing stored", async () => {
    world = await createDomainWorld();
    const service = await world.createService("billing");
    for (const body of ["[1,2]", '"text"', "null", "{", "\uFEFF{}"]) {
      const error = await refusal(world.ingest(service, body));
      expect({ body, code: error.code }).toEqual({ body, code: "invalid_request" });
    }
    expect((await world.domain.ingest.listEvents(world.owner, service.id, {})).items).toEqual([]);
  });

  test("payload_too_large past INTAKE_MAX_EVENT_BYTES; exactly the limit is accepted", async () => {
    world = await createDomainWorld({ INTAKE_MAX_EVENT_BYTES: "1024" });
    const service = await world.createService("billing");
    const body = (bytes: number) => `{"p":"${"x".repeat(bytes - 8)}"}`;
    expect(body(1024)).toHaveLength(1024);
    expect((await world.ingest(service, body(1024))).duplicate).toBe(false);
    expect((await refusal(world.ingest(service, body(1025)))).code).toBe("payload_too_large");
  });

  test("ingestion_paused while the service is paused; accepted again once resumed", async () => {
    world = await createDomainWorld();
    const service = await world.createService("billing");
    await world.ingest(service, '{"before":1}');
    await world.domain.services.updateService(world.owner, service.id, { isMonitored: false }, null);
    expect((await refusal(world.ingest(service, '{"paused":1}'))).code).toBe("ingestion_paused");
    await world.domain.services.updateService(world.owner, service.id, { isMonitored: true }, null);
    await world.ingest(service, '{"after":1}');
    const page = await world.domain.ingest.listEvents(world.owner, service.id, {});
    expect(page.items.map((e) => text(e.payload))).toEqual(['{"after":1}', '{"before":1}']);
  });

  test("rate_limited past the service's own rate_limit within its window; admitted again in the next", async () => {
    world = await createDomainWorld();
    const service = await world.createService("billing");
    await world.domain.services.updateService(
      world.owner,
      service.id,
      { rateLimit: { limit: 3, windowSeconds: 10 } },
      null,
    );
    for (let n = 0; n < 3; n++) expect((await world.ingest(service, `{"n":${n}}`)).duplicate).toBe(false);
    expect((await refusal(world.ingest(service, '{"n":3}'))).code).toBe("rate_limited");
    world.clock.advance(10_000);
    expect((await world.ingest(service, '{"n":4}')).duplicate).toBe(false);
    const page = await world.domain.ingest.listEvents(world.owner, service.id, {});
    expect(page.items).toHaveLength(4);
  });

  test("no rate_limit of its own and no INTAKE_RATE_LIMIT_INGEST: a service is never limited", async () => {
    world = await createDomainWorld();
    const service = await world.createService("billing");
    const results = await Promise.all(Array.from({ length: 50 }, (_, n) => world.ingest(service, `{"n":${n}}`)));
    expect(results.filter((r) => !r.duplicate)).toHaveLength(50);
  });
});

describe("listing", () => {
  test("another tenant's service is not_found, like an unknown one", async () => {
    world = await createDomainWorld();
    const service = await world.createService("billing");
    await world.ingest(service, "{}");
    const other = await world.otherTenant();
    expect((await refusal(world.domain.ingest.listEvents(other, service.id, {}))).code).toBe("not_found");
    expect(
      (await refusal(world.domain.ingest.listEvents(world.owner, "svc_00000000000000000000000000000000", {}))).code,
    ).toBe("not_found");
  });

  test("pages of 2 walk every event newest first without a gap or a repeat", async () => {
    world = await createDomainWorld();
    const service = await world.createService("billing");
    const ids: string[] = [];
    for (let n = 0; n < 5; n++) {
      ids.unshift((await world.ingest(service, `{"n":${n}}`)).id);
      world.clock.advance(1);
    }
    const seen: string[] = [];
    let cursor: string | undefined;
    for (let pages = 0; pages < 5; pages++) {
      const page = await world.domain.ingest.listEvents(world.owner, service.id, { limit: 2, cursor });
      seen.push(...page.items.map((e) => e.id));
      if (page.nextCursor === null) break;
      cursor = page.nextCursor;
    }
    expect(seen).toEqual(ids);
  });
});
