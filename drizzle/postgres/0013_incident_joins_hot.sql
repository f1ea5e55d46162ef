-- An alert event that joins an open incident changes only `alert_count` and `last_event_at`
-- (and, when raised, `severity`): with no index over them, its new row version can be a HOT
-- update (no index entries, same page). The DROP is drizzle-kit's; the fillfactor is added by
-- hand (drizzle's schema has no table storage parameters): half of each page is left free for
-- those versions. It applies to pages written from now on. See docs/incidents.md, "Cost".
DROP INDEX "incidents_open_last_event_idx";--> statement-breakpoint
ALTER TABLE "incidents" SET (fillfactor = 50);
