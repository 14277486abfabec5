-- 0028: indexes for inventories of 100,000 devices (issue #27; figures in docs/benchmarks.md, "Scale of the inventory").
-- The lists show devices in service by default: this index holds their names in the list's order, so a page and the
-- count of a plain list read it alone instead of every row of the table (a retired device is not in it).
CREATE INDEX devices_in_service_name ON devices (name) WHERE retired_at IS NULL;
-- The dashboard's device tiles (total, enabled, unreachable, retired), for every device or a scope's groups: a narrow
-- index to count instead of the table's wide rows.
CREATE INDEX devices_state ON devices (group_id, retired_at, enabled, reachability);
