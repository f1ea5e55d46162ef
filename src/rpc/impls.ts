/**
 * Every rpc implementation, built once by the composition root: what the Connect routers
 * serve. Each is a thin adapter (protobuf ↔ the domain's calls); the REST operations
 * (src/gateway/) are the other, over the same domain calls and the same admission policy.
 * `RpcImpls` is derived from this factory: "go to definition" on any of its members lands on
 * the implementation, not on generated code.
 */

import type { Audit } from "../domain/audit.ts";
import type { Feed } from "../domain/feed.ts";
import type { IncidentHandling } from "../domain/incident-handling.ts";
import type { Ingest } from "../domain/ingest.ts";
import type { Onboarding } from "../domain/onboarding.ts";
import type { EventSearch } from "../domain/search.ts";
import type { Services } from "../domain/services.ts";
import type { ServiceStatsReader } from "../domain/stats.ts";
import type { Tenants } from "../domain/tenant.ts";
import type { Tokens } from "../domain/tokens.ts";
import type { Logger } from "../logger.ts";
import { createApiTokenServiceImpl } from "./api-tokens.ts";
import { createAuditImpl } from "./audit.ts";
import { createFeedImpl } from "./feed.ts";
import { createHealthImpl } from "./health.ts";
import { createIncidentImpl } from "./incidents.ts";
import { createIngestImpl } from "./ingest.ts";
import { createServiceRegistryImpl } from "./services.ts";
import { createSetupImpl } from "./setup.ts";
import { createTenantImpl } from "./tenant.ts";

export interface RpcImplsDeps {
  tokens: Tokens;
  onboarding: Onboarding;
  services: Services;
  tenants: Tenants;
  ingest: Ingest;
  feed: Feed;
  audit: Audit;
  incidents: IncidentHandling;
  search: EventSearch;
  serviceStats: ServiceStatsReader;
  logger: Logger;
  /** The deployed version the health probe reports. */
  version: string;
}

export function createRpcImpls(deps: RpcImplsDeps) {
  const { logger } = deps;
  return {
    apiTokens: createApiTokenServiceImpl({ tokens: deps.tokens, logger }),
    services: createServiceRegistryImpl({ services: deps.services, serviceStats: deps.serviceStats, logger }),
    tenant: createTenantImpl({ tenants: deps.tenants, logger }),
    setup: createSetupImpl({ onboarding: deps.onboarding, logger }),
    health: createHealthImpl(deps.version),
    /** Ingest, ListEvents, GetEvent and SearchEvents. */
    ingest: createIngestImpl({ ingest: deps.ingest, feed: deps.feed, search: deps.search, logger }),
    /** ListFeed and StreamFeed. */
    feed: createFeedImpl({ feed: deps.feed, logger }),
    audit: createAuditImpl({ audit: deps.audit, logger }),
    incidents: createIncidentImpl({ incidents: deps.incidents, logger }),
  };
}

/** The rpc implementations: what the routers serve. */
export type RpcImpls = ReturnType<typeof createRpcImpls>;
