// The notifications of a judgement: compliance_failed for rules that start failing, compliance_recovered for rules passing again.
import type { DB } from '../../db/open';
import { complianceEventsWanted, enqueueComplianceChange } from '../notifications/notification-events.service';
import type { SavedResult } from './compliance-task';
import type { Ruleset } from './compliance-rules.service';
import { latestJudgedFailures, listDeviceWaiverRules } from './compliance.store';
import type { FailingLine } from './evaluate';

/** Read once per batch: whether the events are wanted at all. */
export function eventsWanted(db: DB): boolean {
  return complianceEventsWanted(db);
}

/** The rules the device failed before this judgement (its most recently judged version). */
export function previousFailures(db: DB, deviceId: number): Set<string> {
  return new Set(latestJudgedFailures(db, deviceId));
}

/**
 * Compares a device's new results with its previous state and enqueues the events (rules under a waiver in force are
 * left out). A device judged for the first time announces its failures. Inside the transaction that saves them.
 */
export function announceChanges(
  db: DB,
  ruleset: Ruleset,
  v: { backup_id: string; device_id: number },
  before: ReadonlySet<string>,
  results: readonly SavedResult[],
  now: number,
): void {
  const waived = new Set(listDeviceWaiverRules(db, v.device_id, now));
  const failed = results.filter((r) => r.status === 'fail' && !before.has(r.rule_id) && !waived.has(r.rule_id));
  const recovered = results.filter((r) => r.status === 'pass' && before.has(r.rule_id));
  const describe = (r: SavedResult) => {
    const rule = ruleset.info.get(r.rule_id)?.rule;
    const first = (JSON.parse(r.failing) as FailingLine[])[0];
    const where = first ? `: ${first.line === null ? '' : `line ${first.line} `}${first.text} (${first.message})` : '';
    return `${r.rule_id} (${rule?.severity ?? 'unknown'})${where}`;
  };
  if (failed.length)
    enqueueComplianceChange(db, v.backup_id, 'compliance_failed', `${failed.length} compliance rule(s) now failing: ${failed.map(describe).join('; ')}`, now);
  if (recovered.length)
    enqueueComplianceChange(db, v.backup_id, 'compliance_recovered', `compliant again with ${recovered.map((r) => r.rule_id).join(', ')}`, now);
}
