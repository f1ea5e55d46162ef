/**
 * Scenario 8: paging GET /v1/feed?limit=1000 against a one-statement floor (bench/floor-feed.ts)
 * that writes the same bytes, on SQLite and on PostgreSQL.
 */
import { pageFeed, seedFeed } from "../lib/feed.ts";
import { type Harness, type Reference, sqlitePath } from "../lib/harness.ts";
import { bootstrap, createService } from "../lib/intake.ts";
import { createScratchDatabase } from "../lib/postgres.ts";
import { stop } from "../lib/procs.ts";
import { fmtMs, fmtRatio, fmtRps, pairedRatio, type Row, type Series, summarize } from "../lib/report.ts";
import { loadIntoPageCache } from "../lib/seed.ts";

export async function run(h: Harness): Promise<void> {
  const { settings, rows, log, feedPlan, interleave, scenario, expectStatus, spec, start, stopIntake, startBaseline } =
    h;
  await scenario(8, "Feed paging: GET /v1/feed?limit=1000 vs one prepared SELECT (SQLite, PostgreSQL)", async () => {
    // The performance issue's goal: Intake ≥ 0.70× of a floor that reads the same rows with one
    // prepared statement and writes the same bytes, on each store.
    const feedRow = (title: string, it: Series, fl: Series): Row => {
      const r = pairedRatio(it, fl);
      const s = summarize(it);
      return {
        scenario: 8,
        title,
        goal: "≥ 0.70×",
        measured: `${fmtRatio(r)} (${fmtRps(s.rps)} vs ${fmtRps(summarize(fl).rps)} events/s), page p99 ${fmtMs(s.p99Us)} ms`,
        status: r >= 0.7 ? "met" : "missed",
      };
    };
    /** The floor and Intake paging the feed (two readers, limit 1000), interleaved; `on` names the store. */
    const pageBoth = async (on: string, floorUrl: string, intakeUrl: string, token: string) =>
      (await interleave(
        8,
        [
          {
            label: `floor: one prepared SELECT${on}, same bytes`,
            run: (d) => pageFeed(floorUrl, null, 1000, 2, d),
            warmupS: settings.getWarmupS,
          },
          {
            label: `Intake GET /v1/feed?limit=1000${on}`,
            run: (d) => pageFeed(intakeUrl, token, 1000, 2, d),
            warmupS: settings.getWarmupS,
          },
        ],
        feedPlan,
      )) as [Series, Series];
    const feedSpec = spec("feed");
    const boot = await bootstrap(feedSpec);
    const intake = await start(feedSpec);
    let floor: Reference | null = null;
    try {
      const svc = await createService(intake.url, boot.token, "bench-feed");
      const seconds = await seedFeed(
        sqlitePath(feedSpec),
        boot.tenantId,
        svc.id.slice("svc_".length),
        settings.feedEvents,
      );
      log(`seeded ${settings.feedEvents} feed events in ${seconds.toFixed(1)} s`);
      loadIntoPageCache(sqlitePath(feedSpec));
      await expectStatus(
        `${intake.url}/v1/feed?limit=1`,
        { headers: { authorization: `Bearer ${boot.token}` } },
        200,
        "feed",
      );
      floor = await startBaseline("bench/floor-feed.ts", {
        FLOOR_DATABASE: sqlitePath(feedSpec),
        FLOOR_TENANT_ID: boot.tenantId,
      });
      const [fl, it] = await pageBoth("", floor.url, intake.url, boot.token);
      rows.push(
        feedRow(
          "Feed paging, events/s read (limit 1000, 1 KiB, 2 readers) vs the one-statement floor (SQLite)",
          it,
          fl,
        ),
      );
    } finally {
      if (floor) await stop(floor.child);
      await stopIntake(intake);
    }

    const db = await createScratchDatabase();
    if ("unreachable" in db) {
      h.postgresSkipped(
        8,
        "Feed paging, events/s read (limit 1000, 1 KiB, 2 readers) vs the one-statement floor (PostgreSQL)",
        "≥ 0.70×",
        db.unreachable,
      );
      return;
    }
    try {
      const pgSpec = spec("feed-postgres", { DATABASE_URL: db.url });
      const pgBoot = await bootstrap(pgSpec);
      const pgIntake = await start(pgSpec);
      let pgFloor: Reference | null = null;
      try {
        const svc = await createService(pgIntake.url, pgBoot.token, "bench-feed");
        const seconds = await seedFeed(db.url, pgBoot.tenantId, svc.id.slice("svc_".length), settings.feedEvents);
        log(`seeded ${settings.feedEvents} feed events (PostgreSQL, then vacuum analyze) in ${seconds.toFixed(1)} s`);
        await expectStatus(
          `${pgIntake.url}/v1/feed?limit=1`,
          { headers: { authorization: `Bearer ${pgBoot.token}` } },
          200,
          "feed (PostgreSQL)",
        );
        pgFloor = await startBaseline(
          "bench/floor-feed.ts",
          { FLOOR_DATABASE_URL: db.url, FLOOR_TENANT_ID: pgBoot.tenantId },
          "floor-feed-postgres",
        );
        const [fl, it] = await pageBoth(" on PostgreSQL", pgFloor.url, pgIntake.url, pgBoot.token);
        rows.push(
          feedRow(
            "Feed paging, events/s read (limit 1000, 1 KiB, 2 readers) vs the one-statement floor (PostgreSQL)",
            it,
            fl,
          ),
        );
      } finally {
        if (pgFloor) await stop(pgFloor.child);
        await stopIntake(pgIntake);
      }
    } finally {
      await db.drop();
    }
  });
}
