ALTER TABLE "services" ADD COLUMN "rate_limit_limit" integer;--> statement-breakpoint
ALTER TABLE "services" ADD COLUMN "rate_limit_window_seconds" integer;--> statement-breakpoint
ALTER TABLE "services" ADD CONSTRAINT "services_rate_limit_check" CHECK (("services"."rate_limit_limit" is null) = ("services"."rate_limit_window_seconds" is null));