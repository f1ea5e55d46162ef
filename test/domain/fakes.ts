/**
 * Fakes for the domain tier: a store whose every call is counted (and that can hold a few
 * token rows), and a manual clock. Real adapters are tested by their own contract suites.
 */

import type { Store } from "../../src/domain/ports/store.ts";
import type { TenantRecord, TokenRecord } from "../../src/domain/types.ts";

export interface CountingStore {
  store: Store;
  /** `repo.method` → number of calls. */
  calls: Map<string, number>;
  total(): number;
  tokens: Map<string, TokenRecord>;
  tenants: Map<string, TenantRecord>;
  /** Every batch handed to tokens.touchLastUsed, in order. */
  touches: Array<ReadonlyArray<{ id: string; at: number }>>;
  /** Replaces tokens.touchLastUsed (e.g. to hang or fail). */
  setTouch(fn: (updates: ReadonlyArray<{ id: string; at: number }>) => Promise<void>): void;
  /** Replaces one repository method; the call is still counted. */
  override(repo: "tokens" | "tenants", method: string, fn: (...args: never[]) => unknown): void;
}

/**
 * A store that answers token and tenant lookups from maps and counts every call on every
 * repository; any method it does not implement throws, so an unexpected call cannot pass unseen.
 */
export function countingStore(): CountingStore {
  const calls = new Map<string, number>();
  const tokens = new Map<string, TokenRecord>();
  const tenants = new Map<string, TenantRecord>();
  const touches: CountingStore["touches"] = [];
  let touch = async (updates: ReadonlyArray<{ id: string; at: number }>) => {
    touches.push(updates.map((u) => ({ ...u })));
  };
  const impl: Record<string, Record<string, (...args: never[]) => unknown>> = {
    tokens: {
      findByDigest: async (digest: string) => [...tokens.values()].find((t) => t.digest === digest) ?? null,
      get: async (tenantId: string, id: string) => {
        const t = tokens.get(id);
        return t && t.tenantId === tenantId ? t : null;
      },
      insert: async (record: TokenRecord) => {
        if ([...tokens.values()].some((t) => t.prefix === record.prefix)) return "prefix_taken";
        tokens.set(record.id, { ...record });
        return "ok";
      },
      touchLastUsed: (updates: ReadonlyArray<{ id: string; at: number }>) => touch(updates),
    },
    tenants: {
      get: async (id: string) => tenants.get(id) ?? null,
      countNamed: async (name: string) => [...tenants.values()].filter((t) => t.name === name).length,
    },
  };
  const count = (name: string) => calls.set(name, (calls.get(name) ?? 0) + 1);
  const repo = (name: string) =>
    new Proxy(
      {},
      {
        get(_target, method: string) {
          return (...args: never[]) => {
            count(`${name}.${method}`);
            const fn = impl[name]?.[method];
            if (!fn) throw new Error(`unexpected store call ${name}.${method}`);
            return fn(...args);
          };
        },
      },
    );
  const store = {
    dialect: "sqlite",
    tenants: repo("tenants"),
    tokens: repo("tokens"),
    services: repo("services"),
    events: repo("events"),
    createTenant: async () => {
      count("createTenant");
      throw new Error("unexpected store call createTenant");
    },
    migrate: async () => {},
    close: async () => {},
  } as unknown as Store;
  return {
    store,
    calls,
    total: () => [...calls.values()].reduce((a, b) => a + b, 0),
    tokens,
    tenants,
    touches,
    setTouch(fn) {
      touch = fn;
    },
    override(repoName, method, fn) {
      const methods = impl[repoName] as Record<string, (...args: never[]) => unknown>;
      methods[method] = fn;
    },
  };
}
