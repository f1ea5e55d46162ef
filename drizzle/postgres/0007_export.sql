CREATE TABLE "export_state" (
	"name" text PRIMARY KEY NOT NULL,
	"holder" text NOT NULL,
	"lease_expires_at" bigint NOT NULL,
	"position" bigint NOT NULL
);
--> statement-breakpoint
CREATE INDEX "events_position_idx" ON "events" USING btree ("position");