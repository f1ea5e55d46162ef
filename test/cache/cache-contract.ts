/**
 * The behaviour every `Cache` adapter owes its callers, run against each adapter
 * (memory always, Redis when reachable). Everything here is observable through the port
 * alone; adapter-specific rules live in the adapter's own test file.
 */
import { afterEach, describe, expect, test } from "bun:test";
import type { Cache, NamespaceOptions } from "../../src/domain/ports/cache.ts";
import { type CacheLookupResult, noopObserver, type Observer } from "../../src/domain/ports/observer.ts";

export interface ContractClock {
  now: () => number;
  advance(ms: number): void;
}

export type MakeCache = (options: { now: () => number; observer: Observer }) => Promise<Cache>;

/** An observer that records the cache lookups it is told of, as `namespace:result`. */
export function lookupRecorder(): { observer: Observer; lookups: string[] } {
  const lookups: string[] = [];
  return {
    lookups,
    observer: {
      ...noopObserver,
      cacheLookups(namespace: string) {
        const record = (result: CacheLookupResult) => () => lookups.push(`${namespace}:${result}`);
        return {
          hit: record("hit"),
          negative_hit: record("negative_hit"),
          shared_hit: record("shared_hit"),
          miss: record("miss"),
        };
      },
    },
  };
}

export function createClock(start = 1_700_000_000_000): ContractClock {
  let time = start;
  return {
    now: () => time,
    advance(ms) {
      time += ms;
    },
  };
}

/** A promise with its settle functions, to hold a `load` open while the test acts. */
export function deferred<T>(): { promise: Promise<T>; resolve(value: T): void; reject(error: unknown): void } {
  let resolve!: (value: T) => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

/** A `load` that counts its calls. */
export function counter<V>(produce: () => V | null | Promise<V | null>): {
  load: () => Promise<V | null>;
  readonly calls: number;
} {
  let calls = 0;
  return {
    load: async () => {
      calls += 1;
      return produce();
    },
    get calls() {
      return calls;
    },
  };
}

const OPTIONS: NamespaceOptions = { ttlMs: 60_000, negativeTtlMs: 5_000, maxEntries: 100 };

interface Token {
  id: string;
  scope: string;
}

export function runCacheContract(name: string, makeCache: MakeCache): void {
  describe(`${name}: cache contract`, () => {
    const open: Cache[] = [];
    let clock = createClock();

    const make = async (observer: Observer = noopObserver) => {
      clock = createClock();
      const cache = await makeCache({ now: clock.now, observer });
      open.push(cache);
      return cache;
    };

    afterEach(async () => {
      await Promise.all(open.splice(0).map((cache) => cache.close()));
    });

    test("lookups are counted where they were answered: miss per fill, hit or negative_hit in process, a peek miss not at all", async () => {
      const { observer, lookups } = lookupRecorder();
      const tokens = (await make(observer)).namespace<Token>("tok", OPTIONS);
      expect(tokens.peek("d1")).toBeUndefined();
      await tokens.getOrLoad("d1", async () => ({ id: "tok_1", scope: "read_only" }));
      await tokens.getOrLoad("d1", async () => null);
      tokens.peek("d1");
      await tokens.getOrLoad("gone", async () => null);
      tokens.peek("gone");
      await tokens.getOrLoad("gone", async () => null);
      expect(lookups).toEqual(["tok:miss", "tok:hit", "tok:hit", "tok:miss", "tok:negative_hit", "tok:negative_hit"]);
    });

    test("peek answers undefined for a key this instance never held", async () => {
      const tokens = (await make()).namespace<Token>("tokens", OPTIONS);
      expect(tokens.peek("nope")).toBeUndefined();
    });

    test("getOrLoad loads once, then serves the cached value to getOrLoad and peek", async () => {
      const tokens = (await make()).namespace<Token>("tokens", OPTIONS);
      const loader = counter<Token>(() => ({ id: "tok_1", scope: "read_only" }));
      expect(await tokens.getOrLoad("d1", loader.load)).toEqual({ id: "tok_1", scope: "read_only" });
      expect(await tokens.getOrLoad("d1", loader.load)).toEqual({ id: "tok_1", scope: "read_only" });
      expect(tokens.peek("d1")).toEqual({ id: "tok_1", scope: "read_only" });
      expect(loader.calls).toBe(1);
    });

    test("peek is synchronous (returns a value, not a promise)", async () => {
      const tokens = (await make()).namespace<Token>("tokens", OPTIONS);
      await tokens.getOrLoad("d1", async () => ({ id: "tok_1", scope: "read_only" }));
      const seen = tokens.peek("d1");
      expect(seen).not.toBeInstanceOf(Promise);
      expect(seen).toEqual({ id: "tok_1", scope: "read_only" });
    });

    test("a null load is cached negatively: peek answers null and load is not called again", async () => {
      const tokens = (await make()).namespace<Token>("tokens", OPTIONS);
      const loader = counter<Token>(() => null);
      expect(await tokens.getOrLoad("garbage", loader.load)).toBeNull();
      expect(await tokens.getOrLoad("garbage", loader.load)).toBeNull();
      expect(tokens.peek("garbage")).toBeNull();
      expect(loader.calls).toBe(1);
    });

    test("peek treats a positive entry past ttlMs as absent", async () => {
      const tokens = (await make()).namespace<Token>("tokens", { ...OPTIONS, ttlMs: 1_000 });
      await tokens.getOrLoad("d1", async () => ({ id: "tok_1", scope: "read_only" }));
      clock.advance(999);
      expect(tokens.peek("d1")).toEqual({ id: "tok_1", scope: "read_only" });
      clock.advance(1);
      expect(tokens.peek("d1")).toBeUndefined();
    });

    test("peek treats a negative entry past negativeTtlMs as absent", async () => {
      const tokens = (await make()).namespace<Token>("tokens", { ...OPTIONS, negativeTtlMs: 200 });
      await tokens.getOrLoad("garbage", async () => null);
      clock.advance(199);
      expect(tokens.peek("garbage")).toBeNull();
      clock.advance(1);
      expect(tokens.peek("garbage")).toBeUndefined();
    });

    test("negativeTtlMs 0 caches no negative entry", async () => {
      const tokens = (await make()).namespace<Token>("tokens", { ...OPTIONS, negativeTtlMs: 0 });
      const loader = counter<Token>(() => null);
      await tokens.getOrLoad("garbage", loader.load);
      expect(tokens.peek("garbage")).toBeUndefined();
      await tokens.getOrLoad("garbage", loader.load);
      expect(loader.calls).toBe(2);
    });

    test("past maxEntries the oldest entry is evicted first", async () => {
      const tokens = (await make()).namespace<Token>("tokens", { ...OPTIONS, maxEntries: 3 });
      for (const key of ["a", "b", "c", "d"]) {
        await tokens.getOrLoad(key, async () => ({ id: key, scope: "read_only" }));
      }
      expect(tokens.peek("a")).toBeUndefined();
      expect(tokens.peek("b")).toEqual({ id: "b", scope: "read_only" });
      expect(tokens.peek("d")).toEqual({ id: "d", scope: "read_only" });
    });

    test("single-flight: concurrent getOrLoad of one key share one load call", async () => {
      const tokens = (await make()).namespace<Token>("tokens", OPTIONS);
      const gate = deferred<Token | null>();
      const loader = counter<Token>(() => gate.promise);
      const callers = Array.from({ length: 10 }, () => tokens.getOrLoad("d1", loader.load));
      gate.resolve({ id: "tok_1", scope: "read_only" });
      const results = await Promise.all(callers);
      expect(results.every((r) => r?.id === "tok_1")).toBe(true);
      expect(loader.calls).toBe(1);
    });

    test("single-flight is per key: different keys load independently", async () => {
      const tokens = (await make()).namespace<Token>("tokens", OPTIONS);
      const loader = counter<Token>(() => ({ id: "x", scope: "read_only" }));
      await Promise.all([tokens.getOrLoad("a", loader.load), tokens.getOrLoad("b", loader.load)]);
      expect(loader.calls).toBe(2);
    });

    test("a rejecting load propagates to every waiting caller and caches nothing", async () => {
      const tokens = (await make()).namespace<Token>("tokens", OPTIONS);
      const gate = deferred<Token | null>();
      const started = deferred<void>();
      const load = () => {
        started.resolve();
        return gate.promise;
      };
      const first = tokens.getOrLoad("d1", load);
      const second = tokens.getOrLoad("d1", load);
      // Rejected only once the load holds the promise (a shared tier may consult Redis first).
      await started.promise;
      gate.reject(new Error("store down"));
      await expect(first).rejects.toThrow("store down");
      await expect(second).rejects.toThrow("store down");
      expect(tokens.peek("d1")).toBeUndefined();
      const loader = counter<Token>(() => ({ id: "tok_1", scope: "read_only" }));
      expect(await tokens.getOrLoad("d1", loader.load)).toEqual({ id: "tok_1", scope: "read_only" });
      expect(loader.calls).toBe(1);
    });

    test("a load that throws synchronously rejects getOrLoad and caches nothing", async () => {
      const tokens = (await make()).namespace<Token>("tokens", OPTIONS);
      const load = (): Promise<Token | null> => {
        throw new Error("boom");
      };
      await expect(tokens.getOrLoad("d1", load)).rejects.toThrow("boom");
      expect(tokens.peek("d1")).toBeUndefined();
    });

    test("invalidate drops the key: peek is undefined and the next getOrLoad loads afresh", async () => {
      const tokens = (await make()).namespace<Token>("tokens", OPTIONS);
      await tokens.getOrLoad("d1", async () => ({ id: "tok_1", scope: "read_write" }));
      await tokens.invalidate("d1");
      expect(tokens.peek("d1")).toBeUndefined();
      expect(await tokens.getOrLoad("d1", async () => ({ id: "tok_1", scope: "read_only" }))).toEqual({
        id: "tok_1",
        scope: "read_only",
      });
    });

    test("invalidate drops a negative entry too", async () => {
      const tokens = (await make()).namespace<Token>("tokens", OPTIONS);
      await tokens.getOrLoad("d1", async () => null);
      await tokens.invalidate("d1");
      expect(tokens.peek("d1")).toBeUndefined();
      expect(await tokens.getOrLoad("d1", async () => ({ id: "tok_1", scope: "read_only" }))).toEqual({
        id: "tok_1",
        scope: "read_only",
      });
    });

    test("invalidate of a key nobody holds resolves", async () => {
      const tokens = (await make()).namespace<Token>("tokens", OPTIONS);
      await expect(tokens.invalidate("never-seen")).resolves.toBeUndefined();
    });

    test("no stale resurrection: a load in flight across invalidate is not cached; the next caller loads afresh", async () => {
      const tokens = (await make()).namespace<Token>("tokens", OPTIONS);
      const gate = deferred<Token | null>();
      const inFlight = tokens.getOrLoad("d1", () => gate.promise);
      await tokens.invalidate("d1");
      // A caller arriving after the invalidation must not join the pre-invalidation load.
      const fresh = counter<Token>(() => ({ id: "tok_1", scope: "revoked" }));
      const after = tokens.getOrLoad("d1", fresh.load);
      gate.resolve({ id: "tok_1", scope: "read_write" });
      // The in-flight caller may still see its own (pre-invalidation) value...
      expect(await inFlight).toEqual({ id: "tok_1", scope: "read_write" });
      // ...but nobody after the invalidation does.
      expect(await after).toEqual({ id: "tok_1", scope: "revoked" });
      expect(fresh.calls).toBe(1);
      expect(tokens.peek("d1")).toEqual({ id: "tok_1", scope: "revoked" });
    });

    test("no stale resurrection: a load finishing after invalidate leaves the key absent", async () => {
      const tokens = (await make()).namespace<Token>("tokens", OPTIONS);
      const gate = deferred<Token | null>();
      const inFlight = tokens.getOrLoad("d1", () => gate.promise);
      await tokens.invalidate("d1");
      gate.resolve({ id: "tok_1", scope: "read_write" });
      await inFlight;
      expect(tokens.peek("d1")).toBeUndefined();
      const fresh = counter<Token>(() => ({ id: "tok_1", scope: "revoked" }));
      expect(await tokens.getOrLoad("d1", fresh.load)).toEqual({ id: "tok_1", scope: "revoked" });
      expect(fresh.calls).toBe(1);
    });

    test("namespaces are isolated: the same key in two namespaces holds two values", async () => {
      const cache = await make();
      const tokens = cache.namespace<Token>("tokens", OPTIONS);
      const services = cache.namespace<{ secret: string }>("services", OPTIONS);
      await tokens.getOrLoad("k", async () => ({ id: "tok_1", scope: "read_only" }));
      expect(services.peek("k")).toBeUndefined();
      await services.getOrLoad("k", async () => ({ secret: "s" }));
      await services.invalidate("k");
      expect(tokens.peek("k")).toEqual({ id: "tok_1", scope: "read_only" });
    });

    test("namespace() with the same name and options shares one store", async () => {
      const cache = await make();
      const a = cache.namespace<Token>("tokens", OPTIONS);
      const b = cache.namespace<Token>("tokens", { ...OPTIONS });
      await a.getOrLoad("d1", async () => ({ id: "tok_1", scope: "read_only" }));
      expect(b.peek("d1")).toEqual({ id: "tok_1", scope: "read_only" });
    });

    test("namespace() refuses a name reused with other options, and invalid options", async () => {
      const cache = await make();
      cache.namespace<Token>("tokens", OPTIONS);
      expect(() => cache.namespace<Token>("tokens", { ...OPTIONS, ttlMs: 1 })).toThrow();
      expect(() => cache.namespace<Token>("bad:name", OPTIONS)).toThrow();
      expect(() => cache.namespace<Token>("zero", { ...OPTIONS, ttlMs: 0 })).toThrow();
      expect(() => cache.namespace<Token>("zero", { ...OPTIONS, maxEntries: 0 })).toThrow();
    });

    test("close resolves", async () => {
      const cache = await makeCache({ now: clock.now, observer: noopObserver });
      await expect(cache.close()).resolves.toBeUndefined();
    });
  });
}
