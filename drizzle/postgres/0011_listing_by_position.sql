-- SPEC §18's listing walks (…, position) indexes newest stored first (docs/search.md): the three
-- (…, received_at, id) indexes it read before cost every insert and go; the service + type page
-- gets its (service_id, type, position). The export's B-tree on position becomes a BRIN index
-- (docs/export.md): positions follow the heap's append order.
DROP INDEX "events_position_idx";--> statement-breakpoint
DROP INDEX "events_tenant_received_idx";--> statement-breakpoint
DROP INDEX "events_service_received_idx";--> statement-breakpoint
DROP INDEX "events_service_type_received_idx";--> statement-breakpoint
CREATE INDEX "events_position_brin" ON "events" USING brin ("position");--> statement-breakpoint
CREATE INDEX "events_service_type_position_idx" ON "events" USING btree ("service_id","type","position");