-- 0006: the audit trail records every change through any door: which door (api, web, cli, system) and its
-- reference (API key id, web session, OS user), the request id, and the changed fields as before/after.

ALTER TABLE audit_log ADD COLUMN door TEXT NOT NULL DEFAULT 'web' CHECK (door IN ('api', 'web', 'cli', 'system'));
ALTER TABLE audit_log ADD COLUMN door_ref TEXT;
ALTER TABLE audit_log ADD COLUMN request_id TEXT;
-- JSON object: field -> {"before": ..., "after": ...}, or field -> "changed" for a secret.
ALTER TABLE audit_log ADD COLUMN changes TEXT NOT NULL DEFAULT '{}';
CREATE INDEX audit_log_action ON audit_log (action, at);
CREATE INDEX audit_log_actor ON audit_log (actor COLLATE NOCASE, at);
