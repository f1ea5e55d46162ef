import { create } from "@bufbuild/protobuf";
import { GetHealthResponseSchema, type HealthService } from "../../gen/intake/v1/health_pb.ts";
import type { Impl } from "./impl.ts";

/** No store, no cache: the answer is built once. */
export function createHealthImpl(version: string): Impl<typeof HealthService> {
  const response = create(GetHealthResponseSchema, { status: "ok", version });
  return { getHealth: async () => response };
}
