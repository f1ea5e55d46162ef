/** What both dialects' §18 search statements share (sqlite/event-search.ts, postgres/event-search.ts). */
import type { EventSearchQuery } from "../domain/ports/store.ts";

/**
 * A cursor inside the time range already bounds the page from above: the exclusive
 * `received_before` is then left out, so the index range starts at the cursor and a deep page
 * reads no rows above it (the planner takes one upper bound, and would take the range's).
 */
export function cursorBelow(query: EventSearchQuery): boolean {
  return (
    query.before !== undefined && query.receivedBefore !== undefined && query.before.receivedAt < query.receivedBefore
  );
}
