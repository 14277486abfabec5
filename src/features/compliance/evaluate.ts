// Judging one configuration against compiled rules: pure, no database, run in a compliance worker (or in-line by `rule test`).
import type { ComplianceRule, RuleStatus } from './compliance-rule.schemas';
import type { ConfigNode, HierarchyMode } from './hierarchy';
import { compileRulePattern, patternMatches, type RulePattern } from './line-index';
import { JudgedConfig, type DeviceContext, type FailingLine } from './judged-config';

export type { DeviceContext, FailingLine };
import { compileGolden, judgeGolden, type CompiledGolden } from './golden';

export interface RuleResult {
  rule_id: string;
  status: RuleStatus;
  failing: FailingLine[];
  /** The rule's remediation text, followed by generated commands for golden rules. */
  remediation: string;
  /** The generated commands alone ('' for rules that generate none). */
  commands: string;
}

type CompiledCheck =
  | { kind: 'must_exist' | 'must_not_exist'; line: RulePattern }
  | { kind: 'sections'; match: RulePattern; must: RulePattern[]; mustNot: RulePattern[]; require: boolean }
  | { kind: 'value'; capture: RulePattern; c: Extract<ComplianceRule['check'], { kind: 'value' }> }
  | { kind: 'golden'; golden: CompiledGolden };

export interface CompiledRule {
  rule: ComplianceRule;
  check: CompiledCheck;
}

export function compileRule(rule: ComplianceRule): CompiledRule {
  const c = rule.check;
  switch (c.kind) {
    case 'must_exist':
    case 'must_not_exist':
      return { rule, check: { kind: c.kind, line: compileRulePattern(c.line) } };
    case 'sections':
      return {
        rule,
        check: {
          kind: 'sections',
          match: compileRulePattern(c.match),
          must: c.must_contain.map(compileRulePattern),
          mustNot: c.must_not_contain.map(compileRulePattern),
          require: c.require_section,
        },
      };
    case 'value':
      return { rule, check: { kind: 'value', capture: compileRulePattern(c.capture), c } };
    case 'golden':
      return { rule, check: { kind: 'golden', golden: compileGolden(c) } };
  }
}

/** Whether the rule covers a device with this template and group path (subgroups inherit a group's rules). */
export function ruleApplies(rule: ComplianceRule, ctx: Pick<DeviceContext, 'template' | 'group_path'>): boolean {
  const { templates, groups } = rule.applies_to;
  if (templates.length && (ctx.template === null || !templates.includes(ctx.template))) return false;
  if (!groups.length) return true;
  const p = ctx.group_path.toLowerCase();
  return groups.some((g) => {
    const want = g.replace(/^\/+|\/+$/g, '').toLowerCase();
    return p === want || p.startsWith(`${want}/`);
  });
}

const at = (cfg: JudgedConfig, i: number, message: string): FailingLine => ({ line: i + 1, text: cfg.index.lines[i].trim(), message });
const missing = (text: string, message: string): FailingLine => ({ line: null, text, message });

/** The results of `rules` on one configuration, in rule order. */
export function judgeConfig(rules: readonly CompiledRule[], text: string, ctx: DeviceContext): RuleResult[] {
  const cfg = new JudgedConfig(text, ctx);
  return rules.map((r) => judgeRule(r, cfg));
}

export function judgeRule(r: CompiledRule, cfg: JudgedConfig): RuleResult {
  const base = { rule_id: r.rule.id, remediation: r.rule.remediation };
  if (!ruleApplies(r.rule, cfg.ctx)) return { ...base, status: 'not_applicable', failing: [], commands: '' };
  let failing: FailingLine[];
  let commands = '';
  const c = r.check;
  switch (c.kind) {
    case 'must_exist':
      failing = cfg.index.matching(c.line).length ? [] : [missing(c.line.source, 'no line matches')];
      break;
    case 'must_not_exist':
      failing = cfg.index.matching(c.line).map((i) => at(cfg, i, 'must not be present'));
      break;
    case 'sections':
      failing = judgeSections(c, cfg);
      break;
    case 'value':
      failing = judgeValue(c, cfg);
      break;
    case 'golden': {
      const g = judgeGolden(c.golden, cfg);
      failing = g.failing;
      commands = g.commands;
      break;
    }
  }
  const remediation = [r.rule.remediation.trim(), commands].filter(Boolean).join('\n\n');
  return { ...base, status: failing.length ? 'fail' : 'pass', failing, remediation: failing.length ? remediation : r.rule.remediation, commands };
}

/** Sections are the statements that open a block; in the indent and FortiOS modes a top-level statement is one too. */
function isSection(n: ConfigNode, mode: HierarchyMode): boolean {
  return n.children.length > 0 || (n.parent === null && (mode === 'indent' || mode === 'fortios'));
}

function judgeSections(c: Extract<CompiledCheck, { kind: 'sections' }>, cfg: JudgedConfig): FailingLine[] {
  const { mode, nodes } = cfg.hierarchy;
  const failing: FailingLine[] = [];
  let matched = 0;
  for (const n of nodes) {
    if (!isSection(n, mode) || !patternMatches(c.match, mode === 'indent' || mode === 'fortios' ? n.text : n.path, cfg.headerWord(n))) continue;
    matched++;
    const inside = cfg.inside(n);
    for (const p of c.must) {
      if (!inside.some((x) => patternMatches(p, x.text, x.word)))
        failing.push({ line: n.line, text: n.path, message: `section lacks a statement matching ${p.source}` });
    }
    for (const p of c.mustNot) {
      for (const x of inside) if (patternMatches(p, x.text, x.word)) failing.push({ line: x.node.line, text: x.text, message: `not allowed in ${n.path}` });
    }
  }
  if (c.require && matched === 0) failing.push(missing(c.match.source, 'no section matches'));
  return failing;
}

function judgeValue(c: Extract<CompiledCheck, { kind: 'value' }>, cfg: JudgedConfig): FailingLine[] {
  const found = cfg.index.captures(c.capture);
  const failing: FailingLine[] = [];
  const { count_min, count_max, min, max, not_in, equals } = c.c;
  if (count_min !== undefined && found.length < count_min)
    failing.push(missing(c.capture.source, `${found.length} line${found.length === 1 ? '' : 's'} match, at least ${count_min} required`));
  if (count_max !== undefined && found.length > count_max) {
    for (const f of found.slice(count_max)) failing.push(at(cfg, f.i, `more than ${count_max} lines match`));
  }
  for (const { i, value: v } of found) {
    if (v === null) continue;
    const n = Number(v);
    if ((min !== undefined || max !== undefined) && (v.trim() === '' || !Number.isFinite(n))) failing.push(at(cfg, i, `"${v}" is not a number`));
    else if (min !== undefined && n < min) failing.push(at(cfg, i, `${v} is below ${min}`));
    else if (max !== undefined && n > max) failing.push(at(cfg, i, `${v} is above ${max}`));
    if (not_in?.includes(v)) failing.push(at(cfg, i, 'value is on the forbidden list'));
    if (equals !== undefined && v !== equals) failing.push(at(cfg, i, `"${v}" is not "${equals}"`));
  }
  return failing;
}
