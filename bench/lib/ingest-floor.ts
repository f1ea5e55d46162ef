/**
 * The ingest floor's handler (bench scenarios 3 and 4): the least work any server must do to
 * answer a signed ingest the way the contract requires — read the body, verify its Stripe v1
 * signature, check that it is a UTF-8 JSON object, and answer 202 only once it is committed,
 * in groups. Each step is Intake's own function for it (the domain's `verifySignature` and
 * `checkPayload`, the group committer, the store adapter); nothing else of Intake: no routing,
 * service lookup, cache, secret sealing, protobuf, ids, notifier or framework. One service,
 * fixed at start; any path. Served by bench/floor-ingest.ts; called in process by
 * bench/inproc.ts (scenario ingestfloor).
 */
import { createGroupCommitter } from "../../src/domain/group-commit.ts";
import { checkPayload } from "../../src/domain/ingest.ts";
import type { InsertEventResult, NewEvent, Store } from "../../src/domain/ports/store.ts";
import { verifySignature } from "../../src/domain/signing.ts";

export interface IngestFloor {
  fetch(request: Request): Promise<Response>;
  /** Commits whatever is queued (before the store is closed). */
  drain(): Promise<void>;
}

export async function ingestFloor(options: {
  store: Store;
  /** Raw 32 hex. */
  serviceId: string;
  secret: string;
  toleranceSeconds: number;
}): Promise<IngestFloor> {
  const { store, serviceId, toleranceSeconds } = options;
  const secrets = [options.secret];
  // The feed places each event in its tenant's order, as Intake's ingest does.
  const tenantId = (await store.services.getById(serviceId))?.tenantId;
  if (tenantId === undefined) throw new Error(`ingest floor: no service ${serviceId}`);
  const committer = createGroupCommitter<NewEvent, InsertEventResult>({
    maxBatch: 256,
    maxDelayMs: 1,
    flush: (events) => store.events.insertBatch(events),
  });
  const headers = { "content-type": "application/json; charset=utf-8" };

  function isJsonObject(body: Uint8Array): boolean {
    try {
      checkPayload(body);
      return true;
    } catch {
      return false;
    }
  }

  return {
    async fetch(request) {
      if (request.method !== "POST") return new Response('{"status":"ok"}', { headers }); // readiness
      const payload = new Uint8Array(await request.arrayBuffer());
      const signature = request.headers.get("x-service-signature");
      const now = Date.now();
      if (!verifySignature(signature, payload, secrets, Math.floor(now / 1000), toleranceSeconds).ok) {
        return new Response(null, { status: 401 });
      }
      if (!isJsonObject(payload)) return new Response(null, { status: 400 });
      const id = Bun.randomUUIDv7().replaceAll("-", "");
      await committer.submit({ id, tenantId, serviceId, receivedAt: now, idempotencyKey: null, payload });
      return new Response(JSON.stringify({ id: `evt_${id}`, received_at: new Date(now).toISOString() }), {
        status: 202,
        headers,
      });
    },
    drain: () => committer.drain(),
  };
}
