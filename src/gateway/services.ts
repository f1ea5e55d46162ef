import { create } from "@bufbuild/protobuf";
import { Elysia } from "elysia";
import {
  CreateServiceRequestSchema,
  DeleteServiceRequestSchema,
  GetServiceRequestSchema,
  ListServicesRequestSchema,
  type ListServicesResponse,
  RotateSigningSecretRequestSchema,
  type Service,
  UpdateServiceRequestSchema,
} from "../../gen/intake/v1/services_pb.ts";
import { andThen } from "../domain/maybe.ts";
import type { RpcImpls } from "../rpc/impls.ts";
import { onceEach } from "../rpc/memo.ts";
import { ELYSIA_SETTINGS, json } from "./http.ts";
import type { BodyRoute, Kit } from "./kit.ts";
import { okJson, type ReadRoute } from "./read-lane.ts";
import { bearerSecurity } from "./responses.ts";
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
import { iso, serviceJson } from "./serialize.ts";

/** A listed service's JSON text, once per message (rpc/services.ts answers the same ones while the list is held). */
const serviceText = onceEach((service: Service) => JSON.stringify(serviceJson(service)));

/**
 * Each listed message's text once (ListServices answers the same messages while the tenant's
 * list is held), joined into the page: the same bytes as JSON.stringify of it. A page's text is
 * made once per page message too: a held list's first pages are the same message each time.
 */
const servicePageText = onceEach((res: ListServicesResponse): string => {
  const data = res.data.map(serviceText).join(",");
  return `{"data":[${data}],"next_cursor":${JSON.stringify(res.nextCursor ?? null)}}`;
});

/** GET /v1/services and GET /v1/services/:id, for the gateway's routes and the read lane. */
export function serviceReads(impls: RpcImpls): { list: ReadRoute; get: ReadRoute } {
  const { services } = impls;
  return {
    list: {
      path: "/v1/services",
      method: "intake.v1.ServiceRegistryService/ListServices",
      query: "page",
      // No async layer of its own while the list is held (domain/maybe.ts).
      answer: (call, { limit, cursor }) =>
        andThen(services.listServices(create(ListServicesRequestSchema, { limit, cursor }), call), servicePageText),
    },
    get: {
      path: "/v1/services/:id",
      method: "intake.v1.ServiceRegistryService/GetService",
      query: "none",
      answer: (call, { id }) =>
        andThen(services.getService(create(GetServiceRequestSchema, { id }), call), (res) =>
          JSON.stringify(serviceJson(res.service!)),
        ),
    },
  };
}

export function serviceRoutes(impls: RpcImpls, kit: Kit, reads: ReturnType<typeof serviceReads>) {
  const { services } = impls;
  const serviceExists: BodyRoute["exists"] = (call, params) =>
    services.getService(create(GetServiceRequestSchema, { id: params.id ?? "" }), call);
  const tags = ["Services"];
  return new Elysia({ ...ELYSIA_SETTINGS, name: "services" })
    .use(kit.plugin)
    .post(
      "/v1/services",
      async ({ call, body }) => {
        const res = await services.createService(
          create(CreateServiceRequestSchema, { serviceName: body.service_name, isMonitored: body.is_monitored }),
          call,
        );
        return json(201, { ...serviceJson(res.service!), signing_secret: res.signingSecret });
      },
      {
        withBody: { method: "intake.v1.ServiceRegistryService/CreateService" },
        body: CreateServiceBody,
        response: { 201: CreatedService },
        detail: {
          summary: "Register a service (its signing secret is shown only here)",
          tags,
          security: bearerSecurity,
        },
      },
    )
    .get(
      reads.list.path,
      ({ call, query }) => andThen(reads.list.answer(call, { limit: query.limit, cursor: query.cursor }), okJson),
      {
        bearer: reads.list.method,
        query: PageQuery,
        response: { 200: listOf(ServiceRecordSchema, "ServiceList") },
        detail: { summary: "List services, newest first", tags, security: bearerSecurity },
      },
    )
    .get(reads.get.path, ({ call, params }) => andThen(reads.get.answer(call, { id: params.id }), okJson), {
      bearer: reads.get.method,
      params: IdParams,
      response: { 200: ServiceRecordSchema },
      detail: { summary: "Get a service (the secret only as its prefix)", tags, security: bearerSecurity },
    })
    .patch(
      "/v1/services/:id",
      async ({ call, params, body }) => {
        const res = await services.updateService(
          create(UpdateServiceRequestSchema, {
            id: params.id,
            isMonitored: body.is_monitored,
            ...(body.rate_limit !== undefined &&
              (body.rate_limit === null
                ? { resetRateLimit: true }
                : { rateLimit: { limit: body.rate_limit.limit, windowSeconds: body.rate_limit.window_seconds } })),
            // Any value, even null, is refused: the name is immutable.
            serviceName: "service_name" in body ? String(body.service_name) : undefined,
          }),
          call,
        );
        return json(200, serviceJson(res.service!));
      },
      {
        withBody: {
          method: "intake.v1.ServiceRegistryService/UpdateService",
          exists: serviceExists,
        },
        params: IdParams,
        body: UpdateServiceBody,
        response: { 200: ServiceRecordSchema },
        detail: {
          summary: "Pause or resume ingestion (is_monitored), set or reset the service's ingest rate limit",
          tags,
          security: bearerSecurity,
        },
      },
    )
    .delete(
      "/v1/services/:id",
      async ({ call, params }) => {
        await services.deleteService(create(DeleteServiceRequestSchema, { id: params.id }), call);
        return new Response(null, { status: 204 });
      },
      {
        bearer: "intake.v1.ServiceRegistryService/DeleteService",
        params: IdParams,
        response: {},
        detail: {
          summary: "Delete a service and its events (owner only in role_based mode)",
          tags,
          security: bearerSecurity,
          responses: { 204: { description: "Deleted" } },
        },
      },
    )
    .post(
      "/v1/services/:id/secret_rotations",
      async ({ call, params }) => {
        const res = await services.rotateSigningSecret(
          create(RotateSigningSecretRequestSchema, { id: params.id }),
          call,
        );
        return json(201, {
          service_id: res.serviceId,
          signing_secret: res.signingSecret,
          signing_secret_prefix: res.signingSecretPrefix,
          rotated_at: iso(res.rotatedAt),
          previous_secret_expires_at: iso(res.previousSecretExpiresAt),
        });
      },
      {
        bearer: "intake.v1.ServiceRegistryService/RotateSigningSecret",
        params: IdParams,
        response: { 201: SecretRotation },
        detail: {
          summary: "Rotate the signing secret; the previous one verifies for the grace window",
          tags,
          security: bearerSecurity,
        },
      },
    );
}
