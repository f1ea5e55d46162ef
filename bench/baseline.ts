/**
 * The bare `Bun.serve` baseline: the ceiling for an HTTP server in this runtime on this
 * machine. GET answers a small JSON object; POST reads the whole body first (as Intake must
 * before it can verify a signature) and answers a small JSON object. Any path.
 *
 * `GET /floor/...` is a second reference, for scenario 2: the least work any server must do to
 * answer an authenticated GET the way the contract requires (bench/lib/auth-floor.ts);
 * `GET /floor-limited/...` is the same with the two RateLimit fields of a limited response.
 *
 * `FLOOR_IN_INTAKE=1` first starts Intake's whole app in this process (its modules, a SQLite
 * store in a temp dir, the in-process cache, its timers; no request is routed to it), so the
 * same floor runs in a process of Intake's size: what that process costs a handler, served
 * (`bun run bench -- --only 2 --floor-in-intake`).
 *
 * Usage: PORT=<port> bun bench/baseline.ts
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { authFloor } from "./lib/auth-floor.ts";

let closeIntake = async () => {};
if (process.env.FLOOR_IN_INTAKE === "1") {
  const { createApp } = await import("../src/app.ts");
  const { loadKeyMaterial, parseConfig } = await import("../src/config.ts");
  const { createLogger } = await import("../src/logger.ts");
  const dir = mkdtempSync(join(tmpdir(), "intake-floor-in-intake-"));
  const config = parseConfig({ INTAKE_DATA_DIR: dir, INTAKE_GRPC_PORT: "0" });
  const app = await createApp({ config, keys: loadKeyMaterial(config), logger: createLogger(() => {}) });
  closeIntake = async () => {
    await app.close();
    rmSync(dir, { recursive: true, force: true });
  };
}

const port = Number(process.env.PORT ?? "0");
const headers = { "content-type": "application/json; charset=utf-8" };
const getBody = JSON.stringify({ status: "ok", version: "baseline" });

const floor = authFloor();

const server = Bun.serve({
  hostname: "127.0.0.1",
  port,
  // As Intake's listener (src/serve.ts): production mode whatever NODE_ENV says.
  development: false,
  async fetch(request) {
    if (request.method === "POST") {
      const body = await request.arrayBuffer();
      return new Response(JSON.stringify({ received: body.byteLength }), { status: 202, headers });
    }
    if (request.url.includes("/floor/")) return floor(request, false);
    if (request.url.includes("/floor-limited/")) return floor(request, true);
    return new Response(getBody, { headers });
  },
});

process.stdout.write(`baseline listening on ${server.url.href}\n`);
process.on("SIGTERM", () => {
  void server.stop(true);
  void closeIntake().finally(() => process.exit(0));
});
