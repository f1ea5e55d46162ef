/** What both dialects' §18 search statements share (sqlite/event-search.ts, postgres/event-search.ts). */
import { ID_TIME_SLACK_MS, idFloor } from "../domain/ids.ts";
import type { EventSearchQuery } from "../domain/ports/store.ts";

/** Above every position: the upper bound when no event was received after the range. */
const NO_POSITION_ABOVE = "9223372036854775807";

/**
 * The position range a page walks (docs/search.md, "Time bounds"), as clauses on `e.position`:
 * positions are in commit order, ids in receipt order, and a batch commits within
 * ID_TIME_SLACK_MS of its receipt, so
 * - every event received at or after `receivedAfter` lies above the position of the last
 *   event received before `receivedAfter - slack`;
 * - every event received before `receivedBefore` lies below the position of the first event
 *   received at or after `receivedBefore + slack`.
 * Each is one primary-key seek (`id` is a UUIDv7 of the receipt time), whatever the tenant.
 * The exact `received_at` filters still decide; these only keep the walk inside the range,
 * on the (…, position) index the page already walks (`column`: SQLite's FTS5 rowid, which
 * is the position, when `q` leads). `before` (the cursor) joins the upper bound in one
 * `least` so the index range takes both.
 */
export function positionBounds(
  query: EventSearchQuery,
  param: (value: unknown) => string,
  least: "min" | "least",
  column = "e.position",
): string[] {
  const clauses: string[] = [];
  if (query.receivedAfter !== undefined) {
    const floor = param(idFloor(query.receivedAfter - ID_TIME_SLACK_MS));
    clauses.push(`${column} > coalesce((select position from events where id < ${floor} order by id desc limit 1), 0)`);
  }
  const uppers: string[] = [];
  if (query.before !== undefined) uppers.push(param(query.before));
  if (query.receivedBefore !== undefined) {
    const floor = param(idFloor(query.receivedBefore + ID_TIME_SLACK_MS));
    uppers.push(
      `coalesce((select position from events where id >= ${floor} order by id limit 1), ${NO_POSITION_ABOVE})`,
    );
  }
  if (uppers.length === 1) clauses.push(`${column} < ${uppers[0]}`);
  if (uppers.length === 2) clauses.push(`${column} < ${least}(${uppers.join(", ")})`);
  return clauses;
}
