/**
 * The standard grpc.health.v1.Health service for the h2c listener, so load balancers,
 * Kubernetes gRPC probes and grpc_health_probe can ask without a credential. Like Intake's
 * own health probe it touches no store: it reports whether this listener is serving.
 */
import { create } from "@bufbuild/protobuf";
import type { ServiceImpl } from "@connectrpc/connect";
import {
  type Health,
  type HealthCheckResponse,
  HealthCheckResponseSchema,
  HealthCheckResponse_ServingStatus as ServingStatus,
} from "../../gen/grpc/health/v1/health_pb.ts";
import { connectErrorFor } from "./errors.ts";

export interface GrpcHealth {
  impl: ServiceImpl<typeof Health>;
  /** false while draining: probes see NOT_SERVING and stop sending new calls here. */
  setServing(serving: boolean): void;
  /** Ends every open Watch stream (after it has seen the last status), so a drain can finish. */
  endWatches(): void;
}

/** `services`: the names Check knows besides "" (the server as a whole). */
export function createGrpcHealth(services: readonly string[]): GrpcHealth {
  const known = new Set(["", ...services]);
  let serving = true;
  let ended = false;
  const waiters = new Set<() => void>();

  const statusOf = (service: string): ServingStatus => {
    if (!known.has(service)) return ServingStatus.SERVICE_UNKNOWN;
    return serving ? ServingStatus.SERVING : ServingStatus.NOT_SERVING;
  };
  const reply = (status: ServingStatus): HealthCheckResponse => create(HealthCheckResponseSchema, { status });

  /** Resolves on the next status change or when the call ends, whichever is first. */
  const nextChange = (signal: AbortSignal) =>
    new Promise<void>((resolve) => {
      const done = () => {
        waiters.delete(done);
        signal.removeEventListener("abort", done);
        resolve();
      };
      waiters.add(done);
      signal.addEventListener("abort", done, { once: true });
    });

  const impl: ServiceImpl<typeof Health> = {
    async check(request) {
      if (!known.has(request.service)) {
        throw connectErrorFor("not_found", `Unknown service "${request.service}".`);
      }
      return reply(statusOf(request.service));
    },
    // Cheap: one waiter per open stream, woken only by setServing; the stream ends with the
    // call (client cancel) or with endWatches (the listener draining).
    async *watch(request, context) {
      let last = statusOf(request.service);
      yield reply(last);
      while (!ended && !context.signal.aborted) {
        await nextChange(context.signal);
        if (context.signal.aborted) return;
        // A drain flips to NOT_SERVING and ends the watches at once: send that last status first.
        const now = statusOf(request.service);
        if (now !== last) {
          last = now;
          yield reply(now);
        }
      }
    },
  };

  return {
    impl,
    setServing(value) {
      if (value === serving) return;
      serving = value;
      for (const wake of [...waiters]) wake();
    },
    endWatches() {
      ended = true;
      for (const wake of [...waiters]) wake();
    },
  };
}
