/**
 * A scratch PostgreSQL database for the plan tests (postgres-plans.test.ts,
 * postgres-incident-plans.test.ts): created and migrated in the caller's `beforeAll`, with
 * `tenants` tenants of `servicesPerTenant` services each, and dropped in its `afterAll`.
 * Statements are explained there, not run.
 */
import { afterAll, beforeAll } from "bun:test";
import { SQL } from "bun";
import type { Store } from "../../src/domain/ports/store.ts";
import type { ServiceRecord } from "../../src/domain/types.ts";
import { createPostgresStore } from "../../src/store/postgres/store.ts";
import { TEST_POSTGRES_URL } from "../support/services.ts";
import { auditOf, creationAudit, serviceRecord, tenantRecord, tokenRecord } from "./store-contract.ts";

export interface PlanDatabase {
  store: Store;
  /** A connection of the test's own, for seeding and EXPLAIN. */
  sql: SQL;
  tenants: string[];
  services: string[];
}

export function planDatabase(options: {
  prefix: string;
  tenants: number;
  servicesPerTenant: number;
  eventSearch?: boolean;
  service?: Partial<ServiceRecord>;
  /** Rows the tests need, written once the tenants and services exist. */
  seed: (db: PlanDatabase) => Promise<void>;
}): PlanDatabase {
  const name = `${options.prefix}_${crypto.randomUUID().replaceAll("-", "")}`;
  const admin = new SQL(TEST_POSTGRES_URL, { max: 1 });
  const url = new URL(TEST_POSTGRES_URL);
  url.pathname = `/${name}`;
  const db = { tenants: [], services: [] } as unknown as PlanDatabase;

  beforeAll(async () => {
    await admin.unsafe(`create database "${name}"`);
    db.store = createPostgresStore({ url: url.toString(), max: 2, eventSearch: options.eventSearch });
    await db.store.migrate();
    for (let t = 0; t < options.tenants; t++) {
      const tenant = tenantRecord();
      const owner = tokenRecord(tenant.id, { role: "owner" });
      await db.store.createTenant(tenant, owner, creationAudit(tenant, owner));
      db.tenants.push(tenant.id);
      for (let s = 0; s < options.servicesPerTenant; s++) {
        const service = serviceRecord(tenant.id, options.service);
        await db.store.services.insert(service, auditOf(tenant.id, "service.create", "service", service.id));
        db.services.push(service.id);
      }
    }
    db.sql = new SQL(url.toString(), { max: 1 });
    await options.seed(db);
  }, 120_000);

  afterAll(async () => {
    await db.sql?.close();
    await db.store?.close();
    await admin.unsafe(`drop database if exists "${name}" with (force)`);
    await admin.close();
  });

  return db;
}

/** The plan PostgreSQL would take for `text` with `params`, its lines joined by newlines. */
export async function explain(sql: SQL, text: string, params: unknown[]): Promise<string> {
  const rows = (await sql.unsafe(`explain ${text}`, params).values()) as string[][];
  return rows.map((row) => row[0]).join("\n");
}
