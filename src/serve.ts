/**
 * `intake serve`: migrations, the HTTP listener, the gRPC (h2c) listener, and a graceful stop
 * on SIGTERM/SIGINT (stop accepting, let in-flight requests finish within DRAIN_MS, then close
 * the cache and the store: docs/operations.md, "Stopping"). A listener that cannot bind stops
 * the start with one line naming the variable.
 */
import { lookup } from "node:dns/promises";
import { createServer } from "node:net";
import { type App, createApp } from "./app.ts";
import { type Config, ConfigError, invokedAs, type KeyMaterial } from "./config.ts";
import { FEED_MAX_WAIT_SECONDS } from "./domain/feed.ts";
import type { Logger } from "./logger.ts";
import { claimStore } from "./serving.ts";

/**
 * Bun's own body limit answers a bare 413 (no error body, no X-Request-Id) from the declared
 * Content-Length, before any handler runs, so a large body to a bearer route got 413 before
 * its 401. Every route that reads a body caps it itself while reading (management bodies,
 * ingest, the Connect routers' readMaxBytes), after admission; a body nobody reads is
 * discarded by Bun without being buffered. So Bun's limit is only a backstop: a
 * Content-Length no real body has (docs/api.md, "Limits the HTTP layer enforces").
 */
export const MAX_REQUEST_BODY_SIZE = Number.MAX_SAFE_INTEGER;

/**
 * How long a connection of the main port may stay quiet: longer than the longest long poll, so
 * a held answer is always sent (docs/feed.md); a keep-alive connection between requests is
 * closed after it.
 */
export const IDLE_TIMEOUT_SECONDS = FEED_MAX_WAIT_SECONDS + 10;

/**
 * How long SIGTERM's drain waits for the main port's in-flight requests: connections still open
 * then (a body that never finishes arriving, a client that trickles) are closed, as the gRPC
 * listener destroys its sessions after its own 10 s (docs/operations.md, "Stopping").
 */
export const DRAIN_MS = 10_000;

/**
 * Bun.serve's options for the main port apart from where it listens (the tests' servers take
 * them too). Call `app.listening(server)` once it listens: live streams lift its idle timeout.
 */
export function mainPort(app: Pick<App, "nativeRoutes" | "fetch" | "onEscapedError">) {
  return {
    routes: app.nativeRoutes,
    fetch: app.fetch,
    // Bun's default outside NODE_ENV=production is development mode, whose error page shows
    // an escaped error's message and stack to the caller. Errors are answered by Intake alone.
    development: false,
    error: app.onEscapedError,
    maxRequestBodySize: MAX_REQUEST_BODY_SIZE,
    // Bun's default (10 s) would cut a long poll (`wait` up to FEED_MAX_WAIT_SECONDS) before
    // its answer; live streams lift it for themselves (app.listening).
    idleTimeout: IDLE_TIMEOUT_SECONDS,
  };
}

/** HOST must name an address: checked before migrations run, so a typo costs nothing. */
async function checkHost(host: string): Promise<void> {
  try {
    await lookup(host);
  } catch (error) {
    const code = (error as { code?: string }).code ?? "lookup failed";
    throw new ConfigError([`HOST=${host}: not an IP address or a name that resolves (${code})`]);
  }
}

/**
 * Bun reports every failed listen as "EADDRINUSE"; node:net tells "in use" from "not an
 * address of this machine" and "permission denied". Asked only after a listen failed.
 */
async function listenProblem(variable: string, port: number, host: string, error: unknown): Promise<ConfigError> {
  const code = await new Promise<string | undefined>((resolve) => {
    const probe = createServer();
    probe.once("error", (e: NodeJS.ErrnoException) => resolve(e.code));
    probe.listen(port, host, () => probe.close(() => resolve(undefined)));
  });
  const where = `${host}:${port}`;
  const reason =
    code === "EADDRINUSE"
      ? `${where} is already in use (another intake?); stop it or choose another ${variable}`
      : code === "EADDRNOTAVAIL"
        ? `${host} is not an address of this machine (HOST)`
        : code === "EACCES"
          ? `permission denied to listen on ${where}; choose a ${variable} above 1023`
          : `cannot listen on ${where}: ${code ?? (error instanceof Error ? error.message : String(error))}`;
  return new ConfigError([`${variable}=${port}: ${reason}`]);
}

export async function serve(config: Config, keys: KeyMaterial, logger: Logger) {
  await checkHost(config.host);
  // Before migrations: a second server on a SQLite store stops here, naming the first.
  const claim = claimStore(config);
  let app: Awaited<ReturnType<typeof createApp>>;
  try {
    app = await createApp({ config, keys, logger });
  } catch (error) {
    claim?.release();
    throw error;
  }
  // gRPC first: `GET /v1/health` answers 200 once the HTTP listener accepts, so a caller that
  // waits for it and then dials gRPC must find that listener already up (docs/operations.md,
  // "Readiness"). INTAKE_GRPC_PORT=0 disables it; `grpc.port` is the bound port.
  let grpc: Awaited<ReturnType<typeof app.listenGrpc>> | null = null;
  if (config.grpcPort !== 0) {
    try {
      grpc = await app.listenGrpc(config.grpcPort);
    } catch (error) {
      await app.close();
      claim?.release();
      throw await listenProblem("INTAKE_GRPC_PORT", config.grpcPort, config.host, error);
    }
  }
  let server: ReturnType<typeof Bun.serve>;
  try {
    server = Bun.serve({
      port: config.port,
      hostname: config.host,
      // Bun shares a busy port (SO_REUSEPORT) when not in development mode: a second instance
      // on one port would silently take half the traffic. A busy port is an error instead.
      reusePort: false,
      ...mainPort(app),
    });
    app.listening(server);
  } catch (error) {
    await grpc?.close();
    await app.close();
    claim?.release();
    throw await listenProblem("PORT", config.port, config.host, error);
  }
  claim?.announce(server.url.href, grpc?.port ?? null);
  logger.info("intake listening", {
    url: server.url.href,
    grpc_port: grpc?.port ?? null,
    version: config.version,
    database: config.database.kind,
    ...app.cacheServing(),
  });
  if (!(await app.store.tenants.any())) {
    // Never the code itself: only the command that makes one (docs/console.md).
    const self = invokedAs();
    logger.info(
      `no tenant yet: get a one-time console setup link with \`${self} setup-link\`, or mint the first token with \`${self} bootstrap --tenant-name <name> --json\``,
    );
  }

  let stopping: Promise<void> | null = null;
  const stop = (signal: string) => {
    stopping ??= (async () => {
      logger.info("draining", { signal });
      // Open feed streams would hold server.stop(false) forever: they finish what is committed
      // and end; one whose reader stopped reading is reset after the feed's drain grace.
      app.drainStreams();
      // Whatever else is still in flight on the main port at the bound is cut.
      const cut = setTimeout(() => void server.stop(true), DRAIN_MS);
      // Both drain at once: the gRPC listener turns NOT_SERVING and sends GOAWAY.
      await Promise.all([server.stop(false), grpc?.close()]);
      clearTimeout(cut);
      await app.close();
      claim?.release();
      logger.info("stopped");
    })();
    return stopping;
  };
  process.on("SIGTERM", () => void stop("SIGTERM").then(() => process.exit(0)));
  process.on("SIGINT", () => void stop("SIGINT").then(() => process.exit(0)));
  return { app, server, grpc, stop: () => stop("stop") };
}
