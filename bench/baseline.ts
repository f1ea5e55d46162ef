/**
 * The bare `Bun.serve` baseline: the ceiling for an HTTP server in this runtime on this
 * machine. GET answers a small JSON object; POST reads the whole body first (as Intake must
 * before it can verify a signature) and answers a small JSON object. Any path.
 *
 * Usage: PORT=<port> bun bench/baseline.ts
 */
const port = Number(process.env.PORT ?? "0");
const headers = { "content-type": "application/json; charset=utf-8" };
const getBody = JSON.stringify({ status: "ok", version: "baseline" });

const server = Bun.serve({
  hostname: "127.0.0.1",
  port,
  async fetch(request) {
    if (request.method === "POST") {
      const body = await request.arrayBuffer();
      return new Response(JSON.stringify({ received: body.byteLength }), { status: 202, headers });
    }
    return new Response(getBody, { headers });
  },
});

process.stdout.write(`baseline listening on ${server.url.href}\n`);
process.on("SIGTERM", () => {
  void server.stop(true);
  process.exit(0);
});
