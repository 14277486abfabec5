// Rules kept in the database, changed one at a time (the API and the web): create, replace, delete, each audited and followed by a background re-judge of the fleet. File and pack rules are read-only here.
import path from 'node:path';
import type { DB } from '../../db/open';
import { ApiError } from '../../errors';
import type { Actor } from '../../identity/actor';
import { authorize } from '../../identity/policy';
import type { SnapshotStore } from '../../store/snapshots';
import { recordAudit } from '../audit/audit.service';
import type { ComplianceRule } from './compliance-rule.schemas';
import { deleteRule, loadRuleset, shippedPacks, type RuleInForce } from './compliance-rules.service';
import { rejudgeFleet } from './compliance.service';
import { COMPLIANCE_OPS } from './compliance.policy';
import { getRuleRow, upsertRuleRow } from './compliance.store';
import { checkRuleData } from './rule-files';

const dataDirOf = (store: SnapshotStore) => path.dirname(store.root);

/** The re-judge started by the last rule change of each database, chained so that runs never overlap. */
const rejudging = new WeakMap<DB, Promise<void>>();

function startRejudge(db: DB, store: SnapshotStore, reason: string): void {
  const run = (rejudging.get(db) ?? Promise.resolve())
    .then(() => rejudgeFleet(db, store, reason).done)
    // A failed run is recorded in its row (compliance_runs); reads judge whatever it left unjudged.
    .then(
      () => undefined,
      () => undefined,
    );
  rejudging.set(db, run);
}

/** Resolves when the re-judges started by rule changes have ended (reads wait, so that two judgements of one version never race). */
export async function rulesSettled(db: DB): Promise<void> {
  for (let p = rejudging.get(db); p; p = rejudging.get(db)) {
    await p;
    if (rejudging.get(db) === p) rejudging.delete(db);
  }
}

/** Why a rule that is not in the database cannot be changed through this door (409), or 404 when there is no such rule. */
function notInDatabase(db: DB, store: SnapshotStore, id: string): ApiError {
  const r = loadRuleset(db, dataDirOf(store)).info.get(id);
  const packName = r?.origin === 'pack' ? r.from : shippedPacks().find((p) => p.rules.some((x) => x.id === id))?.pack;
  if (r?.origin === 'file')
    return new ApiError('CONFLICT', `compliance rule ${id} is read from the rule file ${path.basename(r.from ?? '')}: change it there`, { origin: 'file' });
  if (packName)
    return new ApiError('CONFLICT', `compliance rule ${id} belongs to the shipped pack ${packName}: create a database rule with its id to replace it`, {
      origin: 'pack',
    });
  return ApiError.notFound(`compliance rule ${id}`);
}

/** The rule checked as a rule file's rule is (its shape, then its patterns compile in RE2): 422 naming each field. */
function usable(data: unknown): ComplianceRule {
  const { rule, errors } = checkRuleData(data);
  if (!rule) throw ApiError.validation(errors, 'not a usable compliance rule');
  return rule;
}

function inForce(db: DB, store: SnapshotStore, id: string): RuleInForce {
  return loadRuleset(db, dataDirOf(store)).info.get(id) as RuleInForce;
}

/** A database rule, for its edit form (a file or pack rule: 409 naming where it lives). */
export function getEditableRule(db: DB, store: SnapshotStore, actor: Actor, id: string): RuleInForce {
  authorize(actor, COMPLIANCE_OPS.updateRule);
  if (!getRuleRow(db, id)) throw notInDatabase(db, store, id);
  return inForce(db, store, id);
}

/** A new database rule (409 when the database holds one with its id; it takes precedence over a file or pack rule of that id). */
export function createRule(db: DB, store: SnapshotStore, actor: Actor, input: ComplianceRule): RuleInForce {
  authorize(actor, COMPLIANCE_OPS.createRule);
  const rule = usable(input);
  db.transaction(() => {
    if (getRuleRow(db, rule.id)) throw new ApiError('CONFLICT', `compliance rule ${rule.id} already exists; change it instead`, { rule_id: rule.id });
    upsertRuleRow(db, rule.id, JSON.stringify(rule), Date.now());
    recordAudit(db, actor, { action: 'compliance.rule_create', target: `rule ${rule.id}`, details: { severity: rule.severity, kind: rule.check.kind } });
  }).immediate();
  startRejudge(db, store, `rule ${rule.id} created`);
  return inForce(db, store, rule.id);
}

/** Replaces a database rule's definition (its id stays). */
export function updateRule(db: DB, store: SnapshotStore, actor: Actor, id: string, input: Omit<ComplianceRule, 'id'>): RuleInForce {
  authorize(actor, COMPLIANCE_OPS.updateRule);
  const rule = usable({ ...input, id });
  db.transaction(() => {
    const row = getRuleRow(db, id);
    if (!row) throw notInDatabase(db, store, id);
    // A later time than the row's, so that the rule set's cache key (ruleRowsStamp) changes even within a millisecond.
    upsertRuleRow(db, id, JSON.stringify(rule), Math.max(Date.now(), row.updated_at + 1));
    recordAudit(db, actor, { action: 'compliance.rule_update', target: `rule ${id}`, details: { severity: rule.severity, kind: rule.check.kind } });
  }).immediate();
  startRejudge(db, store, `rule ${id} updated`);
  return inForce(db, store, id);
}

/** Deletes a database rule (a file or pack rule of the same id, if any, is in force again). */
export function deleteDatabaseRule(db: DB, store: SnapshotStore, actor: Actor, id: string): void {
  authorize(actor, COMPLIANCE_OPS.deleteRule);
  if (!getRuleRow(db, id)) throw notInDatabase(db, store, id);
  deleteRule(db, actor, id);
  startRejudge(db, store, `rule ${id} deleted`);
}
