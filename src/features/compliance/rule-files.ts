// Compliance rule files: a YAML text (one rule or a list) checked field by field, the shipped packs, and <data_dir>/compliance/*.yaml.
import path from 'node:path';
import { parse, stringify } from 'yaml';
import type { FieldError } from '../../errors';
import { re2Problem } from '../../lib/re2';
import { RE2JS } from 're2js';
import { listAssets, readAsset } from '../../runtime/assets';
import { readTemplateFolder } from '../../templates/files';
import { complianceRuleSchema, compliancePackSchema, type ComplianceRule, type CompliancePack } from './compliance-rule.schemas';

export const PACKS_FOLDER = 'src/features/compliance/packs';
export const RULE_SCHEMA_FILE = 'schema/compliance-rule.schema.json';

/** The folder of rule files beside the database. */
export function ruleFolder(dataDir: string): string {
  return path.join(dataDir, 'compliance');
}

const fieldOf = (p: readonly PropertyKey[]) => (p.length ? p.map(String).join('.') : 'file');

/** Every RE2 pattern of a rule with its field, to compile before the rule is used. */
function rulePatterns(rule: ComplianceRule): { field: string; source: string; oneGroup?: boolean }[] {
  const c = rule.check;
  switch (c.kind) {
    case 'must_exist':
    case 'must_not_exist':
      return [{ field: 'check.line', source: c.line }];
    case 'sections':
      return [
        { field: 'check.match', source: c.match },
        ...c.must_contain.map((s, i) => ({ field: `check.must_contain.${i}`, source: s })),
        ...c.must_not_contain.map((s, i) => ({ field: `check.must_not_contain.${i}`, source: s })),
      ];
    case 'value':
      return [{ field: 'check.capture', source: c.capture, oneGroup: true }];
    case 'golden':
      return c.extra_match ? [{ field: 'check.extra_match', source: c.extra_match }] : [];
  }
}

/** The problems of a rule beyond its shape: patterns RE2 cannot compile, a capture without exactly one group. */
export function checkRulePatterns(rule: ComplianceRule, prefix = ''): FieldError[] {
  const errors: FieldError[] = [];
  for (const p of rulePatterns(rule)) {
    const problem = re2Problem(p.source);
    if (problem) errors.push({ field: prefix + p.field, message: `not a usable RE2 pattern: ${problem}` });
    else if (p.oneGroup && RE2JS.compile(p.source).groupCount() !== 1) errors.push({ field: prefix + p.field, message: 'must have exactly one capture group' });
  }
  return errors;
}

/** A rule's data checked as a whole: the rule, or every problem by field. */
export function checkRuleData(data: unknown, prefix = ''): { rule: ComplianceRule | null; errors: FieldError[] } {
  const r = complianceRuleSchema.safeParse(data);
  if (!r.success) return { rule: null, errors: r.error.issues.map((i) => ({ field: prefix + fieldOf(i.path), message: i.message })) };
  const errors = checkRulePatterns(r.data, prefix);
  return { rule: errors.length ? null : r.data, errors };
}

function parseYaml(text: string): { data: unknown; error: string | null } {
  try {
    return { data: parse(text, { prettyErrors: true, uniqueKeys: true, maxAliasCount: 100 }), error: null };
  } catch (err) {
    return { data: null, error: `not valid YAML: ${err instanceof Error ? err.message.split('\n')[0] : String(err)}` };
  }
}

/**
 * A rule file's text: one rule (a mapping) or a list of rules. Fields of a listed rule are named "N.field". Every
 * rule must be usable for the file to be (a file is all or nothing, as a template file is). Ids must be unique.
 */
export function checkRuleText(text: string): { rules: ComplianceRule[]; errors: FieldError[] } {
  const { data, error } = parseYaml(text);
  if (error) return { rules: [], errors: [{ field: 'file', message: error }] };
  const list = Array.isArray(data) ? data : [data];
  if (list.length === 0 || list.some((d) => typeof d !== 'object' || d === null || Array.isArray(d)))
    return { rules: [], errors: [{ field: 'file', message: 'must be a rule (a mapping) or a list of rules' }] };
  const rules: ComplianceRule[] = [];
  const errors: FieldError[] = [];
  const seen = new Set<string>();
  list.forEach((d, i) => {
    const r = checkRuleData(d, Array.isArray(data) ? `${i}.` : '');
    errors.push(...r.errors);
    if (!r.rule) return;
    if (seen.has(r.rule.id)) errors.push({ field: `${Array.isArray(data) ? `${i}.` : ''}id`, message: `rule ${r.rule.id} appears twice in the file` });
    seen.add(r.rule.id);
    rules.push(r.rule);
  });
  return { rules: errors.length ? [] : rules, errors };
}

/** Rules as a YAML list that checkRuleText reads back to the same rules. */
export function rulesToYaml(rules: readonly ComplianceRule[]): string {
  return `# yaml-language-server: $schema=../${RULE_SCHEMA_FILE}\n${stringify(rules, { lineWidth: 0 })}`;
}

/** The shipped packs, in file-name order. A broken pack stops the process: it is a release bug. */
export function loadPacks(): CompliancePack[] {
  return listAssets(PACKS_FOLDER)
    .filter((n) => n.endsWith('.yaml'))
    .map((n) => {
      const { data, error } = parseYaml(readAsset(n).toString('utf8'));
      if (error) throw new Error(`${n}: ${error}`);
      const pack = compliancePackSchema.parse(data);
      const problems = pack.rules.flatMap((r) => checkRulePatterns(r, `${r.id}.`));
      if (problems.length) throw new Error(`${n}: ${problems.map((p) => `${p.field}: ${p.message}`).join('; ')}`);
      return pack;
    });
}

/** The rules of <data_dir>/compliance/*.yaml, and the files that could not be loaded with their problems. */
export function loadRuleFolder(dir: string): { rules: (ComplianceRule & { file: string })[]; problems: { path: string; errors: FieldError[] }[] } {
  const rules: (ComplianceRule & { file: string })[] = [];
  const problems: { path: string; errors: FieldError[] }[] = [];
  for (const f of readTemplateFolder(dir)) {
    if (f.text === null) {
      problems.push({ path: f.path, errors: [{ field: 'file', message: f.readError ?? 'unreadable' }] });
      continue;
    }
    const r = checkRuleText(f.text);
    if (r.errors.length) problems.push({ path: f.path, errors: r.errors });
    else rules.push(...r.rules.map((rule) => ({ ...rule, file: f.path })));
  }
  return { rules, problems };
}
