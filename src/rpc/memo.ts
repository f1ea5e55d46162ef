/**
 * Answers built from records the cache holds: a cache hit hands back the same record object
 * every time, so a message or a JSON text made from it is made once and remembered for as long
 * as the record lives (a WeakMap: a changed record is a new object, so a new answer). For
 * GET /v1/tenant (bench scenario 2) and the service list pages (bench scenario 11).
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
