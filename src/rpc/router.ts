/**
 * The RPC surface for internal callers: all five intake.v1 services on one ConnectRouter,
 * admitted by the same gate and interceptor on every protocol (Connect, gRPC-Web, gRPC).
 */
import type { JsonReadOptions, JsonWriteOptions } from "@bufbuild/protobuf";
import {
  type ConnectRouter,
  type ConnectRouterOptions,
  createConnectRouter,
  type HandlerContext,
} from "@connectrpc/connect";
import { ApiTokenService } from "../../gen/intake/v1/api_tokens_pb.ts";
import { AuditService } from "../../gen/intake/v1/audit_pb.ts";
import { EventFeedService } from "../../gen/intake/v1/feed_pb.ts";
import { HealthService } from "../../gen/intake/v1/health_pb.ts";
import { IncidentService } from "../../gen/intake/v1/incidents_pb.ts";
import { IngestService } from "../../gen/intake/v1/ingest_pb.ts";
import { ServiceRegistryService } from "../../gen/intake/v1/services_pb.ts";
import { SetupService } from "../../gen/intake/v1/setup_pb.ts";
import { TenantService } from "../../gen/intake/v1/tenant_pb.ts";
import { createRequestIdGenerator } from "../domain/ids.ts";
import type { Limits } from "../domain/limits.ts";
import type { Tracer } from "../domain/ports/tracer.ts";
import type { Admission } from "./admission.ts";
import { requestIdKey } from "./context.ts";
import type { RpcImpls } from "./impls.ts";
import { tracingInterceptor } from "./tracing.ts";

/** The intake.v1 services, by their fully-qualified names (what grpc.health.v1 Check accepts). */
export const RPC_SERVICE_NAMES = [
  ApiTokenService.typeName,
  ServiceRegistryService.typeName,
  TenantService.typeName,
  IngestService.typeName,
  HealthService.typeName,
  SetupService.typeName,
  EventFeedService.typeName,
  AuditService.typeName,
  IncidentService.typeName,
] as const;

/**
 * Connect JSON: an unknown field is an error, as it is a 400 on the REST surface (docs/api.md),
 * so a typo'd field never silently does nothing. Implicit-presence fields are always written
 * (`"isMonitored": false`, `"data": []`), so a curl caller sees every field the REST form has.
 * The binary format keeps protobuf's usual rule (unknown fields skipped): that is how a client
 * built from a newer .proto keeps working against an older server.
 */
export const RPC_JSON_OPTIONS: Partial<JsonReadOptions & JsonWriteOptions> = {
  ignoreUnknownFields: false,
  alwaysEmitImplicit: true,
};

export interface Protocols {
  /** Plain gRPC needs HTTP/2 trailers: only on the h2c listener (Bun.serve's h2 drops them). */
  grpc: boolean;
}

export interface RpcRouterDeps {
  impls: RpcImpls;
  admission: Admission;
  /** Management messages are held to the REST body limit; an Ingest message to the event limit. */
  limits: Limits;
  /** Traces (docs/tracing.md): the interceptor naming each call's span; null or absent when off. */
  tracer?: Tracer | null;
}

/**
 * Every call gets a request id and answers with it in `x-request-id`, on every protocol: the one
 * the main port's gateway already generated for the HTTP request, else (the gRPC listener, an
 * in-process transport) a fresh one. Audit events name it.
 */
function requestIdStamp(): (context: HandlerContext) => void {
  const newRequestId = createRequestIdGenerator();
  return (context) => {
    let requestId = context.values.get(requestIdKey);
    if (requestId === undefined) {
      requestId = newRequestId();
      context.values.set(requestIdKey, requestId);
    }
    context.responseHeader.set("x-request-id", requestId);
  };
}

export function rpcRouterOptions(
  admission: Admission,
  limits: Limits,
  protocols: Protocols,
  tracer: Tracer | null = null,
): ConnectRouterOptions {
  const stamp = requestIdStamp();
  return {
    grpc: protocols.grpc,
    grpcWeb: true,
    connect: true,
    jsonOptions: RPC_JSON_OPTIONS,
    readMaxBytes: limits.managementBodyBytes,
    // The gate admits on the headers alone, before the message is read; the interceptor is
    // the same admission for anything that reaches an implementation without the gate.
    requestGate: (context) => {
      stamp(context);
      return admission.gate(context);
    },
    // Tracing outermost: admission's own lookups run under the call's span.
    interceptors: tracer ? [tracingInterceptor(tracer), admission.interceptor] : [admission.interceptor],
  };
}

/** Registers the intake.v1 services on a router; usable as connect-node's `routes`. */
export function registerServices(deps: RpcRouterDeps, protocols: Protocols): (router: ConnectRouter) => void {
  const { impls, limits } = deps;
  // connect-es reads the protocol switches of per-service options, not the router's, once any
  // options are given (its types omit them): repeated so gRPC stays off on the main port.
  const switches = { grpc: protocols.grpc, grpcWeb: true, connect: true };
  return (router) => {
    router
      .service(ApiTokenService, impls.apiTokens)
      .service(ServiceRegistryService, impls.services)
      .service(TenantService, impls.tenant)
      .service(HealthService, impls.health)
      .service(SetupService, impls.setup)
      .service(AuditService, impls.audit)
      .service(IncidentService, impls.incidents)
      // The payload rides as bytes: base64 in Connect JSON (4/3 larger), plus the signature,
      // ids and framing. The implementation still holds the payload to eventBytes itself.
      .service(IngestService, impls.ingest, {
        ...switches,
        readMaxBytes: Math.ceil((limits.eventBytes * 4) / 3) + 4096,
      })
      .service(EventFeedService, { listFeed: impls.feed.listFeed, streamFeed: impls.feed.streamFeed });
  };
}

export function createRpcRouter(deps: RpcRouterDeps, protocols: Protocols): ConnectRouter {
  const router = createConnectRouter(rpcRouterOptions(deps.admission, deps.limits, protocols, deps.tracer ?? null));
  registerServices(deps, protocols)(router);
  return router;
}
