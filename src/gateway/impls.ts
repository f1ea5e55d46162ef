import type { ApiTokenService } from "../../gen/intake/v1/api_tokens_pb.ts";
import type { HealthService } from "../../gen/intake/v1/health_pb.ts";
import type { ServiceRegistryService } from "../../gen/intake/v1/services_pb.ts";
import type { TenantService } from "../../gen/intake/v1/tenant_pb.ts";
import type { Impl } from "../rpc/impl.ts";
import type { IngestImpl } from "../rpc/ingest.ts";

/** The rpc implementations the gateway translates onto, called in-process. */
export interface Impls {
  apiTokens: Impl<typeof ApiTokenService>;
  services: Impl<typeof ServiceRegistryService>;
  tenant: Impl<typeof TenantService>;
  health: Impl<typeof HealthService>;
  /** Ingest and ListEvents, plus the early checks the ingest route makes before reading a body. */
  ingest: IngestImpl;
}
