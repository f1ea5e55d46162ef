-- A service's listing (GET /v1/services/{id}/events) walks (service_id, position) newest stored
-- first (docs/api.md, "Pagination"); its (service_id, id) index costs every insert and goes.
DROP INDEX `events_service_id_idx`;