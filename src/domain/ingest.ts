/**
 * Ingest (docs/ingest.md): signed events from senders, durably stored, and listed back verbatim.
 *
 * Check order: 413 (size) → 401 invalid_signature → 429 rate_limited → 409 ingestion_paused →
 * 400 invalid_request. The rate limit is taken only once the signature verifies, so an unsigned
 * flood cannot spend a service's quota (docs/rate-limits.md).
 * Every 401 carries the same code and message, whatever went wrong (unknown service, missing,
 * malformed, stale or wrong signature), so the answer is no oracle for ids or secrets.
 */

import type { Logger } from "../logger.ts";
import { DomainError, invalid, notFound } from "./errors.ts";
import { createGroupCommitter } from "./group-commit.ts";
import { formatId, parseId } from "./ids.ts";
import { eventType, parseAlert, streamChange } from "./incidents.ts";
import {
  checkPayload,
  IDEMPOTENCY_KEY,
  invalidSignature,
  OUTCOMES,
  SignatureRefused,
  VERDICT_REASONS,
} from "./ingest-checks.ts";
import { type Page, type PageRequest, positionPageQuery, toPositionPage } from "./pagination.ts";
import type { CacheNamespace } from "./ports/cache.ts";
import type { FeedNotifier } from "./ports/notifier.ts";
import { noopObserver, type Observer } from "./ports/observer.ts";
import type { RateDecision, RateLimit, RateLimiter } from "./ports/rate-limiter.ts";
import type { InsertEventResult, NewEvent, Store } from "./ports/store.ts";
import type { Tracer } from "./ports/tracer.ts";
import { RateLimitedError } from "./rate-limits.ts";

export { checkPayload, SignatureRefused } from "./ingest-checks.ts";

import type { Sealer } from "./sealing.ts";
import { type SigningMaterial, signingMaterial } from "./services.ts";
import { type StandardWebhooksHeaders, verify } from "./signing.ts";
import { noopStatsRecorder, type StatsRecorder } from "./stats.ts";
import type { Clock, EventRecord, Principal } from "./types.ts";

export type IngestCommitMode = "group" | "per_request";

export interface IngestDeps {
  store: Store;
  /** The namespace services.ts invalidates on PATCH, rotation and DELETE. */
  signingCache: CacheNamespace<SigningMaterial>;
  sealer: Sealer;
  clock: Clock;
  newId: () => string;
  logger: Logger;
  /** INTAKE_SIGNATURE_TOLERANCE_SECONDS. */
  toleranceSeconds: number;
  /** INTAKE_MAX_EVENT_BYTES. */
  maxEventBytes: number;
  /** INTAKE_INGEST_COMMIT: `per_request` commits each event alone (the benchmark's baseline). */
  commit?: IngestCommitMode;
  /** Decides a service's ingest rate limit; needed once any limit is configured. */
  rateLimiter?: RateLimiter;
  /** INTAKE_RATE_LIMIT_INGEST: for services without their own `rate_limit`; null = none. */
  defaultRateLimit?: RateLimit | null;
  /** Outcomes, signature failure reasons and commits, for metrics (default: none). */
  observer?: Observer;
  /** Every attempt's outcome per service, for its stats (§22; counted in memory, never a store call). */
  stats?: StatsRecorder;
  /** Told, right after each commit, which tenants' feeds grew (wakes feed readers). */
  notifier?: FeedNotifier;
  /** Traces of the commit each request waits for (docs/tracing.md); absent or null: none. */
  tracer?: Tracer | null;
  /** Group commit tuning; the defaults suit SQLite and PostgreSQL alike. */
  maxBatch?: number;
  maxDelayMs?: number;
}

export interface IngestInput {
  /** As sent: `svc_` + 32 hex. */
  serviceId: string;
  /** The X-Service-Signature value; empty or absent is a 401 like any other bad signature. */
  signature: string | null | undefined;
  /** The Standard Webhooks headers (§19), for a service of that scheme. */
  webhook?: StandardWebhooksHeaders | undefined;
  /** The exact bytes received. */
  payload: Uint8Array;
  idempotencyKey?: string | null | undefined;
  /**
   * Told the rate-limit decision as soon as it is taken (only for a limited service), so the
   * edge can put the RateLimit fields on whatever the answer turns out to be.
   */
  onRateLimit?: ((decision: RateDecision) => void) | undefined;
}

/** A service an event may be sent to, found by `admitService` before the body is read. */
export interface AdmittedService {
  readonly rawId: string;
  readonly material: SigningMaterial;
}

export interface IngestResult {
  /** Raw 32 hex (the event's, or the first event's for a duplicate). */
  id: string;
  receivedAt: number;
  duplicate: boolean;
  /**
   * §17, an accepted alert event only: its dedup key and the incident it opened or changed
   * (raw id; null when an acknowledge or resolve found no open incident). Null otherwise.
   */
  incident: { dedupKey: string; incidentId: string | null } | null;
}

/** Opened secrets kept in process; the bound is far above any realistic service count per instance. */
const OPENED_SECRETS_MAX = 10_000;
const DEFAULT_MAX_BATCH = 256;
const DEFAULT_MAX_DELAY_MS = 1;

type Outcome = InsertEventResult | { kind: "failed"; error: unknown };

export function createIngest(deps: IngestDeps) {
  const { store, signingCache, sealer, clock, logger } = deps;
  const observer = deps.observer ?? noopObserver;

  const stats = deps.stats ?? noopStatsRecorder;

  /**
   * Counts a refused attempt (and the reason of a 401), against its service's stats too when
   * the service id is known, then hands the error back to throw.
   */
  function refused(error: unknown, serviceId?: string): unknown {
    const outcome = error instanceof DomainError ? (OUTCOMES[error.code] ?? "internal_error") : "internal_error";
    observer.ingestOutcome(outcome);
    const reason = error instanceof SignatureRefused ? error.reason : undefined;
    if (reason) observer.signatureFailure(reason);
    if (serviceId !== undefined) stats.record(serviceId, outcome, reason);
    return error;
  }
  const { rateLimiter } = deps;
  const defaultRateLimit = deps.defaultRateLimit ?? null;

  // Opening a sealed secret is an AES-GCM decryption per request otherwise. Bound to service
  // AND sealed value: the AAD binds a ciphertext to its service, and a shared cache tier must
  // not be able to make one service's ciphertext verify for another, so a hit counts only for
  // the service it was opened for. Keyed by the sealed text alone, which is the cached entry's
  // own string on every request (its hash is computed once), not a key built per request.
  const opened = new Map<string, { serviceId: string; secret: string }>();
  function openSecret(serviceId: string, sealed: string): string {
    const hit = opened.get(sealed);
    if (hit !== undefined && hit.serviceId === serviceId) return hit.secret;
    const secret = sealer.open(sealed, serviceId);
    if (hit === undefined && opened.size >= OPENED_SECRETS_MAX) {
      const oldest = opened.keys().next();
      if (!oldest.done) opened.delete(oldest.value);
    }
    opened.set(sealed, { serviceId, secret });
    return secret;
  }

  async function loadMaterial(rawId: string): Promise<SigningMaterial | null> {
    const record = await store.services.getById(rawId);
    return record ? signingMaterial(record) : null;
  }

  /** Verification material by raw id; synchronous when this instance has it cached. */
  function material(rawId: string): SigningMaterial | null | Promise<SigningMaterial | null> {
    const hit = signingCache.peek(rawId);
    if (hit !== undefined) return hit;
    return signingCache.getOrLoad(rawId, () => loadMaterial(rawId));
  }

  /**
   * The service an event names, found before its body is read (docs/ingest.md allows it):
   * garbage ids and unknown services cost no body transfer, and `ingestInto` then verifies
   * against what was found, without parsing the id or looking the service up again. The 401
   * for one that cannot be ingested into. Synchronous on a cache hit.
   */
  function admitService(serviceId: string): AdmittedService | Promise<AdmittedService> {
    const rawId = parseId("svc", serviceId);
    if (rawId === null) throw refused(invalidSignature("unknown_service"));
    let found: ReturnType<typeof material>;
    try {
      found = material(rawId);
    } catch (error) {
      throw refused(error, serviceId);
    }
    if (found instanceof Promise) {
      return found.then(
        (m) => {
          if (m === null) throw refused(invalidSignature("unknown_service"));
          return { rawId, material: m };
        },
        (error: unknown) => {
          throw refused(error, serviceId);
        },
      );
    }
    if (found === null) throw refused(invalidSignature("unknown_service"));
    return { rawId, material: found };
  }

  /**
   * The 413 of a body the edge stopped reading at the limit, counted like any other refusal
   * (in the service's stats when the edge names the service).
   */
  function payloadTooLarge(serviceId?: string): DomainError {
    return refused(
      new DomainError("payload_too_large", `The body is larger than ${deps.maxEventBytes} bytes.`),
      serviceId,
    ) as DomainError;
  }

  /**
   * A failed batch is retried one event at a time unless the store is unavailable: one bad
   * event (its service deleted since it verified, so its foreign key fails) must not take
   * down the other senders' events that happened to share its transaction.
   */
  async function insertBatch(events: NewEvent[]): Promise<InsertEventResult[]> {
    // A monotonic timer, not the injected clock: this measures the store, not event time.
    const started = performance.now();
    const results = await store.events.insertBatch(events);
    observer.commitBatch(events.length, (performance.now() - started) / 1000);
    return results;
  }

  async function flush(events: NewEvent[]): Promise<Outcome[]> {
    const outcomes = await insert(events);
    if (deps.notifier) {
      // After the commit, before the senders are answered; readers are woken on the next turn.
      const grown = new Set<string>();
      outcomes.forEach((outcome, i) => {
        if (outcome.kind === "inserted") grown.add((events[i] as NewEvent).tenantId);
      });
      if (grown.size > 0) deps.notifier.publish([...grown]);
    }
    return outcomes;
  }

  async function insert(events: NewEvent[]): Promise<Outcome[]> {
    try {
      return await insertBatch(events);
    } catch (error) {
      if (events.length === 1 || (error instanceof DomainError && error.code === "unavailable")) {
        return events.map(() => ({ kind: "failed", error }));
      }
      logger.warn("ingest batch failed; retrying its events one by one", { events: events.length, error });
      const outcomes: Outcome[] = [];
      for (const event of events) {
        try {
          const [result] = await insertBatch([event]);
          outcomes.push(result ?? { kind: "failed", error: new Error("insertBatch returned no result") });
        } catch (single) {
          outcomes.push({ kind: "failed", error: single });
        }
      }
      return outcomes;
    }
  }

  const committer =
    deps.commit === "per_request"
      ? null
      : createGroupCommitter<NewEvent, Outcome>({
          maxBatch: deps.maxBatch ?? DEFAULT_MAX_BATCH,
          maxDelayMs: deps.maxDelayMs ?? DEFAULT_MAX_DELAY_MS,
          flush,
          tracer: deps.tracer ?? null,
        });

  /** INTAKE_INGEST_COMMIT=per_request: the event's own commit (traced as a batch of one). */
  async function flushAlone(event: NewEvent): Promise<Outcome[]> {
    const tracer = deps.tracer;
    const wait = tracer ? tracer.commitWait() : null;
    if (!tracer) return flush([event]);
    try {
      const outcomes = await tracer.commit([wait], 1, () => flush([event]));
      if (wait !== null) tracer.endCommitWait(wait);
      return outcomes;
    } catch (error) {
      if (wait !== null) tracer.endCommitWait(wait, error);
      throw error;
    }
  }

  /** Turns a store failure into what the sender should see. */
  async function failure(event: NewEvent, error: unknown): Promise<never> {
    if (error instanceof DomainError) throw error;
    // The service was deleted between verification and commit: to the sender it is now
    // simply unknown. Anything else is ours (500, logged by the rpc layer).
    const service = await store.services.getById(event.serviceId).catch(() => undefined);
    if (service === null) throw invalidSignature("unknown_service");
    throw error;
  }

  async function commit(event: NewEvent): Promise<IngestResult> {
    const outcome = committer ? await committer.submit(event) : (await flushAlone(event))[0];
    if (!outcome) throw new Error("ingest: the store returned no result for the event");
    if (outcome.kind === "failed") return failure(event, outcome.error);
    if (outcome.kind === "duplicate")
      return { id: outcome.id, receivedAt: outcome.receivedAt, duplicate: true, incident: null };
    const change = outcome.incident;
    if (change === undefined) return { id: event.id, receivedAt: event.receivedAt, duplicate: false, incident: null };
    const stream = streamChange(change.change);
    if (stream !== null) observer.incidentChange(stream);
    return {
      id: event.id,
      receivedAt: event.receivedAt,
      duplicate: false,
      incident: { dedupKey: change.dedupKey, incidentId: change.incidentId },
    };
  }

  function accept(input: IngestInput, rawId: string, found: SigningMaterial | null): Promise<IngestResult> {
    if (found === null) throw invalidSignature("unknown_service");
    const now = clock.now();
    // The previous secret verifies only while now < its expiry; the cache entry may outlive it.
    const secrets = found.secrets
      .filter((s) => s.expiresAt === null || now < s.expiresAt)
      .map((s) => openSecret(rawId, s.sealed));
    const verdict = verify(
      { scheme: found.scheme ?? "stripe", secrets },
      { signature: input.signature, webhook: input.webhook, body: input.payload },
      Math.floor(now / 1000),
      deps.toleranceSeconds,
    );
    if (!verdict.ok) throw invalidSignature(VERDICT_REASONS[verdict.reason]);
    const limit = found.rateLimit ?? defaultRateLimit;
    if (limit && rateLimiter) {
      const decision = rateLimiter.take("ingest", rawId, limit);
      if (decision instanceof Promise) return decision.then((d) => admitted(input, rawId, found, now, d));
      return admitted(input, rawId, found, now, decision);
    }
    return persist(input, rawId, found, now);
  }

  function admitted(
    input: IngestInput,
    rawId: string,
    found: SigningMaterial,
    now: number,
    decision: RateDecision,
  ): Promise<IngestResult> {
    input.onRateLimit?.(decision);
    if (!decision.allowed) {
      observer.rateLimited("ingest");
      throw new RateLimitedError(decision);
    }
    return persist(input, rawId, found, now);
  }

  /** The checks after the signature and the rate limit (409, then 400), then the commit. */
  function persist(input: IngestInput, rawId: string, found: SigningMaterial, now: number): Promise<IngestResult> {
    if (!found.isMonitored) {
      throw new DomainError("ingestion_paused", "Ingestion is paused for this service (is_monitored is false).");
    }
    let key = input.idempotencyKey ?? null;
    if (key !== null && !IDEMPOTENCY_KEY.test(key)) {
      throw invalid("Idempotency-Key", "must be 1 to 255 visible ASCII characters");
    }
    // §19: a verified webhook-id is the event's idempotency key; an Idempotency-Key sent too must agree.
    const webhookId = found.scheme === "standard_webhooks" ? input.webhook?.id : null;
    if (webhookId) {
      if (key !== null && key !== webhookId)
        throw invalid("Idempotency-Key", "must equal webhook-id when both are sent");
      key = webhookId;
    }
    const body = checkPayload(input.payload);
    const id = deps.newId();
    // §17: a broken alert event is a 400 here, before anything is stored.
    const alert = parseAlert(body, formatId("evt", id));
    return commit({
      id,
      tenantId: found.tenantId,
      serviceId: rawId,
      receivedAt: now,
      idempotencyKey: key,
      payload: input.payload,
      type: eventType(body),
      alert,
    });
  }

  async function attempt(input: IngestInput): Promise<IngestResult> {
    if (input.payload.length > deps.maxEventBytes) {
      throw new DomainError("payload_too_large", `The body is larger than ${deps.maxEventBytes} bytes.`);
    }
    const rawId = parseId("svc", input.serviceId);
    if (rawId === null) throw invalidSignature("unknown_service");
    const found = material(rawId);
    return accept(input, rawId, found instanceof Promise ? await found : found);
  }

  /** Counts the attempt by its outcome. */
  async function counted(serviceId: string, attempted: () => Promise<IngestResult>): Promise<IngestResult> {
    let result: IngestResult;
    try {
      result = await attempted();
    } catch (error) {
      throw refused(error, serviceId);
    }
    const outcome = result.duplicate ? "duplicate" : "accepted";
    observer.ingestOutcome(outcome);
    stats.record(serviceId, outcome);
    return result;
  }

  /**
   * Resolves once the event is committed (durable), or with the first event of its
   * Idempotency-Key. Every attempt is counted once, by its outcome.
   */
  function ingest(input: IngestInput): Promise<IngestResult> {
    return counted(input.serviceId, () => attempt(input));
  }

  /** `ingest` for a service `admitService` found (the REST edge, which admits before reading the body). */
  function ingestInto(service: AdmittedService, input: IngestInput): Promise<IngestResult> {
    return counted(input.serviceId, async () => {
      if (input.payload.length > deps.maxEventBytes) {
        throw new DomainError("payload_too_large", `The body is larger than ${deps.maxEventBytes} bytes.`);
      }
      return accept(input, service.rawId, service.material);
    });
  }

  async function listEvents(principal: Principal, serviceId: string, request: PageRequest): Promise<Page<EventRecord>> {
    const rawId = parseId("svc", serviceId);
    // Another tenant's service is masked as not found.
    if (rawId === null || !(await store.services.get(principal.tenantId, rawId))) throw notFound("service");
    const scope = { list: `events:${rawId}`, tenantId: principal.tenantId };
    const { limit, before } = positionPageQuery(request, scope);
    const rows = await store.events.list(rawId, { limit: limit + 1, ...(before !== undefined && { before }) });
    return toPositionPage(rows, limit, scope);
  }

  /** Commits whatever is queued; call before closing the store. */
  async function close(): Promise<void> {
    await committer?.drain();
  }

  return { ingest, admitService, ingestInto, payloadTooLarge, listEvents, close };
}

export type Ingest = ReturnType<typeof createIngest>;
