// The rules in force: database rules, <data_dir>/compliance/*.yaml files and the packs enabled per group, merged into one rule set with a digest; importing rules and enabling packs.
import { createHash } from 'node:crypto';
import { readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import type { DB } from '../../db/open';
import { ApiError, type FieldError } from '../../errors';
import type { Actor } from '../../identity/actor';
import { authorize } from '../../identity/policy';
import { COMPLIANCE_OPS } from './compliance.policy';
import { recordAudit } from '../audit/audit.service';
import type { ComplianceRule } from './compliance-rule.schemas';
import { checkRuleText, loadPacks, loadRuleFolder, ruleFolder } from './rule-files';
import {
  deletePackGroups,
  deleteRuleRow,
  insertPackGroup,
  listGroupRows,
  listPackGroupRows,
  listRuleRows,
  ruleRowsStamp,
  upsertRuleRow,
  type PackGroupRow,
} from './compliance.store';
import type { CompliancePack } from './compliance-rule.schemas';

export type RuleOrigin = 'database' | 'file' | 'pack';

export interface RuleInForce {
  /** The rule as judged (a pack rule limited to the groups its pack is enabled for). */
  rule: ComplianceRule;
  /** The rule as written (what `rule export` and `rule show` print). */
  written: ComplianceRule;
  origin: RuleOrigin;
  /** The file of a file rule, the pack of a pack rule. */
  from: string | null;
}

export interface Ruleset {
  /** The rules judged, pack rules narrowed to the groups their pack is enabled for. */
  rules: ComplianceRule[];
  info: Map<string, RuleInForce>;
  digest: string;
  /** Rule files that could not be loaded (their rules are not in force). */
  problems: { path: string; errors: FieldError[] }[];
}

let packs: CompliancePack[] | null = null;
export function shippedPacks(): CompliancePack[] {
  packs ??= loadPacks();
  return packs;
}

/** Each group's path ("dc/core"), by id. */
export function groupPaths(db: DB): Map<number, string> {
  const rows = new Map(listGroupRows(db).map((g) => [g.id, g]));
  const paths = new Map<number, string>();
  const pathOf = (id: number, depth = 0): string => {
    const known = paths.get(id);
    if (known !== undefined) return known;
    const g = rows.get(id);
    if (!g) return '';
    const p = g.parent_id !== null && depth < 64 ? `${pathOf(g.parent_id, depth + 1)}/${g.name}` : g.name;
    paths.set(id, p);
    return p;
  };
  for (const id of rows.keys()) pathOf(id);
  return paths;
}

/** A pack rule as judged: limited to the groups the pack is enabled for (no limit when enabled for every device). */
function narrowed(rule: ComplianceRule, enabled: readonly PackGroupRow[], paths: Map<number, string>): ComplianceRule {
  if (enabled.some((e) => e.group_id === null)) return rule;
  return { ...rule, applies_to: { ...rule.applies_to, groups: enabled.map((e) => paths.get(e.group_id as number) ?? `#${e.group_id}`) } };
}

const cache = new WeakMap<DB, { key: string; set: Ruleset }>();

/** The rule files' names, sizes and modification times: an edit in place changes a file's time, not the folder's. */
function folderStamp(dir: string): string {
  let names: string[];
  try {
    names = readdirSync(dir).filter((n) => /\.ya?ml$/i.test(n) && !n.startsWith('.'));
  } catch {
    return 'none';
  }
  return names
    .sort()
    .map((n) => {
      try {
        const st = statSync(path.join(dir, n));
        return `${n}:${st.size}:${st.mtimeMs}`;
      } catch {
        return `${n}:gone`;
      }
    })
    .join('|');
}

/**
 * The rule set in force. A rule id defined twice is taken from the database first, then a file, then a pack (so a
 * pack rule can be replaced by an edited copy). Read again when a database rule, the folder or a pack's groups change.
 */
export function loadRuleset(db: DB, dataDir: string): Ruleset {
  const dir = ruleFolder(dataDir);
  const enabled = listPackGroupRows(db);
  const key = `${ruleRowsStamp(db)}|${folderStamp(dir)}|${JSON.stringify(enabled)}|${JSON.stringify(listGroupRows(db))}`;
  const hit = cache.get(db);
  if (hit && hit.key === key) return hit.set;
  const info = new Map<string, RuleInForce>();
  for (const row of listRuleRows(db)) {
    const rule = JSON.parse(row.definition) as ComplianceRule;
    info.set(row.id, { rule, written: rule, origin: 'database', from: null });
  }
  const folder = loadRuleFolder(dir);
  for (const { file, ...rule } of folder.rules) if (!info.has(rule.id)) info.set(rule.id, { rule, written: rule, origin: 'file', from: file });
  const paths = groupPaths(db);
  for (const pack of enabled.length ? shippedPacks() : []) {
    const groups = enabled.filter((e) => e.pack === pack.pack);
    if (!groups.length) continue;
    for (const rule of pack.rules)
      if (!info.has(rule.id)) info.set(rule.id, { rule: narrowed(rule, groups, paths), written: rule, origin: 'pack', from: pack.pack });
  }
  const rules = [...info.values()].map((r) => r.rule).sort((a, b) => a.id.localeCompare(b.id));
  const digest = createHash('sha256').update(JSON.stringify(rules)).digest('hex').slice(0, 32);
  const set: Ruleset = { rules, info, digest, problems: folder.problems };
  cache.set(db, { key, set });
  return set;
}

export function listRules(db: DB, actor: Actor, dataDir: string): RuleInForce[] {
  authorize(actor, COMPLIANCE_OPS.rules);
  return [...loadRuleset(db, dataDir).info.values()].sort((a, b) => a.rule.id.localeCompare(b.rule.id));
}

/** A rule in force, or a shipped pack's rule (enabled or not). */
export function getRule(db: DB, actor: Actor, dataDir: string, id: string): RuleInForce {
  authorize(actor, COMPLIANCE_OPS.rules);
  const r = loadRuleset(db, dataDir).info.get(id);
  if (r) return r;
  for (const pack of shippedPacks()) {
    const rule = pack.rules.find((x) => x.id === id);
    if (rule) return { rule, written: rule, origin: 'pack', from: pack.pack };
  }
  throw ApiError.notFound(`compliance rule ${id}`);
}

/** Stores the rules of a rule file's text in the database (a rule with the same id is replaced). All or nothing. */
export function importRules(db: DB, actor: Actor, text: string, file: string): { created: string[]; updated: string[] } {
  authorize(actor, COMPLIANCE_OPS.manage);
  const { rules, errors } = checkRuleText(text);
  if (errors.length) throw ApiError.validation(errors, `${file}: not a usable rule file`);
  const now = Date.now();
  const out = { created: [] as string[], updated: [] as string[] };
  db.transaction(() => {
    for (const rule of rules) out[upsertRuleRow(db, rule.id, JSON.stringify(rule), now)].push(rule.id);
    recordAudit(db, actor, { action: 'compliance.rules_import', target: file, details: out });
  }).immediate();
  return out;
}

/** Removes a rule kept in the database (file and pack rules are changed where they live). Audited. */
export function deleteRule(db: DB, actor: Actor, id: string): void {
  authorize(actor, COMPLIANCE_OPS.manage);
  db.transaction(() => {
    if (!deleteRuleRow(db, id)) throw ApiError.notFound(`compliance rule ${id} in the database`);
    recordAudit(db, actor, { action: 'compliance.rule_delete', target: `rule ${id}`, details: {} });
  }).immediate();
}

export function listPacks(db: DB, actor: Actor): { pack: CompliancePack; groups: (string | null)[] }[] {
  authorize(actor, COMPLIANCE_OPS.rules);
  const enabled = listPackGroupRows(db);
  const paths = groupPaths(db);
  return shippedPacks().map((pack) => ({
    pack,
    groups: enabled.filter((e) => e.pack === pack.pack).map((e) => (e.group_id === null ? null : (paths.get(e.group_id) ?? String(e.group_id)))),
  }));
}

/** The group a path or id names, or null for "every device" (no group given). */
export function resolveGroup(db: DB, group: string | null): number | null {
  if (group === null) return null;
  const paths = groupPaths(db);
  if (/^\d+$/.test(group) && paths.has(Number(group))) return Number(group);
  const want = group.replace(/^\/+|\/+$/g, '').toLowerCase();
  for (const [id, p] of paths) if (p.toLowerCase() === want) return id;
  throw ApiError.notFound(`group ${group}`);
}

function packNamed(name: string): CompliancePack {
  const pack = shippedPacks().find((p) => p.pack === name);
  if (!pack) throw ApiError.notFound(`compliance pack ${name}`);
  return pack;
}

/** Enables a pack for a group and its subgroups (null: every device). Returns false when it already was. */
export function enablePack(db: DB, actor: Actor, name: string, group: string | null): boolean {
  authorize(actor, COMPLIANCE_OPS.manage);
  packNamed(name);
  return db
    .transaction(() => {
      const groupId = resolveGroup(db, group);
      const added = insertPackGroup(db, name, groupId, Date.now());
      if (added) recordAudit(db, actor, { action: 'compliance.pack_enable', target: `pack ${name}`, details: { group_id: groupId, group } });
      return added;
    })
    .immediate();
}

/** Disables a pack for one group (or, without a group, everywhere). Returns how many enablements were removed. */
export function disablePack(db: DB, actor: Actor, name: string, group: string | null): number {
  authorize(actor, COMPLIANCE_OPS.manage);
  packNamed(name);
  return db
    .transaction(() => {
      const n = deletePackGroups(db, name, group === null ? undefined : resolveGroup(db, group));
      if (n) recordAudit(db, actor, { action: 'compliance.pack_disable', target: `pack ${name}`, details: { group } });
      return n;
    })
    .immediate();
}
