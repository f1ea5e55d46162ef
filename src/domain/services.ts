/**
 * Services (senders) and their signing secrets (docs/api.md).
 */

import { type Audit, SERVICE_AUDITED_FIELDS, tokenOrigin } from "./audit.ts";
import { generateSigningSecret, secretPrefix } from "./credentials.ts";
import { DomainError, type FieldIssue, notFound } from "./errors.ts";
import { parseId } from "./ids.ts";
import { AUTO_RESOLVE_MAX_SECONDS, AUTO_RESOLVE_MIN_SECONDS } from "./incidents.ts";
import { andThen, type Maybe } from "./maybe.ts";
import { type CursorScope, type Page, type PageRequest, pageQuery, toPage } from "./pagination.ts";
import type { CacheNamespace } from "./ports/cache.ts";
import type { RateLimit } from "./ports/rate-limiter.ts";
import type { ServiceChanges, Store } from "./ports/store.ts";
import { rateLimitIssues } from "./rate-limits.ts";
import type { Sealer } from "./sealing.ts";
import {
  type Clock,
  type Principal,
  type ServiceRecord,
  type ServiceSummary,
  SIGNATURE_SCHEMES,
  type SignatureScheme,
} from "./types.ts";
import { checkName, throwIfIssues } from "./validation.ts";

/**
 * Per-service verification material, cached for ingest. Secrets stay sealed here (a shared
 * cache must never hold them in clear); ingest opens them in process.
 */
export interface SigningMaterial {
  tenantId: string;
  isMonitored: boolean;
  /**
   * The service's own ingest rate limit; null (or absent in an entry cached by an older
   * version) for the deployment's default.
   */
  rateLimit?: RateLimit | null;
  /** Current first; the previous one while its grace window lasts. */
  secrets: Array<{ sealed: string; expiresAt: number | null }>;
  /** How senders sign (§19); absent in an entry cached by an older version: `stripe`. */
  scheme?: SignatureScheme;
}

export function signingMaterial(record: ServiceRecord): SigningMaterial {
  const secrets: SigningMaterial["secrets"] = [{ sealed: record.secretCiphertext, expiresAt: null }];
  if (record.previousSecretCiphertext !== null && record.previousSecretExpiresAt !== null) {
    secrets.push({ sealed: record.previousSecretCiphertext, expiresAt: record.previousSecretExpiresAt });
  }
  return {
    tenantId: record.tenantId,
    isMonitored: record.isMonitored,
    rateLimit: ownRateLimit(record),
    secrets,
    scheme: record.signatureScheme,
  };
}

/** The service's own rate limit, or null when it uses the deployment's default. */
export function ownRateLimit(record: ServiceRecord): RateLimit | null {
  if (record.rateLimitLimit === null || record.rateLimitWindowSeconds === null) return null;
  return { limit: record.rateLimitLimit, windowSeconds: record.rateLimitWindowSeconds };
}

/**
 * A tenant's whole service list, newest first, as the list pages show it: held while it has at
 * most `SERVICE_LIST_HELD` services (`all: null` says it has more, and pages are read from the
 * store). docs/architecture.md, "A tenant's service list is held whole".
 */
export interface HeldServiceList {
  all: ServiceSummary[] | null;
}

/** Past this many services a tenant's pages are read from the store, not held whole. */
export const SERVICE_LIST_HELD = 200;

/**
 * First pages remembered per held list, by limit: the console and integrations ask for the
 * first page again and again, and the same Page object lets the layers above make its message
 * and its JSON text once (rpc/memo.ts). Bounded, since the limit is the caller's choice.
 */
const FIRST_PAGES_HELD = 4;
const firstPages = new WeakMap<readonly ServiceSummary[], Map<number, Page<ServiceSummary>>>();

export interface ServiceDeps {
  store: Store;
  /** Keyed by raw service id; every mutation invalidates before it answers. */
  signingCache: CacheNamespace<SigningMaterial>;
  /** Keyed by tenant id; every create, update, rotation and delete invalidates before it answers. */
  listCache: CacheNamespace<HeldServiceList>;
  sealer: Sealer;
  clock: Clock;
  newId: () => string;
  /** INTAKE_ROTATION_GRACE_SECONDS, in ms. */
  rotationGraceMs: number;
  audit: Audit;
}

/** A field added here must be listed in SERVICE_AUDITED_FIELDS (audit.ts) to land in `changes`. */
export interface ServiceUpdate {
  isMonitored?: boolean | undefined;
  serviceName?: string | undefined;
  /** A limit sets the service's own; null returns it to the deployment's default; undefined leaves it. */
  rateLimit?: RateLimit | null | undefined;
  /** §17: seconds without an alert event before an open incident auto-resolves; null = never. */
  incidentAutoResolveSeconds?: number | null | undefined;
  /** §19: how its senders sign; the secret is kept (docs/ingest.md, "Switching schemes"). */
  signatureScheme?: string | undefined;
}

/** §17: null, or a whole number of seconds from 60 to 2592000 (30 days). */
function checkAutoResolve(value: number | null | undefined, issues: FieldIssue[]): void {
  if (value === undefined || value === null) return;
  if (!Number.isInteger(value) || value < AUTO_RESOLVE_MIN_SECONDS || value > AUTO_RESOLVE_MAX_SECONDS) {
    issues.push({
      field: "incident_auto_resolve_seconds",
      message: `must be null or a whole number from ${AUTO_RESOLVE_MIN_SECONDS} to ${AUTO_RESOLVE_MAX_SECONDS}`,
    });
  }
}

/** A known `signature_scheme`, or an issue on `field`. */
function checkScheme(value: string, issues: FieldIssue[]): SignatureScheme {
  if ((SIGNATURE_SCHEMES as readonly string[]).includes(value)) return value as SignatureScheme;
  issues.push({ field: "signature_scheme", message: `must be one of: ${SIGNATURE_SCHEMES.join(", ")}` });
  return "stripe";
}

function sameLimit(a: RateLimit | null, b: RateLimit | null): boolean {
  return a === b || (a !== null && b !== null && a.limit === b.limit && a.windowSeconds === b.windowSeconds);
}

/** The index of the first service whose id sorts below `before` in a list sorted by id, descending. */
function firstBelow(all: readonly ServiceSummary[], before: string): number {
  let low = 0;
  let high = all.length;
  while (low < high) {
    const middle = (low + high) >>> 1;
    if ((all[middle] as ServiceSummary).id < before) high = middle;
    else low = middle + 1;
  }
  return low;
}

export function createServices(deps: ServiceDeps) {
  const { store, clock, sealer, audit, listCache } = deps;

  /** After a service changed: ingest's material and the tenant's held list, everywhere, before answering. */
  async function changed(tenantId: string, serviceId: string): Promise<void> {
    await Promise.all([deps.signingCache.invalidate(serviceId), listCache.invalidate(tenantId)]);
  }

  async function getService(principal: Principal, id: string): Promise<ServiceRecord> {
    const raw = parseId("svc", id);
    const record = raw ? await store.services.get(principal.tenantId, raw) : null;
    if (!record) throw notFound("service");
    return record;
  }

  /** `requestId` (here and below): the API call's, written into the audit event. */
  async function createService(
    principal: Principal,
    input: {
      serviceName: string;
      isMonitored?: boolean | undefined;
      signatureScheme?: string | undefined;
      incidentAutoResolveSeconds?: number | null | undefined;
    },
    requestId: string | null,
  ): Promise<{ record: ServiceRecord; signingSecret: string }> {
    const issues: FieldIssue[] = [];
    const serviceName = checkName("service_name", input.serviceName, issues);
    checkAutoResolve(input.incidentAutoResolveSeconds, issues);
    const signatureScheme = checkScheme(input.signatureScheme ?? "stripe", issues);
    throwIfIssues(issues);
    const now = clock.now();
    const id = deps.newId();
    const signingSecret = generateSigningSecret(signatureScheme);
    const record: ServiceRecord = {
      id,
      tenantId: principal.tenantId,
      serviceName,
      isMonitored: input.isMonitored ?? true,
      secretCiphertext: sealer.seal(signingSecret, id),
      signingSecretPrefix: secretPrefix(signingSecret),
      previousSecretCiphertext: null,
      previousSecretExpiresAt: null,
      secretRotatedAt: null,
      createdAt: now,
      updatedAt: now,
      rateLimitLimit: null,
      rateLimitWindowSeconds: null,
      incidentAutoResolveSeconds: input.incidentAutoResolveSeconds ?? null,
      signatureScheme,
    };
    const event = audit.record(principal.tenantId, tokenOrigin(principal, requestId), "service.create", {
      type: "service",
      id,
    });
    if ((await store.services.insert(record, event)) === "name_taken") {
      throw new DomainError("service_name_taken", `A service named "${serviceName}" already exists in this tenant.`);
    }
    await listCache.invalidate(principal.tenantId);
    return { record, signingSecret };
  }

  /** The tenant's whole list when it is small enough to hold (HeldServiceList); synchronous while held (maybe.ts). */
  function heldList(tenantId: string): Maybe<HeldServiceList | null> {
    const peeked = listCache.peek(tenantId);
    if (peeked !== undefined) return peeked;
    return listCache.getOrLoad(tenantId, async () => {
      const rows = await store.services.list(tenantId, { limit: SERVICE_LIST_HELD + 1 });
      return { all: rows.length > SERVICE_LIST_HELD ? null : rows };
    });
  }

  /** The first page of a held list: the same frozen Page while the list is held (FIRST_PAGES_HELD). */
  function firstPage(all: readonly ServiceSummary[], limit: number, scope: CursorScope): Page<ServiceSummary> {
    let pages = firstPages.get(all);
    if (!pages) {
      pages = new Map();
      firstPages.set(all, pages);
    }
    let page = pages.get(limit);
    if (!page) {
      page = toPage(all.slice(0, limit + 1), limit, scope);
      Object.freeze(page.items);
      Object.freeze(page);
      if (pages.size < FIRST_PAGES_HELD) pages.set(limit, page);
    }
    return page;
  }

  /**
   * Pages of a tenant with at most SERVICE_LIST_HELD services are cut from its held list (the
   * same order and keyset as the store's: ids descending, `before` exclusive); a larger tenant's
   * pages are read from the store. Synchronous while the list is held (maybe.ts).
   */
  function listServices(principal: Principal, request: PageRequest): Maybe<Page<ServiceSummary>> {
    const scope = { list: "services", tenantId: principal.tenantId };
    const { limit, before } = pageQuery(request, scope);
    return andThen(heldList(principal.tenantId), (held) => {
      if (held?.all) {
        const all = held.all;
        if (before === undefined) return firstPage(all, limit, scope);
        const start = firstBelow(all, before);
        return toPage(all.slice(start, start + limit + 1), limit, scope);
      }
      const rows = store.services.list(principal.tenantId, {
        limit: limit + 1,
        ...(before !== undefined && { before }),
      });
      return rows.then((r) => toPage(r, limit, scope));
    });
  }

  /** 404 is decided before the body (docs/api.md check order); `{}` changes nothing and is not audited. */
  async function updateService(
    principal: Principal,
    id: string,
    update: ServiceUpdate,
    requestId: string | null,
  ): Promise<ServiceRecord> {
    const current = await getService(principal, id);
    if (update.serviceName !== undefined) {
      throw new DomainError("service_name_immutable", "service_name cannot be changed after creation.");
    }
    const changes: ServiceChanges = {};
    if (update.rateLimit !== undefined) {
      if (update.rateLimit !== null) {
        throwIfIssues(rateLimitIssues("rate_limit", update.rateLimit.limit, update.rateLimit.windowSeconds));
      }
      if (!sameLimit(update.rateLimit, ownRateLimit(current))) changes.rateLimit = update.rateLimit;
    }
    if (update.isMonitored !== undefined && update.isMonitored !== current.isMonitored) {
      changes.isMonitored = update.isMonitored;
    }
    if (update.signatureScheme !== undefined) {
      const issues: FieldIssue[] = [];
      const scheme = checkScheme(update.signatureScheme, issues);
      throwIfIssues(issues);
      if (scheme !== current.signatureScheme) changes.signatureScheme = scheme;
    }
    const autoResolve = update.incidentAutoResolveSeconds;
    if (autoResolve !== undefined) {
      const issues: FieldIssue[] = [];
      checkAutoResolve(autoResolve, issues);
      throwIfIssues(issues);
      if (autoResolve !== current.incidentAutoResolveSeconds) changes.incidentAutoResolveSeconds = autoResolve;
    }
    // Nothing that differs: nothing written, updated_at kept.
    if (Object.keys(changes).length === 0) return current;
    const event = audit.updateRecord<ServiceRecord>(
      principal.tenantId,
      tokenOrigin(principal, requestId),
      "service.update",
      { type: "service", id: current.id },
      SERVICE_AUDITED_FIELDS,
    );
    const updated = await store.services.update(principal.tenantId, current.id, changes, clock.now(), event);
    if (!updated) throw notFound("service");
    await changed(principal.tenantId, current.id);
    return updated;
  }

  async function deleteService(principal: Principal, id: string, requestId: string | null): Promise<void> {
    const current = await getService(principal, id);
    const event = audit.record(principal.tenantId, tokenOrigin(principal, requestId), "service.delete", {
      type: "service",
      id: current.id,
    });
    if (!(await store.services.delete(principal.tenantId, current.id, event))) throw notFound("service");
    await changed(principal.tenantId, current.id);
  }

  /** The replaced secret verifies until now + grace; a second rotation inside the window retires the oldest. */
  async function rotateSigningSecret(
    principal: Principal,
    id: string,
    requestId: string | null,
  ): Promise<{ record: ServiceRecord; signingSecret: string }> {
    const current = await getService(principal, id);
    const now = clock.now();
    // The new secret in the form of the service's scheme, as a new service of it gets.
    const signingSecret = generateSigningSecret(current.signatureScheme);
    const event = audit.record(principal.tenantId, tokenOrigin(principal, requestId), "service.secret_rotate", {
      type: "service",
      id: current.id,
    });
    const updated = await store.services.rotateSecret(
      principal.tenantId,
      current.id,
      {
        ciphertext: sealer.seal(signingSecret, current.id),
        prefix: secretPrefix(signingSecret),
        rotatedAt: now,
        previousExpiresAt: now + deps.rotationGraceMs,
      },
      event,
    );
    if (!updated) throw notFound("service");
    await changed(principal.tenantId, current.id);
    return { record: updated, signingSecret };
  }

  return { createService, getService, listServices, updateService, deleteService, rotateSigningSecret };
}

export type Services = ReturnType<typeof createServices>;
