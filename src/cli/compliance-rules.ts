// `confvault compliance rule ...` and `compliance pack ...`: rules in force, rule files, packs per group.
import { existsSync, renameSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { stringify } from 'yaml';
import { ApiError, type FieldError } from '../errors';
import type { ConfigFlags } from '../config/config';
import { checkRuleText, rulesToYaml } from '../features/compliance/rule-files';
import { compileRule, judgeConfig } from '../features/compliance/evaluate';
import { deleteRule, disablePack, enablePack, getRule, importRules, listPacks, listRules } from '../features/compliance/compliance-rules.service';
import type { ComplianceRule } from '../features/compliance/compliance-rule.schemas';
import { UsageError, consoleActor, err, out, withAppliance } from './common';
import { readInputFile, rejudgeWithProgress, type ComplianceValues } from './compliance-common';

const problemLines = (file: string, errors: readonly FieldError[]) => errors.map((e) => `${file}: ${e.field}: ${e.message}`);

function args(sub: string, rest: string[], n: number, what: string): string[] {
  if (rest.length < n) throw new UsageError(`compliance ${sub}: missing ${what}`);
  if (rest.length > n) throw new UsageError(`compliance ${sub}: unexpected argument "${rest[n]}"`);
  return rest;
}

/** `rule test`: the first rule of a file, or a rule of the appliance by id; judged whatever groups it names. */
async function ruleToTest(ref: string, flags: ConfigFlags): Promise<ComplianceRule> {
  if (existsSync(ref)) {
    const { rules, errors } = checkRuleText(readInputFile(ref));
    if (errors.length) throw new Error(problemLines(ref, errors).join('\n'));
    return rules[0];
  }
  return withAppliance(flags, (a) => getRule(a.db, consoleActor(), a.dataDir, ref).written);
}

export async function runRuleCommand(rest: string[], values: ComplianceValues, flags: ConfigFlags): Promise<number> {
  const [what, ...more] = rest;
  const sub = `rule ${what ?? ''}`.trim();
  switch (what) {
    case 'list':
      args(sub, more, 0, '');
      return withAppliance(flags, (a) => {
        for (const r of listRules(a.db, consoleActor(), a.dataDir)) out([r.rule.id, r.rule.severity, r.origin, r.from ?? '-', r.rule.title].join('\t'));
        return 0;
      });
    case 'show': {
      const [id] = args(sub, more, 1, 'ID');
      return withAppliance(flags, (a) => {
        const r = getRule(a.db, consoleActor(), a.dataDir, id);
        out(`# ${r.origin}${r.from ? ` ${r.from}` : ''}`);
        process.stdout.write(stringify(r.written, { lineWidth: 0 }));
        return 0;
      });
    }
    case 'export': {
      if (more.length > 1) throw new UsageError(`compliance ${sub}: unexpected argument "${more[1]}"`);
      return withAppliance(flags, (a) => {
        const yaml = rulesToYaml(listRules(a.db, consoleActor(), a.dataDir).map((r) => r.written));
        if (!more[0] || more[0] === '-') process.stdout.write(yaml);
        else {
          const tmp = path.join(path.dirname(more[0]), `.${path.basename(more[0])}.${process.pid}.tmp`);
          writeFileSync(tmp, yaml, { mode: 0o644 });
          renameSync(tmp, more[0]);
        }
        return 0;
      });
    }
    case 'validate': {
      const [file] = args(sub, more, 1, 'FILE');
      const { rules, errors } = checkRuleText(readInputFile(file));
      if (errors.length) {
        for (const line of problemLines(file, errors)) err(line);
        return 1;
      }
      out(`${file}: ok (${rules.length} rule${rules.length === 1 ? '' : 's'}: ${rules.map((r) => r.id).join(', ')})`);
      return 0;
    }
    case 'import': {
      const [file] = args(sub, more, 1, 'FILE');
      const text = readInputFile(file);
      return withAppliance(flags, async (a) => {
        try {
          const r = importRules(a.db, consoleActor(), text, file);
          for (const id of r.created) err(`rule ${id} created`);
          for (const id of r.updated) err(`rule ${id} updated`);
        } catch (e) {
          if (!(e instanceof ApiError) || e.code !== 'VALIDATION_ERROR') throw e;
          for (const line of problemLines(file, (e.details.errors as FieldError[] | undefined) ?? [])) err(line);
          return 1;
        }
        await rejudgeWithProgress(a, `rules imported from ${file}`);
        return 0;
      });
    }
    case 'delete': {
      const [id] = args(sub, more, 1, 'ID');
      return withAppliance(flags, async (a) => {
        deleteRule(a.db, consoleActor(), id);
        err(`rule ${id} deleted`);
        await rejudgeWithProgress(a, `rule ${id} deleted`);
        return 0;
      });
    }
    case 'test': {
      const [ref] = args(sub, more, 1, 'RULE');
      if (!values.config) throw new UsageError('compliance rule test: --config FILE (the configuration to judge) is required');
      const text = readInputFile(values.config);
      const rule = await ruleToTest(ref, flags);
      const template = values.template ?? rule.applies_to.templates[0] ?? null;
      const anywhere = { ...rule, applies_to: { templates: [], groups: [] } };
      const [r] = judgeConfig([compileRule(anywhere)], text, { name: 'test', hostname: 'test', template, group_path: '', custom: {} });
      out(`${rule.id}: ${r.status}`);
      for (const f of r.failing) out(`  ${f.line ?? '-'}: ${f.text} (${f.message})`);
      if (r.status === 'fail' && r.remediation) out(`remediation:\n${r.remediation}`);
      return r.status === 'fail' ? 1 : 0;
    }
    default:
      throw new UsageError(what ? `unknown subcommand "rule ${what}"` : 'rule: missing subcommand (list, show, import, export, validate, test, delete)');
  }
}

export async function runPackCommand(rest: string[], values: ComplianceValues, flags: ConfigFlags): Promise<number> {
  const [what, ...more] = rest;
  const group = values.group ?? null;
  switch (what) {
    case 'list':
      args('pack list', more, 0, '');
      return withAppliance(flags, (a) => {
        for (const p of listPacks(a.db, consoleActor())) {
          const where = p.groups.length ? p.groups.map((g) => g ?? '(every device)').join(',') : 'disabled';
          out([p.pack.pack, p.pack.rules.length, where, p.pack.title].join('\t'));
        }
        return 0;
      });
    case 'enable':
    case 'disable': {
      const [name] = args(`pack ${what}`, more, 1, 'PACK');
      return withAppliance(flags, async (a) => {
        const changed = what === 'enable' ? enablePack(a.db, consoleActor(), name, group) : disablePack(a.db, consoleActor(), name, group);
        err(`pack ${name} ${changed ? `${what}d` : `was not ${what === 'enable' ? 'disabled' : 'enabled'} there`} for ${group ?? 'every device'}`);
        if (changed) await rejudgeWithProgress(a, `pack ${name} ${what}d for ${group ?? 'every device'}`);
        return 0;
      });
    }
    default:
      throw new UsageError(what ? `unknown subcommand "pack ${what}"` : 'pack: missing subcommand (list, enable, disable)');
  }
}
