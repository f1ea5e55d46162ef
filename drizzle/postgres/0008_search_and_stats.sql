CREATE TABLE "service_stats" (
	"service_id" text COLLATE "C" NOT NULL,
	"tenant_id" text COLLATE "C" NOT NULL,
	"bucket_start" bigint NOT NULL,
	"outcome" text NOT NULL,
	"count" bigint NOT NULL,
	CONSTRAINT "service_stats_service_id_bucket_start_outcome_pk" PRIMARY KEY("service_id","bucket_start","outcome"),
	CONSTRAINT "service_stats_outcome_check" CHECK ("service_stats"."outcome" in ('accepted', 'duplicate', 'malformed_signature_header', 'timestamp_outside_tolerance', 'no_matching_signature', 'paused', 'invalid_request', 'payload_too_large', 'rate_limited', 'unavailable', 'internal_error'))
);
--> statement-breakpoint
ALTER TABLE "service_stats" ADD CONSTRAINT "service_stats_service_id_services_id_fk" FOREIGN KEY ("service_id") REFERENCES "public"."services"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "service_stats_bucket_idx" ON "service_stats" USING btree ("bucket_start");--> statement-breakpoint
CREATE INDEX "events_tenant_received_idx" ON "events" USING btree ("tenant_id","received_at","id");--> statement-breakpoint
CREATE INDEX "events_service_received_idx" ON "events" USING btree ("service_id","received_at","id");--> statement-breakpoint
CREATE INDEX "events_service_type_received_idx" ON "events" USING btree ("service_id","type","received_at","id");