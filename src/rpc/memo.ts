/**
 * Answers built from records the cache holds: a cache hit hands back the same record object
 * every time, so a message or a JSON text made from it is made once and remembered for as long
 * as the record lives (a WeakMap: a changed record is a new object, so a new answer). Measured
 * on GET /v1/tenant and the service list pages (bench/README.md).
 */
export function onceEach<K extends object, V>(make: (key: K) => V): (key: K) => V {
  const made = new WeakMap<K, V>();
  return (key) => {
    let value = made.get(key);
    if (value === undefined) {
      // Shared by every later answer: frozen, so no caller can change what the next one gets.
      value = Object.freeze(make(key));
      made.set(key, value);
    }
    return value;
  };
}
