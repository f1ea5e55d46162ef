CREATE TABLE `setup_codes` (
	`digest` text PRIMARY KEY NOT NULL,
	`created_at` integer NOT NULL,
	`expires_at` integer NOT NULL,
	`used_at` integer,
	`tenant_id` text
);
