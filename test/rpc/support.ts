/**
 * A world served on real listeners: Bun.serve on an ephemeral port with the app's fetch
 * (Connect and gRPC-Web on the main port), and the h2c gRPC listener on another.
 */
import { type CallOptions, ConnectError, type Transport } from "@connectrpc/connect";
import { createConnectTransport, createGrpcTransport, createGrpcWebTransport } from "@connectrpc/connect-node";
import { type ErrorDetail, ErrorDetailSchema } from "../../gen/intake/v1/errors_pb.ts";
import type { GrpcListener } from "../../src/rpc/grpc-server.ts";
import { createWorld, type World, type WorldOptions } from "../support/harness.ts";

export interface Served {
  world: World;
  /** http://127.0.0.1:<main port> */
  baseUrl: string;
  grpc: GrpcListener;
  /** http://127.0.0.1:<gRPC port> */
  grpcUrl: string;
  close(): Promise<void>;
}

export async function serveWorld(options?: WorldOptions): Promise<Served> {
  const world = await createWorld(options);
  const http = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: world.app.fetch });
  const grpc = await world.app.listenGrpc(0);
  return {
    world,
    baseUrl: `http://127.0.0.1:${http.port}`,
    grpc,
    grpcUrl: `http://127.0.0.1:${grpc.port}`,
    async close() {
      await Promise.all([http.stop(true), grpc.close()]);
      await world.close();
    },
  };
}

export const TRANSPORTS = ["connect-json", "connect-binary", "grpc-web", "grpc"] as const;
export type TransportName = (typeof TRANSPORTS)[number];

/** Connect JSON/binary and gRPC-Web on the main port (HTTP/1.1); gRPC on the h2c listener. */
export function transportFor(served: Served, name: TransportName): Transport {
  switch (name) {
    case "connect-json":
      return createConnectTransport({ baseUrl: served.baseUrl, httpVersion: "1.1", useBinaryFormat: false });
    case "connect-binary":
      return createConnectTransport({ baseUrl: served.baseUrl, httpVersion: "1.1", useBinaryFormat: true });
    case "grpc-web":
      return createGrpcWebTransport({ baseUrl: served.baseUrl, httpVersion: "1.1" });
    case "grpc":
      return createGrpcTransport({ baseUrl: served.grpcUrl });
  }
}

export function bearer(token: string): CallOptions {
  return { headers: { authorization: `Bearer ${token}` } };
}

/** What a caller branches on: the Connect code and the REST code of the ErrorDetail. */
export interface RpcFailure {
  code: string;
  restCode: string | undefined;
  message: string;
  fields: string[];
}

export async function failure(call: Promise<unknown>): Promise<RpcFailure> {
  try {
    await call;
  } catch (error) {
    const e = ConnectError.from(error);
    const [detail] = e.findDetails(ErrorDetailSchema) as ErrorDetail[];
    return {
      code: codeName(e.code),
      restCode: detail?.code,
      message: e.rawMessage,
      fields: detail?.details.map((d) => d.field) ?? [],
    };
  }
  throw new Error("expected the call to fail");
}

const CODE_NAMES: Record<number, string> = {
  3: "invalid_argument",
  5: "not_found",
  6: "already_exists",
  7: "permission_denied",
  8: "resource_exhausted",
  9: "failed_precondition",
  12: "unimplemented",
  13: "internal",
  14: "unavailable",
  16: "unauthenticated",
};

export function codeName(code: number): string {
  return CODE_NAMES[code] ?? `code_${code}`;
}
