CREATE TABLE `service_stats` (
	`service_id` text NOT NULL,
	`tenant_id` text NOT NULL,
	`bucket_start` integer NOT NULL,
	`outcome` text NOT NULL,
	`count` integer NOT NULL,
	PRIMARY KEY(`service_id`, `bucket_start`, `outcome`),
	FOREIGN KEY (`service_id`) REFERENCES `services`(`id`) ON UPDATE no action ON DELETE cascade,
	CONSTRAINT "service_stats_outcome_check" CHECK("service_stats"."outcome" in ('accepted', 'duplicate', 'malformed_signature_header', 'timestamp_outside_tolerance', 'no_matching_signature', 'paused', 'invalid_request', 'payload_too_large', 'rate_limited', 'unavailable', 'internal_error'))
);
--> statement-breakpoint
CREATE INDEX `service_stats_bucket_idx` ON `service_stats` (`bucket_start`);--> statement-breakpoint
CREATE INDEX `events_tenant_received_idx` ON `events` (`tenant_id`,`received_at`,`id`);--> statement-breakpoint
CREATE INDEX `events_service_received_idx` ON `events` (`service_id`,`received_at`,`id`);--> statement-breakpoint
CREATE INDEX `events_service_type_received_idx` ON `events` (`service_id`,`type`,`received_at`,`id`);