ALTER TABLE `services` ADD `rate_limit_limit` integer;--> statement-breakpoint
ALTER TABLE `services` ADD `rate_limit_window_seconds` integer;