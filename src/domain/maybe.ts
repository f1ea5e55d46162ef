/**
 * A value now, or a promise of it. The hot reads (a cached token, a cached tenant) answer
 * synchronously: each async layer between the edge and the cache costs a promise and its
 * microtask turns on every authenticated GET (bench scenario 2).
 */
export type Maybe<T> = T | Promise<T>;

/** `f` applied to the value now, or when it arrives: no promise when it is already here. */
export function andThen<T, U>(value: Maybe<T>, f: (value: T) => Maybe<U>): Maybe<U> {
  return value instanceof Promise ? value.then(f) : f(value);
}
