/**
 * `buf curl` (a devDependency) against the h2c listener with no .proto files: it lists the
 * services and methods and calls methods through server reflection alone, over grpc.reflection.v1
 * (its default) and over v1alpha (`--reflect-protocol grpc-v1alpha`). docs/rpc.md shows the same
 * commands.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { type Served, serveWorld } from "../rpc/support.ts";

const ROOT = join(import.meta.dir, "../..");
const BUF = join(ROOT, "node_modules/.bin/buf");

let served: Served;
beforeAll(async () => {
  served = await serveWorld();
});
afterAll(async () => {
  await served.close();
});

/** Runs `buf curl --protocol grpc --http2-prior-knowledge <args>` from an empty directory (no schema near). */
async function bufCurl(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const proc = Bun.spawn([BUF, "curl", "--protocol", "grpc", "--http2-prior-knowledge", ...args], {
    cwd: "/",
    stdout: "pipe",
    stderr: "pipe",
    env: { ...process.env, BUF_CACHE_DIR: join(process.env.TMPDIR ?? "/tmp", "intake-buf-cache") },
  });
  const [stdout, stderr, code] = await Promise.all([
    new Response(proc.stdout).text(),
    new Response(proc.stderr).text(),
    proc.exited,
  ]);
  return { code, stdout, stderr };
}

const SERVICES = [
  "grpc.health.v1.Health",
  "grpc.reflection.v1.ServerReflection",
  "grpc.reflection.v1alpha.ServerReflection",
  "intake.v1.ApiTokenService",
  "intake.v1.AuditService",
  "intake.v1.EventFeedService",
  "intake.v1.HealthService",
  "intake.v1.IncidentService",
  "intake.v1.IngestService",
  "intake.v1.ServiceRegistryService",
  "intake.v1.SetupService",
  "intake.v1.TenantService",
];

for (const protocol of ["grpc-v1", "grpc-v1alpha"]) {
  test(`buf curl --list-services over ${protocol} reflection lists every served service`, async () => {
    const res = await bufCurl("--reflect-protocol", protocol, "--list-services", served.grpcUrl);
    expect(res.stderr).toBe("");
    expect(res.code).toBe(0);
    expect(res.stdout.trim().split("\n").sort()).toEqual(SERVICES);
  });
}

test("buf curl --list-methods over reflection lists each service's methods, the feed stream included", async () => {
  const res = await bufCurl("--list-methods", served.grpcUrl);
  expect(res.code).toBe(0);
  const methods = res.stdout.trim().split("\n");
  for (const method of [
    "intake.v1.TenantService/GetTenant",
    "intake.v1.TenantService/UpdateTenant",
    "intake.v1.IngestService/GetEvent",
    "intake.v1.EventFeedService/StreamFeed",
    "intake.v1.SetupService/RedeemSetupCode",
    "grpc.health.v1.Health/Watch",
    "grpc.reflection.v1.ServerReflection/ServerReflectionInfo",
  ]) {
    expect(methods).toContain(method);
  }
});

test("buf curl calls GetTenant with a bearer token from reflection alone: JSON with its Timestamp", async () => {
  const res = await bufCurl(
    "-H",
    `authorization: Bearer ${served.world.ownerToken}`,
    "-d",
    "{}",
    `${served.grpcUrl}/intake.v1.TenantService/GetTenant`,
  );
  expect(res.stderr).toBe("");
  expect(res.code).toBe(0);
  const body = JSON.parse(res.stdout) as { tenant: { id: string; createdAt: string } };
  expect(body.tenant.id).toBe(served.world.tenantId);
  // An RFC 3339 string: buf learned google.protobuf.Timestamp from the imports reflection sent.
  expect(body.tenant.createdAt).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/);
});

test("buf curl over v1alpha reflection calls GetHealth and gets the standard health SERVING", async () => {
  const health = await bufCurl(
    "--reflect-protocol",
    "grpc-v1alpha",
    "-d",
    "{}",
    `${served.grpcUrl}/intake.v1.HealthService/GetHealth`,
  );
  expect(health.code).toBe(0);
  expect(JSON.parse(health.stdout)).toEqual({ status: "ok", version: served.world.app.config.version });
  const check = await bufCurl(
    "--reflect-protocol",
    "grpc-v1alpha",
    "-d",
    '{"service": ""}',
    `${served.grpcUrl}/grpc.health.v1.Health/Check`,
  );
  expect(check.code).toBe(0);
  expect(JSON.parse(check.stdout)).toEqual({ status: "SERVING" });
});

test("docs/rpc.md's buf curl commands run as written, against this port and with a token", async () => {
  const rpcMd = readFileSync(join(ROOT, "docs/rpc.md"), "utf8");
  const section = rpcMd.slice(rpcMd.indexOf("## Without the .proto files"));
  const block = /```sh\n([\s\S]*?)```/.exec(section)?.[1] ?? "";
  const commands = block
    .replace(/\\\n\s*/g, "")
    .split("\n")
    .filter((line) => line.startsWith("buf curl "));
  expect(commands.length).toBeGreaterThanOrEqual(4);
  for (const command of commands) {
    const proc = Bun.spawn(["bash", "-c", command.replaceAll("127.0.0.1:50051", `127.0.0.1:${served.grpc.port}`)], {
      cwd: "/",
      stdout: "pipe",
      stderr: "pipe",
      env: {
        ...process.env,
        PATH: `${join(ROOT, "node_modules/.bin")}:${process.env.PATH}`,
        TOKEN: served.world.ownerToken,
      },
    });
    const [stdout, stderr, code] = await Promise.all([
      new Response(proc.stdout).text(),
      new Response(proc.stderr).text(),
      proc.exited,
    ]);
    expect({ command, code, stderr }).toEqual({ command, code: 0, stderr: "" });
    expect(stdout.length).toBeGreaterThan(0);
  }
});
