/**
 * The web console (docs/console.md) at `/console`, served by the same process from the
 * repository's own source (src/console/), bundled by Bun from its HTML entry point.
 *
 * Bun can serve an HTML import itself, but then its responses carry Bun's headers only, and a
 * console must carry a strict Content-Security-Policy with `frame-ancestors 'none'` (a header:
 * browsers ignore that directive in a <meta>). So the bundle's files are served here:
 * - under `bun run`, the HTML import is only a path, and the console is bundled in process on
 *   first use (Bun.build, minified), once per process;
 * - in the one-file build (`bun run build`), Bun bundled it ahead of time and embedded the files,
 *   which the import lists.
 * Either way the page's script and stylesheet are rewritten to `/console/assets/<name>`, and
 * every path under /console that is not an asset answers the page (the console routes in the
 * browser: `/console/setup`, `/console/services/…`).
 */
import { basename } from "node:path";
import { Elysia } from "elysia";
import consolePage from "../console/index.html";
import { connectErrorFor } from "../rpc/errors.ts";
import { Precompressed } from "./compression.ts";
import { ELYSIA_SETTINGS } from "./http.ts";

export const CONSOLE_PATH = "/console";
const ASSETS_PATH = `${CONSOLE_PATH}/assets`;

/**
 * Everything from this origin, nothing inline, no framing. `connect-src 'self'` keeps every
 * API call (fetch, the Connect clients, streams) on the server that served the page.
 */
export const CONSOLE_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "font-src 'self'",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join("; ");

const SECURITY_HEADERS = {
  "content-security-policy": CONSOLE_CSP,
  "x-content-type-options": "nosniff",
  "referrer-policy": "no-referrer",
};

/**
 * Every answer under /console carries the console's headers, errors included (a 404 for an
 * unknown asset, a 405): the gateway's error hook calls this for every path it answers.
 */
export function withConsoleHeaders(response: Response, request: Request): Response {
  const { pathname } = new URL(request.url);
  if (pathname !== CONSOLE_PATH && !pathname.startsWith(`${CONSOLE_PATH}/`)) return response;
  for (const [name, value] of Object.entries(SECURITY_HEADERS)) response.headers.set(name, value);
  return response;
}

interface Asset {
  body: Precompressed;
  type: string;
}

interface Bundle {
  html: Precompressed;
  assets: Map<string, Asset>;
}

/** Points the page's script and stylesheet at /console/assets/, whatever the bundler wrote. */
async function rewriteAssetUrls(html: string): Promise<string> {
  const toAsset = (attribute: string) => ({
    element(element: HTMLRewriterTypes.Element) {
      const url = element.getAttribute(attribute);
      if (url && !/^[a-z]+:/i.test(url)) element.setAttribute(attribute, `${ASSETS_PATH}/${basename(url)}`);
    },
  });
  return new HTMLRewriter()
    .on("script[src]", toAsset("src"))
    .on("link[href]", toAsset("href"))
    .transform(new Response(html))
    .text();
}

async function bundleConsole(): Promise<Bundle> {
  const assets = new Map<string, Asset>();
  let html: string | undefined;
  if (consolePage.files) {
    // The one-file build: bundled ahead of time, embedded in the binary.
    for (const file of consolePage.files) {
      const body = Bun.file(file.path);
      if (file.loader === "html") html = await body.text();
      else
        assets.set(basename(file.path), {
          body: await Precompressed.now(await body.bytes()),
          type: file.headers["content-type"],
        });
    }
  } else {
    const built = await Bun.build({ entrypoints: [consolePage.index], target: "browser", minify: true });
    if (!built.success) throw new AggregateError(built.logs, "the console could not be bundled");
    for (const output of built.outputs) {
      if (output.path.endsWith(".html")) html = await output.text();
      else
        assets.set(basename(output.path), {
          body: await Precompressed.now(new Uint8Array(await output.arrayBuffer())),
          type: output.type,
        });
    }
  }
  if (html === undefined) throw new Error("the console bundle has no HTML page");
  // Compressed here, with the bundle (gzip and br, off the event loop): served as they are.
  return { html: await Precompressed.now(new TextEncoder().encode(await rewriteAssetUrls(html))), assets };
}

// Derived from the source alone, identical for every app in the process: bundled once, on the
// first request (not at start: many short-lived processes never serve the console).
let bundled: Promise<Bundle> | undefined;
function consoleBundle(): Promise<Bundle> {
  bundled ??= bundleConsole().catch((error: unknown) => {
    bundled = undefined;
    throw error;
  });
  return bundled;
}

export function consoleRoutes() {
  const page = async ({ request }: { request: Request }) => {
    const headers = new Headers({
      "content-type": "text/html; charset=utf-8",
      "cache-control": "no-cache",
      ...SECURITY_HEADERS,
    });
    const body = (await consoleBundle()).html.body(request.headers.get("accept-encoding"), headers);
    return new Response(body, { headers });
  };
  return new Elysia({ ...ELYSIA_SETTINGS, name: "console" })
    .get(CONSOLE_PATH, page, { parse: "none", detail: { hide: true } })
    .get(
      `${ASSETS_PATH}/:name`,
      async ({ params, request }) => {
        const asset = (await consoleBundle()).assets.get(params.name);
        if (!asset) throw connectErrorFor("not_found", "No such console asset.");
        const headers = new Headers({
          "content-type": asset.type,
          // Content-hashed names: a new deploy serves new names.
          "cache-control": "public, max-age=31536000, immutable",
          ...SECURITY_HEADERS,
        });
        return new Response(asset.body.body(request.headers.get("accept-encoding"), headers), { headers });
      },
      { parse: "none", detail: { hide: true } },
    )
    .get(`${CONSOLE_PATH}/*`, page, { parse: "none", detail: { hide: true } });
}
