import { afterEach, expect, test } from "bun:test";
import { Code, ConnectError, createClient, createRouterTransport } from "@connectrpc/connect";
import { IngestService } from "../../gen/intake/v1/ingest_pb.ts";
import { signPayload } from "../../src/domain/signing.ts";
import { restErrorOf } from "../../src/rpc/errors.ts";
import { createWorld, type World } from "../support/harness.ts";

let world: World;
afterEach(() => world?.close());

/** IngestService through an in-memory Connect transport, admitted like on the real router. */
function client(w: World) {
  const transport = createRouterTransport(({ service }) => service(IngestService, w.app.impls.ingest), {
    router: { interceptors: [w.app.admission.interceptor] },
  });
  return createClient(IngestService, transport);
}

async function rpcError(call: Promise<unknown>): Promise<{ code: Code; rest: string | undefined }> {
  try {
    await call;
  } catch (error) {
    const e = ConnectError.from(error);
    return { code: e.code, rest: restErrorOf(e)?.code };
  }
  throw new Error("expected the call to fail");
}

const seconds = (w: World) => Math.floor(w.clock.now() / 1000);

test("Ingest needs no bearer token; ListEvents returns the payload as the exact bytes", async () => {
  world = await createWorld();
  const svc = await world.createService();
  const rpc = client(world);
  const payload = new TextEncoder().encode('{ "é" : [1,\t2] }\n');
  const res = await rpc.ingest({
    serviceId: svc.id,
    signature: signPayload(payload, svc.secret, seconds(world)),
    payload,
    idempotencyKey: "rpc-1",
  });
  expect(res.id).toMatch(/^evt_[0-9a-f]{32}$/);
  expect(res.duplicate).toBe(false);
  expect(Number(res.receivedAt?.seconds)).toBe(seconds(world));

  const again = await rpc.ingest({
    serviceId: svc.id,
    signature: signPayload("{}", svc.secret, seconds(world)),
    payload: new TextEncoder().encode("{}"),
    idempotencyKey: "rpc-1",
  });
  expect(again.duplicate).toBe(true);
  expect(again.id).toBe(res.id);

  const listed = await rpc.listEvents(
    { serviceId: svc.id, limit: 10 },
    { headers: { authorization: `Bearer ${world.ownerToken}` } },
  );
  expect(listed.data).toHaveLength(1);
  const [event] = listed.data;
  expect(event?.id).toBe(res.id);
  expect(event?.serviceId).toBe(svc.id);
  expect(event?.idempotencyKey).toBe("rpc-1");
  expect(event?.payload).toEqual(payload);
  expect(listed.nextCursor).toBeUndefined();
});

test("Ingest errors carry the REST code: unauthenticated invalid_signature, failed_precondition ingestion_paused, invalid_argument, resource_exhausted", async () => {
  world = await createWorld({ env: { INTAKE_MAX_EVENT_BYTES: "32" } });
  const svc = await world.createService();
  const rpc = client(world);
  const body = new TextEncoder().encode("{}");
  const sign = (b: Uint8Array) => signPayload(b, svc.secret, seconds(world));

  expect(await rpcError(rpc.ingest({ serviceId: svc.id, signature: "t=1,v1=00", payload: body }))).toEqual({
    code: Code.Unauthenticated,
    rest: "invalid_signature",
  });
  expect(await rpcError(rpc.ingest({ serviceId: "svc_x", signature: sign(body), payload: body }))).toEqual({
    code: Code.Unauthenticated,
    rest: "invalid_signature",
  });
  const big = new TextEncoder().encode(`{"p":"${"x".repeat(40)}"}`);
  expect(await rpcError(rpc.ingest({ serviceId: svc.id, signature: sign(big), payload: big }))).toEqual({
    code: Code.ResourceExhausted,
    rest: "payload_too_large",
  });
  const array = new TextEncoder().encode("[]");
  expect(await rpcError(rpc.ingest({ serviceId: svc.id, signature: sign(array), payload: array }))).toEqual({
    code: Code.InvalidArgument,
    rest: "invalid_request",
  });
  expect(
    await rpcError(rpc.ingest({ serviceId: svc.id, signature: sign(body), payload: body, idempotencyKey: "" })),
  ).toEqual({ code: Code.InvalidArgument, rest: "invalid_request" });

  await world.request("PATCH", `/v1/services/${svc.id}`, { body: { is_monitored: false } });
  expect(await rpcError(rpc.ingest({ serviceId: svc.id, signature: sign(body), payload: body }))).toEqual({
    code: Code.FailedPrecondition,
    rest: "ingestion_paused",
  });
});

test("ListEvents needs a bearer token and masks another tenant's service as not_found", async () => {
  world = await createWorld();
  const svc = await world.createService();
  const other = await world.otherTenant();
  const rpc = client(world);
  expect(await rpcError(rpc.listEvents({ serviceId: svc.id }))).toEqual({
    code: Code.Unauthenticated,
    rest: "missing_credentials",
  });
  expect(
    await rpcError(rpc.listEvents({ serviceId: svc.id }, { headers: { authorization: `Bearer ${other.token}` } })),
  ).toEqual({ code: Code.NotFound, rest: "not_found" });
});
