CREATE TABLE `feed_head` (
	`id` integer PRIMARY KEY NOT NULL,
	`head` integer NOT NULL
);
--> statement-breakpoint
ALTER TABLE `events` ADD `tenant_id` text DEFAULT '' NOT NULL;--> statement-breakpoint
ALTER TABLE `events` ADD `position` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
CREATE INDEX `events_tenant_position_idx` ON `events` (`tenant_id`,`position`);--> statement-breakpoint
CREATE INDEX `events_service_position_idx` ON `events` (`service_id`,`position`);