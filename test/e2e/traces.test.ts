/**
 * Traces (SPEC §21, docs/tracing.md) from a real `intake serve` to a real OTLP/HTTP receiver,
 * in both encodings: every request's server span continues the caller's `traceparent`, is
 * named by route template or RPC method on REST, Connect and gRPC, has its store, cache and
 * commit children, and no attribute anywhere holds a token, secret, payload or tenant name.
 * Unset, nothing of the OpenTelemetry SDK is loaded.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { ApiTokenService } from "../../gen/intake/v1/api_tokens_pb.ts";
import { cleanEnv, runCli, startIntake, stopAll } from "../support/intake-process.ts";
import { type ReceivedSpan, startOtlpReceiver } from "../support/otlp-receiver.ts";
import { sign } from "../support/signing.ts";

const ROOT = join(import.meta.dir, "../..");
const SERVER = 2;

afterAll(stopAll);

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/** A caller's W3C trace context: a fresh trace id and its parent span id. */
function callerTrace() {
  const traceId = Buffer.from(crypto.getRandomValues(new Uint8Array(16))).toString("hex");
  const parentId = Buffer.from(crypto.getRandomValues(new Uint8Array(8))).toString("hex");
  return { traceId, parentId, traceparent: `00-${traceId}-${parentId}-01`, tracestate: "caller=1" };
}

function serverSpanOf(spans: ReceivedSpan[], traceId: string): ReceivedSpan {
  const found = spans.filter((s) => s.traceId === traceId && s.kind === SERVER);
  expect(found.length).toBe(1);
  return found[0] as ReceivedSpan;
}

/** The spans under `root` in its trace (children, grandchildren, …). */
function descendants(spans: ReceivedSpan[], root: ReceivedSpan): ReceivedSpan[] {
  const out: ReceivedSpan[] = [];
  let frontier = [root.spanId];
  while (frontier.length > 0) {
    const next = spans.filter((s) => s.traceId === root.traceId && frontier.includes(s.parentSpanId));
    out.push(...next);
    frontier = next.map((s) => s.spanId);
  }
  return out;
}

for (const protocol of ["http/protobuf", "http/json"] as const) {
  describe(`OTEL_EXPORTER_OTLP_PROTOCOL=${protocol}`, () => {
    const dir = mkdtempSync(join(tmpdir(), "intake-traces-e2e-"));
    afterAll(() => rmSync(dir, { recursive: true, force: true }));

    test("REST, Connect and gRPC requests continue the caller's trace, named by route template or RPC method, with store, cache and commit children and no secret in any attribute", async () => {
      const receiver = startOtlpReceiver();
      try {
        const tenantName = `Traced Tenant ${crypto.randomUUID()}`;
        const env = { INTAKE_DATA_DIR: dir, DATABASE_URL: `sqlite:${join(dir, "intake.sqlite")}` };
        const boot = JSON.parse(
          await runCli(["bootstrap", "--tenant-name", tenantName, "--create", "--json"], env),
        ) as { token: string };
        const grpcPort = await freePort();
        const instance = await startIntake("traced", {
          ...env,
          INTAKE_GRPC_PORT: String(grpcPort),
          OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
          OTEL_EXPORTER_OTLP_PROTOCOL: protocol,
        });
        const auth = { authorization: `Bearer ${boot.token}` };

        const create = callerTrace();
        const created = await instance.fetch("/v1/services", {
          method: "POST",
          headers: { ...auth, "content-type": "application/json", traceparent: create.traceparent },
          body: JSON.stringify({ service_name: "traced-service" }),
        });
        expect(created.status).toBe(201);
        const service = (await created.json()) as { id: string; signing_secret: string };

        const read = callerTrace();
        const got = await instance.fetch(`/v1/services/${service.id}`, {
          headers: { ...auth, traceparent: read.traceparent, tracestate: read.tracestate },
        });
        expect(got.status).toBe(200);

        const ingest = callerTrace();
        const payload = JSON.stringify({ marker: `payload-${crypto.randomUUID()}` });
        const ingested = await instance.fetch(`/v1/ingest/${service.id}`, {
          method: "POST",
          headers: {
            "content-type": "application/json",
            "x-service-signature": sign(service.signing_secret, payload, Date.now()),
            traceparent: ingest.traceparent,
          },
          body: payload,
        });
        expect(ingested.status).toBe(202);

        const connect = callerTrace();
        const viaConnect = await instance.fetch("/intake.v1.ApiTokenService/ListApiTokens", {
          method: "POST",
          headers: { ...auth, "content-type": "application/json", traceparent: connect.traceparent },
          body: "{}",
        });
        expect(viaConnect.status).toBe(200);

        const grpc = callerTrace();
        const client = createClient(ApiTokenService, createGrpcTransport({ baseUrl: `http://127.0.0.1:${grpcPort}` }));
        await client.listApiTokens({}, { headers: { ...auth, traceparent: grpc.traceparent } });

        // The drain exports what is buffered (the batch processor's delay has not passed).
        await instance.stop();
        const { spans } = receiver;
        expect(receiver.contentTypes.length).toBeGreaterThan(0);
        for (const type of receiver.contentTypes)
          expect(type).toStartWith(protocol === "http/json" ? "application/json" : "application/x-protobuf");

        // REST through Elysia: a mutation's store transaction and the token lookup are children.
        const createSpan = serverSpanOf(spans, create.traceId);
        expect(createSpan.name).toBe("POST /v1/services");
        expect(createSpan.parentSpanId).toBe(create.parentId);
        const createChildren = descendants(spans, createSpan).map((s) => s.name);
        expect(createChildren).toContain("store services.insert");
        expect(createChildren).toContain("cache tok getOrLoad");
        expect(createSpan.resource["service.name"]).toBe("intake");

        // REST through a native route, with its semantic-convention attributes.
        const readSpan = serverSpanOf(spans, read.traceId);
        expect(readSpan.name).toBe("GET /v1/services/{id}");
        expect(readSpan.parentSpanId).toBe(read.parentId);
        expect(readSpan.attributes).toMatchObject({
          "http.request.method": "GET",
          "http.route": "/v1/services/{id}",
          "http.response.status_code": 200,
          "url.scheme": "http",
          "server.address": "127.0.0.1",
        });
        expect(typeof readSpan.attributes["server.port"]).toBe("number");

        // Ingest: the request waits on a commit span of its own trace, linked both ways.
        const ingestSpan = serverSpanOf(spans, ingest.traceId);
        expect(ingestSpan.name).toBe("POST /v1/ingest/{service_id}");
        const wait = descendants(spans, ingestSpan).find((s) => s.name === "ingest commit wait");
        expect(wait).toBeDefined();
        const commit = spans.find((s) => s.name === "ingest commit" && s.links.some((l) => l.spanId === wait?.spanId));
        expect(commit).toBeDefined();
        expect(wait?.links.map((l) => l.spanId)).toContain(commit?.spanId as string);
        expect(descendants(spans, commit as ReceivedSpan).map((s) => s.name)).toContain("store events.insertBatch");

        // Connect on the main port and plain gRPC on the gRPC port: named by RPC method.
        for (const caller of [connect, grpc]) {
          const rpcSpan = serverSpanOf(spans, caller.traceId);
          expect(rpcSpan.name).toBe("intake.v1.ApiTokenService/ListApiTokens");
          expect(rpcSpan.parentSpanId).toBe(caller.parentId);
          expect(rpcSpan.attributes).toMatchObject({
            "rpc.system": "grpc",
            "rpc.service": "intake.v1.ApiTokenService",
            "rpc.method": "ListApiTokens",
            "rpc.grpc.status_code": 0,
          });
          expect(descendants(spans, rpcSpan).map((s) => s.name)).toContain("store tokens.list");
        }

        // Nothing a caller must keep secret, nor what it sent, in any span or resource attribute.
        const secrets = [
          boot.token,
          service.signing_secret,
          payload,
          JSON.parse(payload).marker as string,
          tenantName,
          readFileSync(join(dir, "token_pepper"), "utf8").trim(),
          readFileSync(join(dir, "secrets_key"), "utf8").trim(),
        ];
        for (const span of spans) {
          const values = [span.name, ...Object.values(span.attributes), ...Object.values(span.resource)].map(String);
          for (const value of values) for (const secret of secrets) expect(value).not.toContain(secret);
        }
      } finally {
        await stopAll();
        await receiver.stop();
      }
    }, 60_000);
  });
}

/** What a process of the app loads, unset and set: the module ids under node_modules/@opentelemetry and src/tracing. */
async function loadedTracingModules(otel: Record<string, string>): Promise<string[]> {
  const script = `
    const { parseConfig, loadKeyMaterial } = await import("./src/config.ts");
    const { createApp } = await import("./src/app.ts");
    const { createLogger } = await import("./src/logger.ts");
    const config = parseConfig({ ...process.env, DATABASE_URL: "sqlite::memory:" });
    const app = await createApp({ config, keys: loadKeyMaterial(config), logger: createLogger(() => {}) });
    await app.fetch(new Request("http://127.0.0.1/v1/health"));
    await app.close();
    const ours = /@opentelemetry\\/(sdk-|exporter-|otlp-|context-|resources)|src\\/tracing\\//;
    console.log(JSON.stringify(Object.keys(require.cache).filter((id) => ours.test(id))));
  `;
  const proc = Bun.spawn(["bun", "-e", script], {
    cwd: ROOT,
    env: { ...cleanEnv(), ...otel },
    stdout: "pipe",
    stderr: "pipe",
  });
  const [stdout, stderr, code] = await Promise.all([
    new Response(proc.stdout).text(),
    new Response(proc.stderr).text(),
    proc.exited,
  ]);
  expect(stderr).toBe("");
  expect(code).toBe(0);
  return JSON.parse(stdout.trim()) as string[];
}

test("no OTLP endpoint: neither the OpenTelemetry SDK, its exporters nor the tracing adapter is loaded", async () => {
  expect(await loadedTracingModules({})).toEqual([]);
  // The same probe sees them when an endpoint is set (a collector that is down loses spans, nothing else).
  const loaded = await loadedTracingModules({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "http://127.0.0.1:9/v1/traces" });
  expect(loaded.some((id) => id.includes("@opentelemetry/sdk-trace"))).toBe(true);
  expect(loaded.some((id) => id.includes("src/tracing/otel.ts"))).toBe(true);
}, 60_000);

test("at a sampler ratio of 0, a request without traceparent or with an unsampled one leaves no span, and a caller's sampled trace is continued with its ingest commit", async () => {
  const receiver = startOtlpReceiver();
  const dir = mkdtempSync(join(tmpdir(), "intake-traces-ratio-"));
  try {
    const env = { INTAKE_DATA_DIR: dir, DATABASE_URL: `sqlite:${join(dir, "intake.sqlite")}` };
    const boot = JSON.parse(await runCli(["bootstrap", "--tenant-name", "Ratio", "--create", "--json"], env)) as {
      token: string;
    };
    const instance = await startIntake("ratio", {
      ...env,
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
      OTEL_TRACES_SAMPLER: "parentbased_traceidratio",
      OTEL_TRACES_SAMPLER_ARG: "0",
    });
    const auth = { authorization: `Bearer ${boot.token}` };
    const created = await instance.fetch("/v1/services", {
      method: "POST",
      headers: { ...auth, "content-type": "application/json" },
      body: JSON.stringify({ service_name: "ratio-service" }),
    });
    expect(created.status).toBe(201);
    const service = (await created.json()) as { id: string; signing_secret: string };
    const unsampled = callerTrace();
    const notSampled = `00-${unsampled.traceId}-${unsampled.parentId}-00`;
    for (let i = 0; i < 20; i++) {
      expect((await instance.fetch("/v1/tenant", { headers: auth })).status).toBe(200);
      expect((await instance.fetch("/v1/tenant", { headers: { ...auth, traceparent: notSampled } })).status).toBe(200);
    }
    const sampled = callerTrace();
    const payload = JSON.stringify({ n: 1 });
    const ingested = await instance.fetch(`/v1/ingest/${service.id}`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        "x-service-signature": sign(service.signing_secret, payload, Date.now()),
        traceparent: sampled.traceparent,
      },
      body: payload,
    });
    expect(ingested.status).toBe(202);
    await instance.stop();

    const { spans } = receiver;
    // Only the caller's sampled trace and the commit it waited for (sampled through its link).
    const ingestSpan = serverSpanOf(spans, sampled.traceId);
    expect(ingestSpan.name).toBe("POST /v1/ingest/{service_id}");
    const wait = descendants(spans, ingestSpan).find((s) => s.name === "ingest commit wait");
    const commit = spans.find((s) => s.name === "ingest commit" && s.links.some((l) => l.spanId === wait?.spanId));
    expect(commit).toBeDefined();
    const traces = new Set(spans.map((s) => s.traceId));
    expect(traces).toEqual(new Set([sampled.traceId, commit?.traceId as string]));
  } finally {
    await stopAll();
    await receiver.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}, 60_000);
