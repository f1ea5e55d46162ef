CREATE TABLE "api_tokens" (
	"id" text COLLATE "C" PRIMARY KEY NOT NULL,
	"tenant_id" text COLLATE "C" NOT NULL,
	"name" text NOT NULL,
	"scope" text NOT NULL,
	"role" text NOT NULL,
	"prefix" text NOT NULL,
	"digest" text NOT NULL,
	"created_at" bigint NOT NULL,
	"created_by" text COLLATE "C",
	"expires_at" bigint,
	"last_used_at" bigint,
	"revoked_at" bigint,
	CONSTRAINT "api_tokens_prefix_unique" UNIQUE("prefix"),
	CONSTRAINT "api_tokens_digest_unique" UNIQUE("digest"),
	CONSTRAINT "api_tokens_scope_check" CHECK ("api_tokens"."scope" in ('read_only', 'read_write')),
	CONSTRAINT "api_tokens_role_check" CHECK ("api_tokens"."role" in ('owner', 'admin', 'member'))
);
--> statement-breakpoint
CREATE TABLE "events" (
	"id" text COLLATE "C" PRIMARY KEY NOT NULL,
	"service_id" text COLLATE "C" NOT NULL,
	"received_at" bigint NOT NULL,
	"idempotency_key" text,
	"payload" "bytea" NOT NULL,
	CONSTRAINT "events_service_idempotency_key_unique" UNIQUE("service_id","idempotency_key")
);
--> statement-breakpoint
CREATE TABLE "services" (
	"id" text COLLATE "C" PRIMARY KEY NOT NULL,
	"tenant_id" text COLLATE "C" NOT NULL,
	"service_name" text NOT NULL,
	"is_monitored" boolean NOT NULL,
	"secret_ciphertext" text NOT NULL,
	"signing_secret_prefix" text NOT NULL,
	"previous_secret_ciphertext" text,
	"previous_secret_expires_at" bigint,
	"secret_rotated_at" bigint,
	"created_at" bigint NOT NULL,
	"updated_at" bigint NOT NULL,
	CONSTRAINT "services_tenant_name_unique" UNIQUE("tenant_id","service_name")
);
--> statement-breakpoint
CREATE TABLE "tenants" (
	"id" text COLLATE "C" PRIMARY KEY NOT NULL,
	"name" text NOT NULL,
	"permission_mode" text NOT NULL,
	"created_at" bigint NOT NULL,
	CONSTRAINT "tenants_permission_mode_check" CHECK ("tenants"."permission_mode" in ('flat', 'role_based'))
);
--> statement-breakpoint
ALTER TABLE "api_tokens" ADD CONSTRAINT "api_tokens_tenant_id_tenants_id_fk" FOREIGN KEY ("tenant_id") REFERENCES "public"."tenants"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "events" ADD CONSTRAINT "events_service_id_services_id_fk" FOREIGN KEY ("service_id") REFERENCES "public"."services"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "services" ADD CONSTRAINT "services_tenant_id_tenants_id_fk" FOREIGN KEY ("tenant_id") REFERENCES "public"."tenants"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "api_tokens_tenant_id_idx" ON "api_tokens" USING btree ("tenant_id","id");--> statement-breakpoint
CREATE INDEX "events_service_id_idx" ON "events" USING btree ("service_id","id");--> statement-breakpoint
CREATE INDEX "services_tenant_id_idx" ON "services" USING btree ("tenant_id","id");