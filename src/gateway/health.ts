/** `GET /v1/health` (docs/api.md): no auth, no store, no cache; the body is built once, at start. */
import { JSON_TYPE } from "./http.ts";
import { type Operation, operation } from "./operation.ts";
import { Health } from "./schemas.ts";

export function healthOperations(version: string): Operation[] {
  const body = JSON.stringify({ status: "ok", version });
  return [
    operation({
      method: "GET",
      path: "/v1/health",
      rpc: "intake.v1.HealthService/GetHealth",
      // Load balancers call it constantly: served natively, it skips Elysia's dispatch (bench scenario 1).
      native: "none",
      limited: false,
      schemas: { response: { 200: Health } },
      doc: { summary: "Liveness probe and deployed version", tag: "Health" },
      handle: () => new Response(body, { headers: { "content-type": JSON_TYPE } }),
    }),
  ];
}
