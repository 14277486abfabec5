-- 0007: API keys seen in a request's query string. Such a key has leaked into proxy and browser logs: it is revoked
-- and marked exposed here (a side table, so api_keys itself keeps its shape).
CREATE TABLE api_key_exposures (
  key_id     INTEGER PRIMARY KEY REFERENCES api_keys(id) ON DELETE CASCADE,
  exposed_at INTEGER NOT NULL,
  request_id TEXT
) STRICT;
