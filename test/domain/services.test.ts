/**
 * Services at the domain level (docs/api.md, "Services"): names, tenants, pausing, rotation
 * with its grace window, deletion — each judged by what a sender or an API caller then sees,
 * through domain.services and domain.ingest on a real in-memory SQLite store, no HTTP.
 */
import { afterEach, describe, expect, test } from "bun:test";
import { DomainError } from "../../src/domain/errors.ts";
import { formatId } from "../../src/domain/ids.ts";
import { createDomainWorld, type DomainWorld } from "../support/domain.ts";

let world: DomainWorld;
afterEach(() => world?.close());

async function refusal(promise: Promise<unknown> | unknown): Promise<DomainError> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof DomainError) return error;
    throw error;
  }
  throw new Error("expected a refusal, got a result");
}

const names = async (w: DomainWorld, as = w.owner) =>
  (await w.domain.services.listServices(as, {})).items.map((s) => s.serviceName);

describe("names and tenants", () => {
  test("service_name_taken for a second service of one name in a tenant; another tenant may use it", async () => {
    world = await createDomainWorld();
    await world.createService("billing");
    expect((await refusal(world.createService("billing"))).code).toBe("service_name_taken");
    // Case-sensitive: a different name.
    await world.createService("Billing");
    const other = await world.otherTenant();
    await world.createService("billing", other);
    expect(await names(world)).toEqual(expect.arrayContaining(["billing", "Billing"]));
    expect(await names(world, other)).toEqual(["billing"]);
  });

  test("invalid_request for an empty or over-long name; nothing created", async () => {
    world = await createDomainWorld();
    for (const name of ["", "   ", "x".repeat(256)]) {
      expect({ name, code: (await refusal(world.createService(name))).code }).toEqual({
        name,
        code: "invalid_request",
      });
    }
    expect(await names(world)).toEqual([]);
  });

  test("another tenant's service is not_found for get, update, rotate and delete, and stays as it was", async () => {
    world = await createDomainWorld();
    const service = await world.createService("billing");
    const other = await world.otherTenant();
    const { services } = world.domain;
    const attempts = [
      services.getService(other, service.id),
      services.updateService(other, service.id, { isMonitored: false }, null),
      services.rotateSigningSecret(other, service.id, null),
      services.deleteService(other, service.id, null),
    ];
    for (const attempt of attempts) expect((await refusal(attempt)).code).toBe("not_found");
    const kept = await services.getService(world.owner, service.id);
    expect(kept.isMonitored).toBe(true);
    expect(kept.secretRotatedAt).toBeNull();
    expect((await world.ingest(service, "{}")).duplicate).toBe(false);
  });

  test("service_name_immutable for a rename", async () => {
    world = await createDomainWorld();
    const service = await world.createService("billing");
    const error = await refusal(
      world.domain.services.updateService(world.owner, service.id, { serviceName: "payments" }, null),
    );
    expect(error.code).toBe("service_name_immutable");
    expect(await names(world)).toEqual(["billing"]);
  });
});

describe("the list", () => {
  test("shows a created service at once, its pause at once, and no longer a deleted one", async () => {
    world = await createDomainWorld();
    const { services } = world.domain;
    expect(await names(world)).toEqual([]); // the empty list is now held
    const service = await world.createService("billing");
    expect(await names(world)).toEqual(["billing"]);
    await services.updateService(world.owner, service.id, { isMonitored: false }, null);
    expect((await services.listServices(world.owner, {})).items.map((s) => s.isMonitored)).toEqual([false]);
    await services.deleteService(world.owner, service.id, null);
    expect(await names(world)).toEqual([]);
  });

  test("a PATCH that changes nothing keeps updated_at", async () => {
    world = await createDomainWorld();
    const service = await world.createService("billing");
    const before = await world.domain.services.getService(world.owner, service.id);
    world.clock.advance(5_000);
    const after = await world.domain.services.updateService(world.owner, service.id, { isMonitored: true }, null);
    expect(after.updatedAt).toBe(before.updatedAt);
    world.clock.advance(5_000);
    const paused = await world.domain.services.updateService(world.owner, service.id, { isMonitored: false }, null);
    expect(paused.updatedAt).toBe(before.updatedAt + 10_000);
  });
});

describe("signing secrets", () => {
  test("the secret is handed out once: the stored record holds only its sealed form and a prefix", async () => {
    world = await createDomainWorld();
    const { record, signingSecret } = await world.domain.services.createService(
      world.owner,
      { serviceName: "billing" },
      null,
    );
    const stored = await world.domain.services.getService(world.owner, formatId("svc", record.id));
    expect(JSON.stringify(stored)).not.toContain(signingSecret);
    expect(signingSecret.startsWith(stored.signingSecretPrefix)).toBe(true);
  });

  test("after a rotation the new secret verifies at once and the old one until the grace window ends", async () => {
    world = await createDomainWorld({ INTAKE_ROTATION_GRACE_SECONDS: "3600" });
    const service = await world.createService("billing");
    const rotated = await world.domain.services.rotateSigningSecret(world.owner, service.id, null);
    const fresh = { id: service.id, secret: rotated.signingSecret };
    expect(rotated.record.previousSecretExpiresAt).toBe(world.clock.now() + 3_600_000);

    expect((await world.ingest(fresh, '{"new":1}')).duplicate).toBe(false);
    world.clock.advance(3_600_000 - 1_000);
    expect((await world.ingest(service, '{"old":1}')).duplicate).toBe(false);
    world.clock.advance(1_000);
    expect((await refusal(world.ingest(service, '{"old":2}'))).code).toBe("invalid_signature");
    expect((await world.ingest(fresh, '{"new":2}')).duplicate).toBe(false);
  });

  test("a second rotation inside the grace window retires the first secret at once", async () => {
    world = await createDomainWorld({ INTAKE_ROTATION_GRACE_SECONDS: "3600" });
    const original = await world.createService("billing");
    const first = await world.domain.services.rotateSigningSecret(world.owner, original.id, null);
    const second = await world.domain.services.rotateSigningSecret(world.owner, original.id, null);
    expect((await refusal(world.ingest(original, "{}"))).code).toBe("invalid_signature");
    expect((await world.ingest({ id: original.id, secret: first.signingSecret }, '{"a":1}')).duplicate).toBe(false);
    expect((await world.ingest({ id: original.id, secret: second.signingSecret }, '{"b":1}')).duplicate).toBe(false);
  });
});

describe("deletion", () => {
  test("a deleted service's events are refused as from an unknown service, and its id is not_found", async () => {
    world = await createDomainWorld();
    const service = await world.createService("billing");
    await world.ingest(service, "{}"); // its signing material is now cached
    await world.domain.services.deleteService(world.owner, service.id, null);
    expect((await refusal(world.ingest(service, "{}"))).code).toBe("invalid_signature");
    expect((await refusal(world.domain.services.getService(world.owner, service.id))).code).toBe("not_found");
    expect((await refusal(world.domain.services.deleteService(world.owner, service.id, null))).code).toBe("not_found");
  });
});
