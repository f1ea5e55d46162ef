CREATE TABLE `incident_changes` (
	`position` integer PRIMARY KEY NOT NULL,
	`tenant_id` text NOT NULL,
	`service_id` text NOT NULL,
	`incident_id` text NOT NULL,
	`change` text NOT NULL,
	`occurred_at` integer NOT NULL,
	`incident` text NOT NULL,
	FOREIGN KEY (`tenant_id`) REFERENCES `tenants`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`service_id`) REFERENCES `services`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`incident_id`) REFERENCES `incidents`(`id`) ON UPDATE no action ON DELETE cascade,
	CONSTRAINT "incident_changes_change_check" CHECK("incident_changes"."change" in ('opened', 'acknowledged', 'resolved', 'severity_raised'))
);
--> statement-breakpoint
CREATE INDEX `incident_changes_tenant_position_idx` ON `incident_changes` (`tenant_id`,`position`);--> statement-breakpoint
CREATE INDEX `incident_changes_service_position_idx` ON `incident_changes` (`service_id`,`position`);--> statement-breakpoint
CREATE INDEX `incident_changes_incident_idx` ON `incident_changes` (`incident_id`);--> statement-breakpoint
CREATE TABLE `incidents` (
	`id` text PRIMARY KEY NOT NULL,
	`tenant_id` text NOT NULL,
	`service_id` text NOT NULL,
	`dedup_key` text NOT NULL,
	`status` text NOT NULL,
	`severity` text NOT NULL,
	`title` text NOT NULL,
	`source` text NOT NULL,
	`alert_count` integer NOT NULL,
	`created_at` integer NOT NULL,
	`last_event_at` integer NOT NULL,
	`acknowledged_at` integer,
	`resolved_at` integer,
	`acknowledged_by_type` text,
	`acknowledged_by_id` text,
	`resolved_by_type` text,
	`resolved_by_id` text,
	FOREIGN KEY (`tenant_id`) REFERENCES `tenants`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`service_id`) REFERENCES `services`(`id`) ON UPDATE no action ON DELETE cascade,
	CONSTRAINT "incidents_status_check" CHECK("incidents"."status" in ('triggered', 'acknowledged', 'resolved')),
	CONSTRAINT "incidents_severity_check" CHECK("incidents"."severity" in ('critical', 'error', 'warning', 'info'))
);
--> statement-breakpoint
CREATE UNIQUE INDEX `incidents_open_key_unique` ON `incidents` (`service_id`,`dedup_key`) WHERE "incidents"."status" <> 'resolved';--> statement-breakpoint
CREATE INDEX `incidents_tenant_id_idx` ON `incidents` (`tenant_id`,`id`);--> statement-breakpoint
CREATE INDEX `incidents_tenant_open_idx` ON `incidents` (`tenant_id`,`id`) WHERE "incidents"."status" <> 'resolved';--> statement-breakpoint
CREATE INDEX `incidents_tenant_status_idx` ON `incidents` (`tenant_id`,`status`,`id`);--> statement-breakpoint
CREATE INDEX `incidents_tenant_severity_idx` ON `incidents` (`tenant_id`,`severity`,`id`);--> statement-breakpoint
CREATE INDEX `incidents_service_id_idx` ON `incidents` (`service_id`,`id`);--> statement-breakpoint
CREATE INDEX `incidents_open_last_event_idx` ON `incidents` (`service_id`,`last_event_at`) WHERE "incidents"."status" <> 'resolved';--> statement-breakpoint
CREATE INDEX `incidents_resolved_at_idx` ON `incidents` (`resolved_at`) WHERE "incidents"."status" = 'resolved';--> statement-breakpoint
PRAGMA foreign_keys=OFF;--> statement-breakpoint
CREATE TABLE `__new_audit_events` (
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
	CONSTRAINT "audit_events_action_check" CHECK("__new_audit_events"."action" in ('tenant.create', 'tenant.update', 'api_token.create', 'api_token.revoke', 'service.create', 'service.update', 'service.delete', 'service.secret_rotate', 'incident.acknowledge', 'incident.resolve'))
);
--> statement-breakpoint
INSERT INTO `__new_audit_events`("id", "tenant_id", "occurred_at", "action", "actor_type", "actor_id", "target_type", "target_id", "request_id", "changes") SELECT "id", "tenant_id", "occurred_at", "action", "actor_type", "actor_id", "target_type", "target_id", "request_id", "changes" FROM `audit_events`;--> statement-breakpoint
DROP TABLE `audit_events`;--> statement-breakpoint
ALTER TABLE `__new_audit_events` RENAME TO `audit_events`;--> statement-breakpoint
PRAGMA foreign_keys=ON;--> statement-breakpoint
CREATE INDEX `audit_events_tenant_id_idx` ON `audit_events` (`tenant_id`,`id`);--> statement-breakpoint
CREATE INDEX `audit_events_tenant_action_idx` ON `audit_events` (`tenant_id`,`action`,`id`);--> statement-breakpoint
CREATE INDEX `audit_events_tenant_target_idx` ON `audit_events` (`tenant_id`,`target_id`,`id`);--> statement-breakpoint
CREATE INDEX `audit_events_occurred_at_idx` ON `audit_events` (`occurred_at`);--> statement-breakpoint
ALTER TABLE `events` ADD `type` text;--> statement-breakpoint
ALTER TABLE `events` ADD `incident_id` text;--> statement-breakpoint
CREATE INDEX `events_incident_id_idx` ON `events` (`incident_id`,`id`) WHERE "events"."incident_id" is not null;--> statement-breakpoint
ALTER TABLE `services` ADD `incident_auto_resolve_seconds` integer;