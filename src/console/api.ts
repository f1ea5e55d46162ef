/**
 * The console's only way to the server: the generated Connect clients (gen/), over the Connect
 * protocol on the page's own origin — the same contract every internal caller uses. The
 * console holds no authority of its own: every call carries the signed-in token.
 */
import { type Client, Code, ConnectError, createClient, type Interceptor } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-web";
import { ApiTokenService } from "../../gen/intake/v1/api_tokens_pb.ts";
import { ErrorDetailSchema } from "../../gen/intake/v1/errors_pb.ts";
import { IngestService } from "../../gen/intake/v1/ingest_pb.ts";
import { ServiceRegistryService } from "../../gen/intake/v1/services_pb.ts";
import { SetupService } from "../../gen/intake/v1/setup_pb.ts";
import { TenantService } from "../../gen/intake/v1/tenant_pb.ts";
import { session } from "./session.ts";

/** What the console shows for a failed call: the API's own message, REST code and request id. */
export interface ApiFailure {
  code: string;
  message: string;
  requestId: string | null;
}

export function failureOf(error: unknown): ApiFailure {
  if (error instanceof ConnectError) {
    const detail = error.findDetails(ErrorDetailSchema)[0];
    return {
      code: detail?.code ?? Code[error.code],
      message: error.rawMessage,
      requestId: error.metadata.get("x-request-id"),
    };
  }
  return { code: "network_error", message: "The server could not be reached.", requestId: null };
}

/** Sends the signed-in token; a 401 on any call signs the console out, saying why. */
const bearer: Interceptor = (next) => async (req) => {
  const token = session.token();
  if (token) req.header.set("authorization", `Bearer ${token}`);
  try {
    return await next(req);
  } catch (error) {
    if (token && error instanceof ConnectError && error.code === Code.Unauthenticated) {
      session.signOut(`Signed out: ${error.rawMessage}`);
    }
    throw error;
  }
};

const transport = createConnectTransport({ baseUrl: location.origin, interceptors: [bearer] });

export interface Api {
  tokens: Client<typeof ApiTokenService>;
  services: Client<typeof ServiceRegistryService>;
  tenant: Client<typeof TenantService>;
  ingest: Client<typeof IngestService>;
  setup: Client<typeof SetupService>;
}

export const api: Api = {
  tokens: createClient(ApiTokenService, transport),
  services: createClient(ServiceRegistryService, transport),
  tenant: createClient(TenantService, transport),
  ingest: createClient(IngestService, transport),
  setup: createClient(SetupService, transport),
};
