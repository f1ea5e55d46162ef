/**
 * The console's only way to the server: the generated Connect clients (gen/), over the Connect
 * protocol on the page's own origin — the same contract every internal caller uses. The
 * console holds no authority of its own: every call carries the signed-in token.
 */
import { type Client, Code, ConnectError, createClient, type Interceptor } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-web";
import { ApiTokenService } from "../../gen/intake/v1/api_tokens_pb.ts";
import { AuditService } from "../../gen/intake/v1/audit_pb.ts";
import { ErrorDetailSchema } from "../../gen/intake/v1/errors_pb.ts";
import { EventFeedService } from "../../gen/intake/v1/feed_pb.ts";
import { IncidentService } from "../../gen/intake/v1/incidents_pb.ts";
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
  /** The fields a 400 named, each with what is wrong with it. */
  details?: { field: string; message: string }[];
}

export function failureOf(error: unknown): ApiFailure {
  if (error instanceof ConnectError) {
    const detail = error.findDetails(ErrorDetailSchema)[0];
    return {
      code: detail?.code ?? Code[error.code],
      message: error.rawMessage,
      requestId: error.metadata.get("x-request-id"),
      details: detail?.details.map((d) => ({ field: d.field, message: d.message })),
    };
  }
  return { code: "network_error", message: "The server could not be reached.", requestId: null };
}

/**
 * Signs the console out when a call made with the signed-in token is refused with 401, saying
 * why — unless the tab has moved on to another token (or signed out) since the call began.
 */
function signOutOn401(token: string | null, error: unknown): void {
  if (token && session.token() === token && error instanceof ConnectError && error.code === Code.Unauthenticated) {
    session.signOut(`Signed out: ${error.rawMessage}`);
  }
}

/** A server stream's messages, with a failure that ends it passed through `signOutOn401` first. */
async function* watched<T>(token: string | null, messages: AsyncIterable<T>): AsyncIterable<T> {
  try {
    yield* messages;
  } catch (error) {
    signOutOn401(token, error);
    throw error;
  }
}

/**
 * Sends the signed-in token; a 401 on any call signs the console out, saying why. A streaming
 * call (StreamFeed) fails after its response began — its end carries the error — so its
 * messages are watched too: a stream ended by the token's revocation signs out like any call.
 */
const bearer: Interceptor = (next) => async (req) => {
  const token = session.token();
  if (token) req.header.set("authorization", `Bearer ${token}`);
  try {
    const res = await next(req);
    return res.stream ? { ...res, message: watched(token, res.message) } : res;
  } catch (error) {
    signOutOn401(token, error);
    throw error;
  }
};

/**
 * A streaming call (a live tail) is sent at low fetch priority: it stays open for the life of
 * the view, and must not hold back the page's own first calls, nor count as the page still
 * loading for tools that wait for its important requests to end (Lighthouse's load wait).
 * The Connect protocol marks a streaming request by its content type, `application/connect+…`.
 */
const fetchForCall: typeof fetch = (input, init) => {
  const streaming = new Headers(init?.headers).get("content-type")?.startsWith("application/connect+") ?? false;
  return fetch(input, streaming ? { ...init, priority: "low" } : init);
};

const transport = createConnectTransport({ baseUrl: location.origin, interceptors: [bearer], fetch: fetchForCall });

export interface Api {
  tokens: Client<typeof ApiTokenService>;
  services: Client<typeof ServiceRegistryService>;
  tenant: Client<typeof TenantService>;
  ingest: Client<typeof IngestService>;
  feed: Client<typeof EventFeedService>;
  setup: Client<typeof SetupService>;
  audit: Client<typeof AuditService>;
  incidents: Client<typeof IncidentService>;
}

export const api: Api = {
  tokens: createClient(ApiTokenService, transport),
  services: createClient(ServiceRegistryService, transport),
  tenant: createClient(TenantService, transport),
  ingest: createClient(IngestService, transport),
  feed: createClient(EventFeedService, transport),
  setup: createClient(SetupService, transport),
  audit: createClient(AuditService, transport),
  incidents: createClient(IncidentService, transport),
};

/** Every item of a paged list, in order: `page(cursor)` reads one page (the first with no cursor). */
export async function readAll<T>(
  page: (cursor: string | undefined) => Promise<{ data: T[]; nextCursor?: string }>,
): Promise<T[]> {
  const all: T[] = [];
  let cursor: string | undefined;
  do {
    const res = await page(cursor);
    all.push(...res.data);
    cursor = res.nextCursor;
  } while (cursor);
  return all;
}
