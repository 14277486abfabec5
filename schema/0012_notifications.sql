-- 0012: notifications: channels (secrets encrypted), rules, the outbox written with the event, deliveries and their log.

-- A place notifications go. secret_enc holds the channel's secrets as one encrypted JSON object (webhook URL with
-- token for Slack/Teams, HMAC secret, SMTP password); settings holds the rest (never a secret).
CREATE TABLE notification_channels (
  id           INTEGER PRIMARY KEY AUTOINCREMENT,
  name         TEXT NOT NULL UNIQUE,
  type         TEXT NOT NULL CHECK (type IN ('webhook', 'slack', 'teams', 'email', 'syslog')),
  settings     TEXT NOT NULL CHECK (json_valid(settings)),
  secret_enc   BLOB,
  last_sent_at INTEGER,
  created_at   INTEGER NOT NULL,
  updated_at   INTEGER NOT NULL
) STRICT;

-- Which events, for which device groups (subgroups included; none = every device), go to which channels.
CREATE TABLE notification_rules (
  id           INTEGER PRIMARY KEY AUTOINCREMENT,
  name         TEXT NOT NULL UNIQUE,
  events       TEXT NOT NULL CHECK (json_valid(events)),
  include_diff INTEGER NOT NULL DEFAULT 0 CHECK (include_diff IN (0, 1)),
  created_at   INTEGER NOT NULL,
  updated_at   INTEGER NOT NULL
) STRICT;
CREATE TABLE notification_rule_channels (
  rule_id    INTEGER NOT NULL REFERENCES notification_rules(id) ON DELETE CASCADE,
  channel_id INTEGER NOT NULL REFERENCES notification_channels(id) ON DELETE CASCADE,
  PRIMARY KEY (rule_id, channel_id)
) STRICT;
CREATE TABLE notification_rule_groups (
  rule_id  INTEGER NOT NULL REFERENCES notification_rules(id) ON DELETE CASCADE,
  group_id INTEGER NOT NULL REFERENCES device_groups(id) ON DELETE CASCADE,
  PRIMARY KEY (rule_id, group_id)
) STRICT;

-- One message to send: a delivery id stable across retries and restarts, its body fixed when it was built.
CREATE TABLE notification_deliveries (
  id              TEXT PRIMARY KEY,          -- UUID, sent as X-Confvault-Delivery / in the Message-ID
  channel_id      INTEGER NOT NULL REFERENCES notification_channels(id) ON DELETE CASCADE,
  status          TEXT NOT NULL CHECK (status IN ('pending', 'sent', 'dead')),
  attempts        INTEGER NOT NULL DEFAULT 0,
  next_attempt_at INTEGER NOT NULL,
  last_error      TEXT,
  event_count     INTEGER NOT NULL,
  body            TEXT NOT NULL CHECK (json_valid(body)),
  created_at      INTEGER NOT NULL,
  sent_at         INTEGER
) STRICT;
CREATE INDEX notification_deliveries_due ON notification_deliveries (next_attempt_at) WHERE status = 'pending';
CREATE INDEX notification_deliveries_channel ON notification_deliveries (channel_id, created_at DESC);

-- The outbox: one row per event and channel, written in the transaction of the event; delivery_id is set when a
-- delivery (one message or a digest) takes it.
CREATE TABLE notification_outbox (
  id          INTEGER PRIMARY KEY AUTOINCREMENT,
  channel_id  INTEGER NOT NULL REFERENCES notification_channels(id) ON DELETE CASCADE,
  rule_id     INTEGER REFERENCES notification_rules(id) ON DELETE SET NULL,
  event       TEXT NOT NULL,
  device_id   INTEGER REFERENCES devices(id) ON DELETE SET NULL,
  include_diff INTEGER NOT NULL DEFAULT 0,
  item        TEXT NOT NULL CHECK (json_valid(item)),
  occurred_at INTEGER NOT NULL,
  delivery_id TEXT REFERENCES notification_deliveries(id) ON DELETE CASCADE
) STRICT;
CREATE INDEX notification_outbox_waiting ON notification_outbox (channel_id, id) WHERE delivery_id IS NULL;

-- Devices already announced as stale (one backup_stale per episode); cleared by their next successful backup.
CREATE TABLE device_stale_notices (
  device_id   INTEGER PRIMARY KEY REFERENCES devices(id) ON DELETE CASCADE,
  noticed_at  INTEGER NOT NULL
) STRICT;
