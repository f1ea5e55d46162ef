import { create } from "@bufbuild/protobuf";
import { createContextValues } from "@connectrpc/connect";
import { Elysia } from "elysia";
import { GetHealthRequestSchema } from "../../gen/intake/v1/health_pb.ts";
import { ELYSIA_SETTINGS } from "./http.ts";
import type { Impls } from "./impls.ts";
import { Health } from "./schemas.ts";

/** No auth, no store, no cache (SPEC §6): the body is built once, at start. */
export async function healthRoutes(impls: Impls) {
  const answer = await impls.health.getHealth(create(GetHealthRequestSchema), { values: createContextValues() });
  const body = JSON.stringify({ status: answer.status, version: answer.version });
  return new Elysia({ ...ELYSIA_SETTINGS, name: "health" }).get(
    "/v1/health",
    () => new Response(body, { headers: { "content-type": "application/json; charset=utf-8" } }),
    {
      parse: "none",
      response: { 200: Health },
      detail: { summary: "Liveness probe and deployed version", tags: ["Health"], security: [] },
    },
  );
}
