CREATE TABLE "feed_head" (
	"id" bigint PRIMARY KEY NOT NULL,
	"head" bigint NOT NULL
);
--> statement-breakpoint
ALTER TABLE "events" ADD COLUMN "tenant_id" text COLLATE "C" DEFAULT '' NOT NULL;--> statement-breakpoint
ALTER TABLE "events" ADD COLUMN "position" bigint DEFAULT 0 NOT NULL;--> statement-breakpoint
CREATE INDEX "events_tenant_position_idx" ON "events" USING btree ("tenant_id","position");--> statement-breakpoint
CREATE INDEX "events_service_position_idx" ON "events" USING btree ("service_id","position");