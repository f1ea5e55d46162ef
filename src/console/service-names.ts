/** The tenant's services, every page of them: for names beside ids and the explorer's service filter. */
import { useEffect, useState } from "preact/hooks";
import type { Service } from "../../gen/intake/v1/services_pb.ts";
import { type ApiFailure, api, failureOf, readAll } from "./api.ts";

export function allServices(signal?: AbortSignal): Promise<Service[]> {
  return readAll((cursor) => api.services.listServices({ limit: 100, cursor }, { signal }));
}

export function useServices(): {
  services: Service[] | null;
  names: ReadonlyMap<string, string>;
  failure: ApiFailure | null;
} {
  const [services, setServices] = useState<Service[] | null>(null);
  const [failure, setFailure] = useState<ApiFailure | null>(null);
  useEffect(() => {
    const abort = new AbortController();
    allServices(abort.signal).then(setServices, (error) => {
      if (!abort.signal.aborted) setFailure(failureOf(error));
    });
    return () => abort.abort();
  }, []);
  const names = new Map((services ?? []).map((s) => [s.id, s.serviceName]));
  return { services, names, failure };
}
