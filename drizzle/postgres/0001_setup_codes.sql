CREATE TABLE "setup_codes" (
	"digest" text PRIMARY KEY NOT NULL,
	"created_at" bigint NOT NULL,
	"expires_at" bigint NOT NULL,
	"used_at" bigint,
	"tenant_id" text COLLATE "C"
);
