/**
 * `intake serve`: migrations, the HTTP listener, the gRPC (h2c) listener, and a graceful stop
 * on SIGTERM/SIGINT (stop accepting, let in-flight requests finish, then close the cache and
 * the store).
 */
import { createApp } from "./app.ts";
import type { Config, KeyMaterial } from "./config.ts";
import type { Logger } from "./logger.ts";

/**
 * Bun's own body limit answers a bare 413 (no error body, no X-Request-Id) from the declared
 * Content-Length, before any handler runs, so a large body to a bearer route got 413 before
 * its 401. Every route that reads a body caps it itself while reading (management bodies,
 * ingest, the Connect routers' readMaxBytes), after admission; a body nobody reads is
 * discarded by Bun without being buffered. So Bun's limit is only a backstop: a
 * Content-Length no real body has (docs/api.md, "Limits the HTTP layer enforces").
 */
export const MAX_REQUEST_BODY_SIZE = Number.MAX_SAFE_INTEGER;

export async function serve(config: Config, keys: KeyMaterial, logger: Logger) {
  const app = await createApp({ config, keys, logger });
  const server = Bun.serve({
    port: config.port,
    hostname: config.host,
    routes: app.nativeRoutes,
    fetch: app.fetch,
    // Bun's default outside NODE_ENV=production is development mode, whose error page shows
    // an escaped error's message and stack to the caller. Errors are answered by Intake alone.
    development: false,
    error: app.onEscapedError,
    maxRequestBodySize: MAX_REQUEST_BODY_SIZE,
  });
  // INTAKE_GRPC_PORT=0 disables it; `grpc.port` is the bound port.
  const grpc = config.grpcPort === 0 ? null : await app.listenGrpc(config.grpcPort);
  logger.info("intake listening", {
    url: server.url.href,
    grpc_port: grpc?.port ?? null,
    version: config.version,
    database: config.database.kind,
    cache: app.cache.kind,
  });
  if (!(await app.store.tenants.any())) {
    // Never the code itself: only the command that makes one (docs/console.md).
    logger.info(
      "no tenant yet: get a one-time console setup link with `bun run intake setup-link`, or mint the first token with `bun run intake bootstrap --tenant-name <name> --json`",
    );
  }

  let stopping: Promise<void> | null = null;
  const stop = (signal: string) => {
    stopping ??= (async () => {
      logger.info("draining", { signal });
      // Both drain at once: the gRPC listener turns NOT_SERVING and sends GOAWAY.
      await Promise.all([server.stop(false), grpc?.close()]);
      await app.close();
      logger.info("stopped");
    })();
    return stopping;
  };
  process.on("SIGTERM", () => void stop("SIGTERM").then(() => process.exit(0)));
  process.on("SIGINT", () => void stop("SIGINT").then(() => process.exit(0)));
  return { app, server, grpc, stop: () => stop("stop") };
}
