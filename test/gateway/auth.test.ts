import { expect, test } from "bun:test";
import { createWorld } from "../support/harness.ts";
import { AUTHENTICATED_ROUTES, declaredRoutes, runAuthSuite, UNAUTHENTICATED_ROUTES } from "./auth-suite.ts";

for (const route of AUTHENTICATED_ROUTES) runAuthSuite(route);

test("every /v1 route the gateway declares is either in the auth suite or deliberately unauthenticated", async () => {
  const world = await createWorld();
  try {
    const covered = new Set(AUTHENTICATED_ROUTES.map((r) => `${r.method} ${r.pattern}`));
    const uncovered = declaredRoutes(world).filter((r) => !covered.has(r) && !UNAUTHENTICATED_ROUTES.includes(r));
    expect(uncovered).toEqual([]);
  } finally {
    await world.close();
  }
});

test("every route of the auth suite is declared by the gateway (a missing route fails here)", async () => {
  const world = await createWorld();
  try {
    const declared = declaredRoutes(world);
    const missing = AUTHENTICATED_ROUTES.map((r) => `${r.method} ${r.pattern}`).filter((r) => !declared.includes(r));
    expect(missing).toEqual([]);
  } finally {
    await world.close();
  }
});
