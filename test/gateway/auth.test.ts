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

test("the brief's twelve management routes are all declared", async () => {
  const world = await createWorld();
  try {
    const declared = declaredRoutes(world);
    for (const route of AUTHENTICATED_ROUTES.filter((r) => !r.pattern.endsWith("/events"))) {
      expect(declared).toContain(`${route.method} ${route.pattern}`);
    }
  } finally {
    await world.close();
  }
});
