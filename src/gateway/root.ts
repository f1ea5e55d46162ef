/**
 * `GET /` and `GET /favicon.ico`: what a person typing the address into a browser meets.
 * `/` redirects to the console (INTAKE_CONSOLE), or else is a small JSON pointer to the API
 * reference, the document and the probe (docs/api.md); the favicon is a 204 so browsers log
 * no 404 for it.
 */
import { Elysia } from "elysia";
import { DOCS_PATH, OPENAPI_PATH } from "./api-docs.ts";
import { CONSOLE_PATH } from "./console.ts";
import { ELYSIA_SETTINGS, JSON_TYPE } from "./http.ts";

export function rootRoutes(options: { apiDocs: boolean; console: boolean }) {
  const body = JSON.stringify({
    name: "Intake",
    docs: options.apiDocs ? DOCS_PATH : null,
    openapi: options.apiDocs ? OPENAPI_PATH : null,
    health: "/v1/health",
  });
  const root = options.console
    ? () => new Response(null, { status: 302, headers: { location: CONSOLE_PATH } })
    : () => new Response(body, { headers: { "content-type": JSON_TYPE } });
  return new Elysia({ ...ELYSIA_SETTINGS, name: "root" })
    .get("/", root, { parse: "none", detail: { hide: true } })
    .get(
      "/favicon.ico",
      () => new Response(null, { status: 204, headers: { "cache-control": "public, max-age=86400" } }),
      { parse: "none", detail: { hide: true } },
    );
}
