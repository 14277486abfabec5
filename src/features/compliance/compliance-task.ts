// One batch of configurations judged, the CPU-heavy part of compliance (run in a compliance worker thread; in-line by `rule test`).
import { SnapshotStore } from '../../store/snapshots';
import type { ComplianceRule } from './compliance-rule.schemas';
import { compileRule, judgeConfig, type CompiledRule, type DeviceContext, type RuleResult } from './evaluate';

export interface JudgeItem {
  backup_id: string;
  /** The stored version, read here (never on the event loop) ... */
  hash: string | null;
  /** ... or its text, when the caller has it. */
  text?: string;
  ctx: DeviceContext;
}

export interface JudgeTask {
  /** Digest of `rules`: a worker compiles a rule set once. */
  ruleset: string;
  rules: ComplianceRule[];
  data_dir: string;
  items: JudgeItem[];
}

/** A result as it is saved: the failing lines already as JSON (made here, not on the event loop), generated remediation commands only. */
export interface SavedResult {
  rule_id: string;
  status: 'pass' | 'fail';
  failing: string;
  remediation: string;
}

/** Per version: the results of the rules that apply (not applicable ones left out), or why it could not be judged. */
export type JudgeAnswerItem = { backup_id: string; results: SavedResult[]; error: null } | { backup_id: string; results: null; error: string };

function saved(r: RuleResult): SavedResult {
  const fail = r.status === 'fail';
  return { rule_id: r.rule_id, status: fail ? 'fail' : 'pass', failing: fail ? JSON.stringify(r.failing) : '[]', remediation: fail ? r.commands : '' };
}

/** Compiled rule sets by digest; a few at most (the one in force, and the one before a change while it is re-judged). */
const compiled = new Map<string, CompiledRule[]>();
const COMPILED_MAX = 4;

function compiledRules(task: Pick<JudgeTask, 'ruleset' | 'rules'>): CompiledRule[] {
  let rules = compiled.get(task.ruleset);
  if (!rules) {
    rules = task.rules.map(compileRule);
    if (compiled.size >= COMPILED_MAX) compiled.delete(compiled.keys().next().value as string);
    compiled.set(task.ruleset, rules);
  }
  return rules;
}

export function runJudgeTask(task: JudgeTask): JudgeAnswerItem[] {
  const rules = compiledRules(task);
  const store = new SnapshotStore(task.data_dir);
  return task.items.map((item) => {
    try {
      const text = item.text ?? (item.hash ? store.read(item.hash) : null);
      if (text === null) return { backup_id: item.backup_id, results: null, error: 'the stored version is missing' };
      const results = judgeConfig(rules, text, item.ctx)
        .filter((r) => r.status !== 'not_applicable')
        .map(saved);
      return { backup_id: item.backup_id, results, error: null };
    } catch (err) {
      return { backup_id: item.backup_id, results: null, error: err instanceof Error ? err.message : String(err) };
    }
  });
}
