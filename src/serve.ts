/**
 * `intake serve`: migrations, the HTTP listener, the gRPC (h2c) listener, and a graceful stop
 * on SIGTERM/SIGINT (stop accepting, let in-flight requests finish, then close the cache and
 * the store).
 */
import { createApp } from "./app.ts";
import type { Config, KeyMaterial } from "./config.ts";
import type { Logger } from "./logger.ts";

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
    // The gateway enforces its own, smaller limits while reading.
    maxRequestBodySize: Math.max(config.maxEventBytes, 64 * 1024) + 1024 * 1024,
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
