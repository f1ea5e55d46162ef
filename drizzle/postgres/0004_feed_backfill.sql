-- Hand-written (drizzle-kit generate --custom): events stored before the feed existed get
-- their tenant and a feed position, in id (= arrival) order, and feed_head starts past them.
-- See docs/feed.md.
UPDATE "events" SET "tenant_id" = "services"."tenant_id" FROM "services" WHERE "services"."id" = "events"."service_id" AND "events"."tenant_id" = '';--> statement-breakpoint
UPDATE "events" SET "position" = "numbered"."p" FROM (SELECT "id", row_number() OVER (ORDER BY "id") AS "p" FROM "events") AS "numbered" WHERE "events"."id" = "numbered"."id" AND "events"."position" = 0;--> statement-breakpoint
INSERT INTO "feed_head" ("id", "head") SELECT 1, coalesce(max("position"), 0) FROM "events" ON CONFLICT ("id") DO NOTHING;
