-- 0019: compliance (docs/compliance.md): rules kept in the database, packs enabled per group, results per stored
-- version, waivers, and the background runs that re-judge the fleet after a rule change.

-- A rule imported or edited in the appliance (rule files in <data_dir>/compliance/ and the shipped packs are read
-- from their files). `definition` is the rule as JSON, checked by src/features/compliance/compliance-rule.schemas.ts.
CREATE TABLE compliance_rules (
  id          TEXT PRIMARY KEY CHECK (length(id) BETWEEN 1 AND 100),
  definition  TEXT NOT NULL,
  created_at  INTEGER NOT NULL,
  updated_at  INTEGER NOT NULL
) STRICT;

-- A shipped pack enabled for a group and its subgroups (group_id null: every device). Disabled: no row.
CREATE TABLE compliance_pack_groups (
  pack        TEXT NOT NULL,
  group_id    INTEGER REFERENCES device_groups(id) ON DELETE CASCADE,
  enabled_at  INTEGER NOT NULL
) STRICT;
CREATE UNIQUE INDEX compliance_pack_groups_unique ON compliance_pack_groups (pack, ifnull(group_id, 0));

-- One stored version judged: with which rules (a digest of the rule set) and when, and the rules it passed (a JSON
-- list: a fleet passes most rules, and a row per pass would be most of the writes). A version is judged once per rule
-- set; a rule change re-judges each device's newest version.
CREATE TABLE compliance_judged (
  id           INTEGER PRIMARY KEY,
  backup_id    TEXT NOT NULL UNIQUE REFERENCES backups(id) ON DELETE CASCADE,
  device_id    INTEGER NOT NULL,
  ruleset      TEXT NOT NULL,
  judged_at    INTEGER NOT NULL,
  passed_rules TEXT NOT NULL DEFAULT '[]' CHECK (json_valid(passed_rules)),
  failed       INTEGER NOT NULL
) STRICT;
CREATE INDEX compliance_judged_device ON compliance_judged (device_id, judged_at);

-- Each rule a judged version fails, with its failing lines (a rule that passes is in passed_rules above; one that
-- does not apply is in neither). Keyed by the judgement's integer id, so a fleet's results are appended rather than
-- scattered by backup UUID. `remediation` holds generated commands (golden rules) only; the rule's own text is read
-- from the rule. Waivers are applied when the results are read, so a waiver silences a failure at once and stops at
-- its expiry without a new judgement.
CREATE TABLE compliance_results (
  judged_id   INTEGER NOT NULL REFERENCES compliance_judged(id) ON DELETE CASCADE,
  rule_id     TEXT NOT NULL,
  failing     TEXT NOT NULL DEFAULT '[]', -- JSON: [{line, text, message}]
  remediation TEXT NOT NULL DEFAULT '',
  PRIMARY KEY (judged_id, rule_id)
) STRICT, WITHOUT ROWID;
CREATE INDEX compliance_results_rule ON compliance_results (rule_id, judged_id);

CREATE TABLE compliance_waivers (
  id          INTEGER PRIMARY KEY AUTOINCREMENT,
  device_id   INTEGER NOT NULL REFERENCES devices(id) ON DELETE CASCADE,
  rule_id     TEXT NOT NULL,
  reason      TEXT NOT NULL CHECK (length(reason) BETWEEN 1 AND 1000),
  owner       TEXT NOT NULL CHECK (length(owner) BETWEEN 1 AND 200),
  expires_at  INTEGER NOT NULL,
  created_by  TEXT NOT NULL,
  created_at  INTEGER NOT NULL
) STRICT;
CREATE INDEX compliance_waivers_device ON compliance_waivers (device_id, rule_id, expires_at);

-- A background re-judgement of the fleet (after a rule change), with its progress.
CREATE TABLE compliance_runs (
  id          TEXT PRIMARY KEY,
  reason      TEXT NOT NULL,
  state       TEXT NOT NULL CHECK (state IN ('running', 'finished', 'failed')),
  total       INTEGER NOT NULL DEFAULT 0,
  done        INTEGER NOT NULL DEFAULT 0,
  error       TEXT,
  started_at  INTEGER NOT NULL,
  finished_at INTEGER
) STRICT;
