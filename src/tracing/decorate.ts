/**
 * Child spans for the store and the cache (docs/tracing.md): decorators the composition root
 * puts around the Store port and the Cache port when tracing is on, so no repository or cache
 * adapter knows about traces. A span names the operation (`store tokens.findByDigest`,
 * `cache tok getOrLoad`), never its arguments.
 */
import type { Cache, CacheNamespace } from "../domain/ports/cache.ts";
import type { Store } from "../domain/ports/store.ts";
import type { Tracer } from "../domain/ports/tracer.ts";

type Methods = Record<string, unknown>;

/** The repository with each of its methods in a child span `store <repo>.<method>`. */
function tracedRepo<R extends object>(tracer: Tracer, system: string, repoName: string, repo: R): R {
  const traced: Methods = {};
  for (const [key, value] of Object.entries(repo)) {
    if (typeof value !== "function") {
      traced[key] = value;
      continue;
    }
    const operation = repoName === "" ? key : `${repoName}.${key}`;
    const attributes = { "db.system.name": system, "db.operation.name": operation };
    traced[key] = (...args: unknown[]) =>
      tracer.child(`store ${operation}`, attributes, async () =>
        (value as (...a: unknown[]) => unknown).apply(repo, args),
      );
  }
  return traced as R;
}

/** Every repository method and the store's own transactions, each in a child span of the active span. */
export function tracedStore(store: Store, tracer: Tracer): Store {
  const system = store.dialect === "postgres" ? "postgresql" : "sqlite";
  const traced: Methods = {};
  for (const [key, value] of Object.entries(store)) {
    if (key === "migrate" || key === "close") traced[key] = (value as () => Promise<void>).bind(store);
    else if (typeof value === "function") traced[key] = value;
    else if (value !== null && typeof value === "object") traced[key] = tracedRepo(tracer, system, key, value);
    else traced[key] = value;
  }
  const transactions = tracedRepo(tracer, system, "", {
    createTenant: store.createTenant.bind(store),
    redeemSetupCode: store.redeemSetupCode.bind(store),
  });
  return { ...(traced as unknown as Store), ...transactions, dialect: store.dialect };
}

function tracedNamespace<V>(tracer: Tracer, name: string, inner: CacheNamespace<V>): CacheNamespace<V> {
  const attributes = { "cache.namespace": name };
  return {
    // In-process and synchronous: no span (it is a map lookup).
    peek: (key) => inner.peek(key),
    getOrLoad: (key, load) => tracer.child(`cache ${name} getOrLoad`, attributes, () => inner.getOrLoad(key, load)),
    invalidate: (key) => tracer.child(`cache ${name} invalidate`, attributes, () => inner.invalidate(key)),
  };
}

/** The cache, its namespaces' lookups and invalidations each in a child span. */
export function tracedCache(cache: Cache, tracer: Tracer): Cache {
  return {
    kind: cache.kind,
    namespace: (name, options) => tracedNamespace(tracer, name, cache.namespace(name, options)),
    close: () => cache.close(),
  };
}
