/**
 * What each RPC method demands of its caller. The routers' gate and interceptor (Connect,
 * gRPC-Web, gRPC) and the REST edge (each operation names its RPC method) admit through this one
 * table, so the two surfaces cannot drift.
 */
import type { AccessRule } from "../domain/access.ts";

export type MethodPolicy = { bearer: false } | ({ bearer: true } & AccessRule);

const read: MethodPolicy = { bearer: true, mutating: false, ownerOnly: false };
const write: MethodPolicy = { bearer: true, mutating: true, ownerOnly: false };
const owner: MethodPolicy = { bearer: true, mutating: true, ownerOnly: true };
const open: MethodPolicy = { bearer: false };
const adminRead: MethodPolicy = { bearer: true, mutating: false, ownerOnly: false, adminOnly: true };

export const POLICY = {
  "intake.v1.ApiTokenService/CreateApiToken": write,
  "intake.v1.ApiTokenService/GetApiToken": read,
  "intake.v1.ApiTokenService/ListApiTokens": read,
  "intake.v1.ApiTokenService/RevokeApiToken": write,
  "intake.v1.ServiceRegistryService/CreateService": write,
  "intake.v1.ServiceRegistryService/GetService": read,
  "intake.v1.ServiceRegistryService/ListServices": read,
  "intake.v1.ServiceRegistryService/UpdateService": write,
  "intake.v1.ServiceRegistryService/DeleteService": owner,
  "intake.v1.ServiceRegistryService/RotateSigningSecret": write,
  "intake.v1.ServiceRegistryService/GetServiceStats": read,
  "intake.v1.TenantService/GetTenant": read,
  "intake.v1.TenantService/UpdateTenant": owner,
  // Senders authenticate with the service's signature, not a bearer token.
  "intake.v1.IngestService/Ingest": open,
  "intake.v1.IngestService/ListEvents": read,
  "intake.v1.IngestService/GetEvent": read,
  "intake.v1.IngestService/SearchEvents": read,
  "intake.v1.EventFeedService/ListFeed": read,
  "intake.v1.EventFeedService/StreamFeed": read,
  "intake.v1.HealthService/GetHealth": open,
  // The setup code in the request is the credential (docs/console.md).
  "intake.v1.SetupService/RedeemSetupCode": open,
  // Owner or admin in role_based mode; any token in flat mode (docs/api.md, "Audit log").
  "intake.v1.AuditService/ListAuditEvents": adminRead,
  // By hand: read_write, any role (SPEC §17).
  "intake.v1.IncidentService/ListIncidents": read,
  "intake.v1.IncidentService/GetIncident": read,
  "intake.v1.IncidentService/ListIncidentEvents": read,
  "intake.v1.IncidentService/AcknowledgeIncident": write,
  "intake.v1.IncidentService/ResolveIncident": write,
  "intake.v1.IncidentService/StreamIncidentChanges": read,
  // The standard gRPC health protocol on the h2c listener: probes carry no credentials.
  "grpc.health.v1.Health/Check": open,
  "grpc.health.v1.Health/Watch": open,
  // Server reflection on the h2c listener: the schema is the public .proto contract, and
  // grpcurl / buf curl ask for it before they know a token is needed.
  "grpc.reflection.v1.ServerReflection/ServerReflectionInfo": open,
  "grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo": open,
} as const satisfies Record<string, MethodPolicy>;

export type MethodName = keyof typeof POLICY;
