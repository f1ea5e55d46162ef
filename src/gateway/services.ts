/** The service registry's operations (docs/api.md "Services"). */

import { formatId } from "../domain/ids.ts";
import { andThen } from "../domain/maybe.ts";
import type { Page } from "../domain/pagination.ts";
import type { ServiceSummary } from "../domain/types.ts";
import { onceEach } from "../rpc/memo.ts";
import { serviceJson } from "../shapes/services.ts";
import { isoOfMs } from "../shapes/time.ts";
import { json, jsonText } from "./http.ts";
import { caller, type Operation, type OperationDeps, operation } from "./operation.ts";
import {
  CreatedService,
  CreateServiceBody,
  IdParams,
  listOf,
  PageQuery,
  SecretRotation,
  ServiceRecordSchema,
  UpdateServiceBody,
} from "./schemas.ts";

export function serviceOperations({ domain }: OperationDeps): Operation[] {
  const { services } = domain;
  /**
   * A tenant's list is held whole (domain/services.ts): its pages hand back the same summaries,
   * and a held list's first page is the same Page object, until a change replaces them. So each
   * listed service's text, and each such page's, is made once (rpc/memo.ts).
   */
  const serviceText = onceEach((service: ServiceSummary) => JSON.stringify(serviceJson(service)));
  const pageText = onceEach(
    (page: Page<ServiceSummary>): string =>
      `{"data":[${page.items.map(serviceText).join(",")}],"next_cursor":${JSON.stringify(page.nextCursor)}}`,
  );
  const tag = "Services";
  return [
    operation({
      method: "POST",
      path: "/v1/services",
      rpc: "intake.v1.ServiceRegistryService/CreateService",
      body: "json",
      errors: { 409: ["service_name_taken"] },
      schemas: { body: CreateServiceBody, response: { 201: CreatedService } },
      doc: {
        summary: "Register a service (its signing secret is shown only here)",
        description:
          "Registers a sender. `service_name` is unique within the tenant (409 service_name_taken) and immutable. The signing secret is in `signing_secret` of this answer only; `is_monitored` defaults to true.",
        tag,
      },
      handle: async (call) => {
        const { record, signingSecret } = await services.createService(
          caller(call),
          {
            serviceName: call.body.service_name,
            isMonitored: call.body.is_monitored,
            incidentAutoResolveSeconds: call.body.incident_auto_resolve_seconds,
            signatureScheme: call.body.signature_scheme,
          },
          call.x.requestId,
        );
        return json(201, { ...serviceJson(record), signing_secret: signingSecret });
      },
    }),
    operation({
      method: "GET",
      path: "/v1/services",
      rpc: "intake.v1.ServiceRegistryService/ListServices",
      native: "page",
      errors: { 400: ["invalid_request"] },
      schemas: { query: PageQuery, response: { 200: listOf(ServiceRecordSchema, "ServiceList") } },
      doc: {
        summary: "List services, newest first",
        description:
          "A page of the tenant's services, newest first, each secret only as its prefix; follow `next_cursor` for the next page.",
        tag,
      },
      // No async layer of its own while the list is held (domain/maybe.ts).
      handle: (call) =>
        andThen(services.listServices(caller(call), { limit: call.query.limit, cursor: call.query.cursor }), (page) =>
          jsonText(200, pageText(page)),
        ),
    }),
    operation({
      method: "GET",
      path: "/v1/services/:id",
      rpc: "intake.v1.ServiceRegistryService/GetService",
      native: "none",
      errors: { 404: ["not_found"] },
      schemas: { params: IdParams, response: { 200: ServiceRecordSchema } },
      doc: {
        summary: "Get a service (the secret only as its prefix)",
        description:
          "A service of the caller's tenant by its svc_ id; any other id, or another tenant's service, is 404.",
        tag,
      },
      handle: async (call) => json(200, serviceJson(await services.getService(caller(call), call.params.id))),
    }),
    operation({
      method: "PATCH",
      path: "/v1/services/:id",
      rpc: "intake.v1.ServiceRegistryService/UpdateService",
      body: "json",
      errors: { 400: ["service_name_immutable"], 404: ["not_found"] },
      schemas: { params: IdParams, body: UpdateServiceBody, response: { 200: ServiceRecordSchema } },
      doc: {
        summary:
          "Pause or resume ingestion (is_monitored), set or reset the service's ingest rate limit, switch its signature_scheme",
        description:
          "Changes only the fields sent; an empty body or `{}` changes nothing and answers the record. `is_monitored: false` pauses ingestion (ingest answers 409 ingestion_paused); `rate_limit` sets the service's own limit, null returns it to the deployment's default; `signature_scheme` switches how senders sign (the secret keeps working). Naming `service_name` is 400 service_name_immutable.",
        tag,
      },
      exists: (call) => services.getService(caller(call), call.params.id),
      handle: async (call) => {
        const { body } = call;
        const limit = body.rate_limit;
        const record = await services.updateService(
          caller(call),
          call.params.id,
          {
            isMonitored: body.is_monitored,
            incidentAutoResolveSeconds: body.incident_auto_resolve_seconds,
            signatureScheme: body.signature_scheme,
            rateLimit:
              limit === undefined || limit === null
                ? limit
                : { limit: limit.limit, windowSeconds: limit.window_seconds },
            // Any value, even null, is refused: the name is immutable.
            serviceName: "service_name" in body ? String(body.service_name) : undefined,
          },
          call.x.requestId,
        );
        return json(200, serviceJson(record));
      },
    }),
    operation({
      method: "DELETE",
      path: "/v1/services/:id",
      rpc: "intake.v1.ServiceRegistryService/DeleteService",
      errors: { 404: ["not_found"] },
      schemas: { params: IdParams, response: {} },
      doc: {
        summary: "Delete a service and its events (owner only in role_based mode)",
        description: "Deletes the service, its signing secrets and its stored events; its id is then 404 everywhere.",
        tag,
        responses: { 204: { description: "Deleted" } },
      },
      handle: async (call) => {
        await services.deleteService(caller(call), call.params.id, call.x.requestId);
        return new Response(null, { status: 204 });
      },
    }),
    operation({
      method: "POST",
      path: "/v1/services/:id/secret_rotations",
      rpc: "intake.v1.ServiceRegistryService/RotateSigningSecret",
      errors: { 404: ["not_found"] },
      schemas: { params: IdParams, response: { 201: SecretRotation } },
      doc: {
        summary: "Rotate the signing secret; the previous one verifies for the grace window",
        description:
          "Issues a new signing secret, shown in this answer only. Signatures made with the previous secret keep verifying until `previous_secret_expires_at`. No request body.",
        tag,
      },
      handle: async (call) => {
        const { record, signingSecret } = await services.rotateSigningSecret(
          caller(call),
          call.params.id,
          call.x.requestId,
        );
        return json(201, {
          service_id: formatId("svc", record.id),
          signing_secret: signingSecret,
          signing_secret_prefix: record.signingSecretPrefix,
          rotated_at: isoOfMs(record.secretRotatedAt as number),
          previous_secret_expires_at: isoOfMs(record.previousSecretExpiresAt as number),
        });
      },
    }),
  ];
}
