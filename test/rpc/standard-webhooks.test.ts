/** §19 over RPC: the scheme on ServiceRegistryService, the webhook-* fields on Ingest. */
import { afterEach, expect, test } from "bun:test";
import { Code, ConnectError, createClient, createRouterTransport } from "@connectrpc/connect";
import { Webhook } from "standardwebhooks";
import { IngestService } from "../../gen/intake/v1/ingest_pb.ts";
import { ServiceRegistryService, SignatureScheme } from "../../gen/intake/v1/services_pb.ts";
import { restErrorOf } from "../../src/rpc/errors.ts";
import { createWorld, type World } from "../support/harness.ts";

let world: World;
afterEach(() => world?.close());

function clients(w: World) {
  const transport = createRouterTransport(
    ({ service }) => {
      service(IngestService, w.app.impls.ingest);
      service(ServiceRegistryService, w.app.impls.services);
    },
    { router: { interceptors: [w.app.admission.interceptor] } },
  );
  return { ingest: createClient(IngestService, transport), services: createClient(ServiceRegistryService, transport) };
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

test("CreateService with STANDARD_WEBHOOKS; Ingest with the webhook fields signed by the library; webhook_id dedupes", async () => {
  world = await createWorld();
  const { ingest, services } = clients(world);
  const auth = { headers: { authorization: `Bearer ${world.ownerToken}` } };
  const created = await services.createService(
    { serviceName: "sw", signatureScheme: SignatureScheme.STANDARD_WEBHOOKS },
    auth,
  );
  expect(created.service?.signatureScheme).toBe(SignatureScheme.STANDARD_WEBHOOKS);
  expect(created.signingSecret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
  const id = created.service?.id as string;
  const body = '{"via":"rpc"}';
  const at = new Date(world.clock.now());
  const fields = {
    serviceId: id,
    payload: new TextEncoder().encode(body),
    webhookId: "msg_rpc",
    webhookTimestamp: String(Math.floor(at.getTime() / 1000)),
    webhookSignature: new Webhook(created.signingSecret).sign("msg_rpc", at, body),
  };
  const first = await ingest.ingest(fields);
  expect(first.duplicate).toBe(false);
  const again = await ingest.ingest(fields);
  expect(again.duplicate).toBe(true);
  expect(again.id).toBe(first.id);
  expect(await rpcError(ingest.ingest({ ...fields, idempotencyKey: "other" }))).toEqual({
    code: Code.InvalidArgument,
    rest: "invalid_request",
  });
  expect(await rpcError(ingest.ingest({ ...fields, webhookSignature: "v1,AAAA" }))).toEqual({
    code: Code.Unauthenticated,
    rest: "invalid_signature",
  });
});

test("UpdateService switches the scheme; an explicit UNSPECIFIED is INVALID_ARGUMENT", async () => {
  world = await createWorld();
  const { services } = clients(world);
  const auth = { headers: { authorization: `Bearer ${world.ownerToken}` } };
  const created = await services.createService({ serviceName: "s" }, auth);
  expect(created.service?.signatureScheme).toBe(SignatureScheme.STRIPE);
  const id = created.service?.id as string;
  const updated = await services.updateService({ id, signatureScheme: SignatureScheme.STANDARD_WEBHOOKS }, auth);
  expect(updated.service?.signatureScheme).toBe(SignatureScheme.STANDARD_WEBHOOKS);
  expect(await rpcError(services.updateService({ id, signatureScheme: SignatureScheme.UNSPECIFIED }, auth))).toEqual({
    code: Code.InvalidArgument,
    rest: "invalid_request",
  });
});
