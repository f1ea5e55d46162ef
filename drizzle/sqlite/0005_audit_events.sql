CREATE TABLE `audit_events` (
	`id` text PRIMARY KEY NOT NULL,
	`tenant_id` text NOT NULL,
	`occurred_at` integer NOT NULL,
	`action` text NOT NULL,
	`actor_type` text NOT NULL,
	`actor_id` text,
	`target_type` text NOT NULL,
	`target_id` text NOT NULL,
	`request_id` text,
	`changes` text,
	FOREIGN KEY (`tenant_id`) REFERENCES `tenants`(`id`) ON UPDATE no action ON DELETE no action,
	CONSTRAINT "audit_events_action_check" CHECK("audit_events"."action" in ('tenant.create', 'tenant.update', 'api_token.create', 'api_token.revoke', 'service.create', 'service.update', 'service.delete', 'service.secret_rotate'))
);
--> statement-breakpoint
CREATE INDEX `audit_events_tenant_id_idx` ON `audit_events` (`tenant_id`,`id`);--> statement-breakpoint
CREATE INDEX `audit_events_tenant_action_idx` ON `audit_events` (`tenant_id`,`action`,`id`);--> statement-breakpoint
CREATE INDEX `audit_events_tenant_target_idx` ON `audit_events` (`tenant_id`,`target_id`,`id`);--> statement-breakpoint
CREATE INDEX `audit_events_occurred_at_idx` ON `audit_events` (`occurred_at`);