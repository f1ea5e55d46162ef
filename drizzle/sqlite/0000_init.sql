CREATE TABLE `api_tokens` (
	`id` text PRIMARY KEY NOT NULL,
	`tenant_id` text NOT NULL,
	`name` text NOT NULL,
	`scope` text NOT NULL,
	`role` text NOT NULL,
	`prefix` text NOT NULL,
	`digest` text NOT NULL,
	`created_at` integer NOT NULL,
	`created_by` text,
	`expires_at` integer,
	`last_used_at` integer,
	`revoked_at` integer,
	FOREIGN KEY (`tenant_id`) REFERENCES `tenants`(`id`) ON UPDATE no action ON DELETE no action,
	CONSTRAINT "api_tokens_scope_check" CHECK("api_tokens"."scope" in ('read_only', 'read_write')),
	CONSTRAINT "api_tokens_role_check" CHECK("api_tokens"."role" in ('owner', 'admin', 'member'))
);
--> statement-breakpoint
CREATE INDEX `api_tokens_tenant_id_idx` ON `api_tokens` (`tenant_id`,`id`);--> statement-breakpoint
CREATE UNIQUE INDEX `api_tokens_prefix_unique` ON `api_tokens` (`prefix`);--> statement-breakpoint
CREATE UNIQUE INDEX `api_tokens_digest_unique` ON `api_tokens` (`digest`);--> statement-breakpoint
CREATE TABLE `events` (
	`id` text PRIMARY KEY NOT NULL,
	`service_id` text NOT NULL,
	`received_at` integer NOT NULL,
	`idempotency_key` text,
	`payload` blob NOT NULL,
	FOREIGN KEY (`service_id`) REFERENCES `services`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `events_service_id_idx` ON `events` (`service_id`,`id`);--> statement-breakpoint
CREATE UNIQUE INDEX `events_service_idempotency_key_unique` ON `events` (`service_id`,`idempotency_key`);--> statement-breakpoint
CREATE TABLE `services` (
	`id` text PRIMARY KEY NOT NULL,
	`tenant_id` text NOT NULL,
	`service_name` text NOT NULL,
	`is_monitored` integer NOT NULL,
	`secret_ciphertext` text NOT NULL,
	`signing_secret_prefix` text NOT NULL,
	`previous_secret_ciphertext` text,
	`previous_secret_expires_at` integer,
	`secret_rotated_at` integer,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	FOREIGN KEY (`tenant_id`) REFERENCES `tenants`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `services_tenant_id_idx` ON `services` (`tenant_id`,`id`);--> statement-breakpoint
CREATE UNIQUE INDEX `services_tenant_name_unique` ON `services` (`tenant_id`,`service_name`);--> statement-breakpoint
CREATE TABLE `tenants` (
	`id` text PRIMARY KEY NOT NULL,
	`name` text NOT NULL,
	`permission_mode` text NOT NULL,
	`created_at` integer NOT NULL,
	CONSTRAINT "tenants_permission_mode_check" CHECK("tenants"."permission_mode" in ('flat', 'role_based'))
);
