/**
 * Events on SQLite (the EventRepo port). Reads run on the store's connection through raw
 * prepared statements (event-reads.ts). Writes (inserts, retention deletes) on a file database
 * go through a worker's own connection (event-writer.ts) so that their fsync does not stop the
 * event loop; a :memory: (or "", temporary) database is private to this connection and cannot
 * be opened by another, so there they run here, through the very functions the worker runs.
 */
import type { EventRepo, InsertEventResult } from "../../domain/ports/store.ts";
import { mapError } from "./connection.ts";
import type { SqliteContext } from "./context.ts";
import { createEventExpiry, type ExpireEvents } from "./event-expire.ts";
import { createEventInsert, type InsertEvents } from "./event-insert.ts";
import { createEventReads, type EventReads } from "./event-reads.ts";
import { createEventSearch } from "./event-search.ts";
import { createEventWriter, type EventWriter } from "./event-writer.ts";

export interface SqliteEventRepo extends EventRepo {
  /** Lets the writer worker's in-flight batches settle and closes its connection. */
  closeWriter(): Promise<void>;
}

export function createEventRepo(ctx: SqliteContext, path: string): SqliteEventRepo {
  const { run } = ctx;
  // Created on the first write, i.e. after migrate().
  let writer: EventWriter | undefined;
  const inWorker = path !== ":memory:" && path !== "";
  const eventWriter = () => {
    writer ??= createEventWriter({ path, mapError });
    return writer;
  };
  // The event reads skip drizzle altogether (event-reads.ts); prepared on first use.
  let reads: EventReads | undefined;
  const eventReads = () => {
    ctx.refuseIfClosed();
    reads ??= createEventReads(ctx.client);
    return reads;
  };
  let search: ReturnType<typeof createEventSearch> | undefined;
  let insertEvents: InsertEvents | undefined;
  let expireEvents: ExpireEvents | undefined;

  return {
    insertBatch: (batch) => {
      if (inWorker) return eventWriter().insertBatch(batch);
      return run((): InsertEventResult[] => {
        ctx.refuseIfClosed();
        insertEvents ??= createEventInsert(ctx.client);
        return insertEvents(batch);
      });
    },

    list: (serviceId, query) => run(() => eventReads().list(serviceId, query)),
    feed: (tenantId, query) => run(() => eventReads().feed(tenantId, query)),
    feedHead: (tenantId) => run(() => eventReads().feedHead(tenantId)),
    get: (tenantId, id) => run(() => eventReads().get(tenantId, id)),
    search: (tenantId, query) =>
      run(() => {
        ctx.refuseIfClosed();
        search ??= createEventSearch(ctx.client);
        return search(tenantId, query);
      }),

    // A short IMMEDIATE transaction per batch: ingest waits for at most one batch's delete.
    // On a file database it runs in the writer worker, between the group commits.
    deleteOlderThan: (cutoff, batch) => {
      if (inWorker) return eventWriter().deleteOlderThan(cutoff, batch);
      return run((): number => {
        ctx.refuseIfClosed();
        expireEvents ??= createEventExpiry(ctx.client);
        return expireEvents(cutoff, batch);
      });
    },

    closeWriter: async () => {
      await writer?.close();
    },
  };
}
