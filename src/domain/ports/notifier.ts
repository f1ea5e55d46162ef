/**
 * Wake-ups for feed readers (docs/feed.md). A notification only says "this tenant's feed may
 * have grown": readers always read the store, so a lost or duplicated notification delays a
 * delivery (until the reader's next timed re-read), it never loses or repeats an event.
 */
export interface FeedNotifier {
  /**
   * Called after a commit: wakes this instance's readers of these tenants at once and tells
   * the other instances (best effort, never throws).
   */
  publish(tenantIds: readonly string[]): void;
  /** Calls `wake` on every publish for the tenant, here or elsewhere; returns the unsubscribe. */
  subscribe(tenantId: string, wake: () => void): () => void;
  /** Calls `wake` on every publish, for any tenant (the export, docs/export.md); returns the unsubscribe. */
  subscribeAll(wake: () => void): () => void;
  readonly kind: "local" | "redis" | "postgres";
  close(): Promise<void>;
}
