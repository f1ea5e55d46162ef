import { useEffect, useState } from "preact/hooks";
import { type ApiFailure, api, failureOf } from "../api.ts";
import { ErrorNotice } from "../components.tsx";
import type { Identity } from "../identity.ts";

async function countAll(page: (cursor: string | undefined) => Promise<{ data: unknown[]; nextCursor?: string }>) {
  let count = 0;
  let cursor: string | undefined;
  do {
    const res = await page(cursor);
    count += res.data.length;
    cursor = res.nextCursor;
  } while (cursor);
  return count;
}

export function OverviewPage({ identity }: { identity: Identity | null }) {
  const [counts, setCounts] = useState<{ services: number; tokens: number } | null>(null);
  const [failure, setFailure] = useState<ApiFailure | null>(null);
  useEffect(() => {
    Promise.all([
      countAll((cursor) => api.services.listServices({ limit: 100, cursor })),
      countAll((cursor) => api.tokens.listApiTokens({ limit: 100, cursor, includeRevoked: false })),
    ]).then(
      ([services, tokens]) => setCounts({ services, tokens }),
      (error: unknown) => setFailure(failureOf(error)),
    );
  }, []);
  return (
    <main>
      <h1>{identity ? identity.tenant.name : "Overview"}</h1>
      {identity && (
        <p class="meta">
          Tenant <code>{identity.tenant.id}</code> · {identity.tenant.permissionMode}
          {identity.self && (
            <>
              {" · signed in as "}
              <strong>{identity.self.name}</strong> ({identity.self.scope}, {identity.self.role})
            </>
          )}
        </p>
      )}
      <ErrorNotice failure={failure} />
      {counts && (
        <ul class="cards">
          <li>
            <strong>{counts.services}</strong> services
          </li>
          <li>
            <strong>{counts.tokens}</strong> active API tokens
          </li>
        </ul>
      )}
    </main>
  );
}
