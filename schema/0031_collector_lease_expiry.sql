-- 0031: run-out leases found through an index (issue #27). Every lease request returns the leases that ran out to the
-- queue (expireLeaseRows); without this index that statement read the whole queue, 10,000 rows a request with a fleet
-- queued at once and ten times that at 100,000 devices. Only leased rows carry an expiry, so the index holds those.
CREATE INDEX collector_work_lease_expiry ON collector_work (lease_expires_at) WHERE lease_expires_at IS NOT NULL;
