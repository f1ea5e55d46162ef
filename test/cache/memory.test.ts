import { describe, expect, test } from "bun:test";
import { createMemoryCache } from "../../src/cache/memory.ts";
import { counter, createClock, runCacheContract } from "./cache-contract.ts";

runCacheContract("memory", async ({ now, observer }) => createMemoryCache({ now, observer }));

describe("memory cache", () => {
  const options = { ttlMs: 1_000, negativeTtlMs: 100, maxEntries: 10 };

  test('kind is "memory"', () => {
    expect(createMemoryCache().kind).toBe("memory");
  });

  test("getOrLoad loads again once the entry is past ttlMs", async () => {
    const clock = createClock();
    const tokens = createMemoryCache({ now: clock.now }).namespace<string>("tokens", options);
    const loader = counter(() => "v");
    await tokens.getOrLoad("k", loader.load);
    clock.advance(1_000);
    await tokens.getOrLoad("k", loader.load);
    expect(loader.calls).toBe(2);
  });

  test("a negative entry is reloaded once past negativeTtlMs, long before ttlMs", async () => {
    const clock = createClock();
    const tokens = createMemoryCache({ now: clock.now }).namespace<string>("tokens", options);
    let exists = false;
    const loader = counter(() => (exists ? "v" : null));
    expect(await tokens.getOrLoad("k", loader.load)).toBeNull();
    exists = true;
    clock.advance(100);
    expect(await tokens.getOrLoad("k", loader.load)).toBe("v");
    expect(loader.calls).toBe(2);
  });

  test("a reloaded key moves to the young end and outlives older keys under eviction", async () => {
    const clock = createClock();
    const tokens = createMemoryCache({ now: clock.now }).namespace<string>("tokens", { ...options, maxEntries: 2 });
    await tokens.getOrLoad("a", async () => "a");
    await tokens.getOrLoad("b", async () => "b");
    await tokens.invalidate("a");
    await tokens.getOrLoad("a", async () => "a2");
    await tokens.getOrLoad("c", async () => "c");
    expect(tokens.peek("b")).toBeUndefined();
    expect(tokens.peek("a")).toBe("a2");
    expect(tokens.peek("c")).toBe("c");
  });

  test("an entry stays bounded: 10 000 distinct keys leave at most maxEntries behind", async () => {
    const tokens = createMemoryCache().namespace<number>("tokens", options);
    for (let i = 0; i < 10_000; i++) await tokens.getOrLoad(`k${i}`, async () => i);
    let held = 0;
    for (let i = 0; i < 10_000; i++) if (tokens.peek(`k${i}`) !== undefined) held++;
    expect(held).toBe(options.maxEntries);
  });
});
