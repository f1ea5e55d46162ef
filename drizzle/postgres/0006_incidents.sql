CREATE TABLE "incident_changes" (
	"position" bigint PRIMARY KEY NOT NULL,
	"tenant_id" text COLLATE "C" NOT NULL,
	"service_id" text COLLATE "C" NOT NULL,
	"incident_id" text COLLATE "C" NOT NULL,
	"change" text NOT NULL,
	"occurred_at" bigint NOT NULL,
	"incident" text NOT NULL,
	CONSTRAINT "incident_changes_change_check" CHECK ("incident_changes"."change" in ('opened', 'acknowledged', 'resolved', 'severity_raised'))
);
--> statement-breakpoint
CREATE TABLE "incidents" (
	"id" text COLLATE "C" PRIMARY KEY NOT NULL,
	"tenant_id" text COLLATE "C" NOT NULL,
	"service_id" text COLLATE "C" NOT NULL,
	"dedup_key" text NOT NULL,
	"status" text NOT NULL,
	"severity" text NOT NULL,
	"title" text NOT NULL,
	"source" text NOT NULL,
	"alert_count" integer NOT NULL,
	"created_at" bigint NOT NULL,
	"last_event_at" bigint NOT NULL,
	"acknowledged_at" bigint,
	"resolved_at" bigint,
	"acknowledged_by_type" text,
	"acknowledged_by_id" text COLLATE "C",
	"resolved_by_type" text,
	"resolved_by_id" text COLLATE "C",
	CONSTRAINT "incidents_status_check" CHECK ("incidents"."status" in ('triggered', 'acknowledged', 'resolved')),
	CONSTRAINT "incidents_severity_check" CHECK ("incidents"."severity" in ('critical', 'error', 'warning', 'info'))
);
--> statement-breakpoint
ALTER TABLE "audit_events" DROP CONSTRAINT "audit_events_action_check";--> statement-breakpoint
ALTER TABLE "events" ADD COLUMN "type" text;--> statement-breakpoint
ALTER TABLE "events" ADD COLUMN "incident_id" text COLLATE "C";--> statement-breakpoint
ALTER TABLE "services" ADD COLUMN "incident_auto_resolve_seconds" integer;--> statement-breakpoint
ALTER TABLE "incident_changes" ADD CONSTRAINT "incident_changes_tenant_id_tenants_id_fk" FOREIGN KEY ("tenant_id") REFERENCES "public"."tenants"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "incident_changes" ADD CONSTRAINT "incident_changes_service_id_services_id_fk" FOREIGN KEY ("service_id") REFERENCES "public"."services"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "incident_changes" ADD CONSTRAINT "incident_changes_incident_id_incidents_id_fk" FOREIGN KEY ("incident_id") REFERENCES "public"."incidents"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "incidents" ADD CONSTRAINT "incidents_tenant_id_tenants_id_fk" FOREIGN KEY ("tenant_id") REFERENCES "public"."tenants"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "incidents" ADD CONSTRAINT "incidents_service_id_services_id_fk" FOREIGN KEY ("service_id") REFERENCES "public"."services"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "incident_changes_tenant_position_idx" ON "incident_changes" USING btree ("tenant_id","position");--> statement-breakpoint
CREATE INDEX "incident_changes_service_position_idx" ON "incident_changes" USING btree ("service_id","position");--> statement-breakpoint
CREATE INDEX "incident_changes_incident_idx" ON "incident_changes" USING btree ("incident_id");--> statement-breakpoint
CREATE UNIQUE INDEX "incidents_open_key_unique" ON "incidents" USING btree ("service_id","dedup_key") WHERE "incidents"."status" <> 'resolved';--> statement-breakpoint
CREATE INDEX "incidents_tenant_id_idx" ON "incidents" USING btree ("tenant_id","id");--> statement-breakpoint
CREATE INDEX "incidents_tenant_open_idx" ON "incidents" USING btree ("tenant_id","id") WHERE "incidents"."status" <> 'resolved';--> statement-breakpoint
CREATE INDEX "incidents_tenant_status_idx" ON "incidents" USING btree ("tenant_id","status","id");--> statement-breakpoint
CREATE INDEX "incidents_tenant_severity_idx" ON "incidents" USING btree ("tenant_id","severity","id");--> statement-breakpoint
CREATE INDEX "incidents_service_id_idx" ON "incidents" USING btree ("service_id","id");--> statement-breakpoint
CREATE INDEX "incidents_open_last_event_idx" ON "incidents" USING btree ("service_id","last_event_at") WHERE "incidents"."status" <> 'resolved';--> statement-breakpoint
CREATE INDEX "incidents_resolved_at_idx" ON "incidents" USING btree ("resolved_at") WHERE "incidents"."status" = 'resolved';--> statement-breakpoint
CREATE INDEX "events_incident_id_idx" ON "events" USING btree ("incident_id","id") WHERE "events"."incident_id" is not null;--> statement-breakpoint
ALTER TABLE "audit_events" ADD CONSTRAINT "audit_events_action_check" CHECK ("audit_events"."action" in ('tenant.create', 'tenant.update', 'api_token.create', 'api_token.revoke', 'service.create', 'service.update', 'service.delete', 'service.secret_rotate', 'incident.acknowledge', 'incident.resolve'));