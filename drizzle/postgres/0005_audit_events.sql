CREATE TABLE "audit_events" (
	"id" text COLLATE "C" PRIMARY KEY NOT NULL,
	"tenant_id" text COLLATE "C" NOT NULL,
	"occurred_at" bigint NOT NULL,
	"action" text NOT NULL,
	"actor_type" text NOT NULL,
	"actor_id" text COLLATE "C",
	"target_type" text NOT NULL,
	"target_id" text COLLATE "C" NOT NULL,
	"request_id" text,
	"changes" jsonb,
	CONSTRAINT "audit_events_action_check" CHECK ("audit_events"."action" in ('tenant.create', 'tenant.update', 'api_token.create', 'api_token.revoke', 'service.create', 'service.update', 'service.delete', 'service.secret_rotate'))
);
--> statement-breakpoint
ALTER TABLE "audit_events" ADD CONSTRAINT "audit_events_tenant_id_tenants_id_fk" FOREIGN KEY ("tenant_id") REFERENCES "public"."tenants"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "audit_events_tenant_id_idx" ON "audit_events" USING btree ("tenant_id","id");--> statement-breakpoint
CREATE INDEX "audit_events_tenant_action_idx" ON "audit_events" USING btree ("tenant_id","action","id");--> statement-breakpoint
CREATE INDEX "audit_events_tenant_target_idx" ON "audit_events" USING btree ("tenant_id","target_id","id");--> statement-breakpoint
CREATE INDEX "audit_events_occurred_at_idx" ON "audit_events" USING btree ("occurred_at");