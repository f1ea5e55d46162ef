CREATE TABLE `export_state` (
	`name` text PRIMARY KEY NOT NULL,
	`holder` text NOT NULL,
	`lease_expires_at` integer NOT NULL,
	`position` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `events_position_idx` ON `events` (`position`);