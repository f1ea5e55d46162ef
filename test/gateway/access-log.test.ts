/**
 * INTAKE_ACCESS_LOG (docs/operations.md): one JSON line per request with a fixed set of
 * fields, and the server-side reason of every ingest 401 in the log only.
 */
import { afterEach, expect, test } from "bun:test";
import { createWorld, type World } from "../support/harness.ts";
import { sign } from "../support/signing.ts";

let world: World | undefined;
afterEach(async () => {
  await world?.close();
  world = undefined;
});

const FIELDS = [
  "time",
  "level",
  "msg",
  "request_id",
  "method",
  "route",
  "status",
  "duration_ms",
  "token_id",
  "service_id",
  "bytes_in",
  "bytes_out",
];

// biome-ignore lint/suspicious/noExplicitAny: log lines are read field by field
function accessLines(w: World): any[] {
  return w.logs.map((l) => JSON.parse(l)).filter((e) => e.msg === "access");
}

test("one line per request with every field; token_id is the tok_ id, never the token", async () => {
  world = await createWorld({ env: { INTAKE_ACCESS_LOG: "true" } });
  const svc = await world.createService("billing");
  const body = '{"a":1}';
  const before = accessLines(world).length;
  const replies = [
    await world.request("GET", "/v1/tenant"),
    await world.request("GET", `/v1/services/${svc.id}`),
    await world.request("GET", "/v1/tenant", { token: null }),
    await world.request("GET", "/no/such/path"),
    await world.request("POST", `/v1/ingest/${svc.id}`, {
      token: null,
      body,
      headers: { "x-service-signature": sign(svc.secret, body, world.clock.now()), "content-length": "7" },
    }),
  ];
  const lines = accessLines(world).slice(before);
  expect(lines.length).toBe(replies.length);
  for (const [i, line] of lines.entries()) {
    expect(Object.keys(line).sort()).toEqual([...FIELDS].sort());
    expect(line.request_id).toBe(replies[i]?.headers.get("x-request-id"));
    expect(line.status).toBe(replies[i]?.status);
    expect(typeof line.duration_ms).toBe("number");
    expect(line.bytes_out).toBe(Buffer.byteLength(replies[i]?.text ?? ""));
  }
  expect(lines.map((l) => [l.method, l.route, l.status, l.token_id, l.service_id])).toEqual([
    ["GET", "/v1/tenant", 200, world.ownerTokenId, null],
    ["GET", "/v1/services/:id", 200, world.ownerTokenId, svc.id],
    ["GET", "/v1/tenant", 401, null, null],
    ["GET", "unmatched", 404, null, null],
    ["POST", "/v1/ingest/:service_id", 202, null, svc.id],
  ]);
  expect(lines[4].bytes_in).toBe(7);
  expect(lines[0].bytes_in).toBe(0);
  expect(world.logs.join("\n")).not.toContain(world.ownerToken);
});

test("401 invalid_signature: the log names the reason, the response is the same for every reason", async () => {
  world = await createWorld({ env: { INTAKE_ACCESS_LOG: "true" } });
  const svc = await world.createService();
  const now = world.clock.now();
  const cases: Array<[reason: string, serviceId: string, signature: string]> = [
    ["unknown_service", `svc_${"0".repeat(32)}`, sign(svc.secret, "{}", now)],
    ["malformed_signature_header", svc.id, "t=abc,v1="],
    ["timestamp_outside_tolerance", svc.id, sign(svc.secret, "{}", now - 3_600_000)],
    ["no_matching_signature", svc.id, sign("whsec_not_the_secret", "{}", now)],
  ];
  const answers: string[] = [];
  for (const [reason, serviceId, signature] of cases) {
    const before = accessLines(world).length;
    const res = await world.request("POST", `/v1/ingest/${serviceId}`, {
      token: null,
      body: "{}",
      headers: { "x-service-signature": signature },
    });
    expect(res.status).toBe(401);
    const [line] = accessLines(world).slice(before);
    expect(line).toMatchObject({ route: "/v1/ingest/:service_id", status: 401, reason, service_id: serviceId });
    // Nothing of the reason reaches the caller: same body (but the request id), same headers.
    expect(res.text).not.toContain(reason);
    const headers = [...res.headers].filter(([k]) => k !== "x-request-id");
    answers.push(JSON.stringify({ body: { ...res.body.error, request_id: "-" }, headers }));
    for (const [, v] of res.headers) expect(v).not.toContain(reason);
  }
  expect(new Set(answers).size).toBe(1);
});

test("the reason reaches the log for an Ingest RPC on the main port too", async () => {
  world = await createWorld({ env: { INTAKE_ACCESS_LOG: "true" } });
  const svc = await world.createService();
  const res = await world.request("POST", "/intake.v1.IngestService/Ingest", {
    token: null,
    body: { serviceId: svc.id, signature: "t=1", payload: Buffer.from("{}").toString("base64") },
  });
  expect(res.status).toBe(401);
  expect(res.text).not.toContain("malformed_signature_header");
  const [line] = accessLines(world).slice(-1);
  expect(line).toMatchObject({
    route: "/intake.v1.IngestService/Ingest",
    status: 401,
    service_id: svc.id,
    reason: "malformed_signature_header",
  });
});

test("no access line when INTAKE_ACCESS_LOG is unset (the default)", async () => {
  world = await createWorld();
  await world.request("GET", "/v1/tenant");
  await world.request("GET", "/no/such/path");
  expect(accessLines(world)).toEqual([]);
});
