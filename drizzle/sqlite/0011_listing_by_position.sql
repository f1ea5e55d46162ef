-- SPEC §18's listing walks (…, position) indexes newest stored first (docs/search.md): the three
-- (…, received_at, id) indexes it read before cost every insert and go; the service + type page
-- gets its (service_id, type, position).
DROP INDEX `events_tenant_received_idx`;--> statement-breakpoint
DROP INDEX `events_service_received_idx`;--> statement-breakpoint
DROP INDEX `events_service_type_received_idx`;--> statement-breakpoint
CREATE INDEX `events_service_type_position_idx` ON `events` (`service_id`,`type`,`position`);