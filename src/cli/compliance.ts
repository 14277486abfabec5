// `confvault compliance ...`: check devices against the rules (for CI), report, manage rules, packs and waivers.
import { ApiError } from '../errors';
import { parseLocalTimestamp } from '../lib/time';
import { checkCompliance, addWaiver, type DeviceCompliance } from '../features/compliance/compliance.service';
import { resolveGroup } from '../features/compliance/compliance-rules.service';
import { reportCsv, reportRows } from '../features/compliance/compliance-report';
import type { Appliance } from '../app/bootstrap';
import { GLOBAL_OPTIONS_HELP, UsageError, consoleActor, err, flagsOf, out, parse, withAppliance, type Command } from './common';
import { runPackCommand, runRuleCommand } from './compliance-rules';
import { OPTIONS, type ComplianceValues } from './compliance-common';

const HELP = `Usage:
  confvault compliance check (--device ID|NAME | --group G | --all) [--json]
  confvault compliance report [--group G] [--format csv|json]
  confvault compliance rule list
  confvault compliance rule show ID
  confvault compliance rule import FILE
  confvault compliance rule export [FILE]
  confvault compliance rule validate FILE
  confvault compliance rule test RULE --config FILE [--template NAME]
  confvault compliance rule delete ID
  confvault compliance pack list
  confvault compliance pack enable PACK [--group G]
  confvault compliance pack disable PACK [--group G]
  confvault compliance waiver add --device ID|NAME --rule ID --reason TEXT --owner NAME --expires "YYYY-MM-DD HH:MM:SS"

check     Judges each selected device's newest stored version against the rules in force (judging
          first what is not judged yet) and prints one line per failing rule (tab-separated):
          device, rule, severity, line, text, message. --json prints every result as JSON.
          Exit 0: compliant (failures under a waiver count as compliant); 1: at least one violation;
          2: bad input (an unknown option, device or group). For CI: confvault compliance check --all.
report    One row per device and rule that applies (CSV with a header line, or --format json):
          device, group, template, backup_id, rule, severity, status (pass, fail, waived),
          failing_lines, first_failing, waiver_owner, waiver_expires_at.
rule      list: id, severity, origin (database, file, pack), file or pack, title (tab-separated).
          show: the rule as YAML. import: stores a rule file's rules in the database (same id:
          replaced) and re-judges the fleet. export: the rules in force as one YAML file.
          validate: checks a rule file without touching the appliance ("FILE: FIELD: MESSAGE", exit 1).
          delete: removes a rule kept in the database and re-judges the fleet.
          test: judges one rule (an id, or a rule file's first rule) on a configuration file and
          prints the result; --template names the platform (it sets how the hierarchy is read).
          Here --config is the configuration to judge: give the appliance's with CONFVAULT_CONFIG.
pack      The shipped baseline packs (disabled until enabled): list them with the groups they are
          enabled for; enable or disable one for a group and its subgroups (no --group: every device).
waiver    A failure of the rule on the device shows as waived until the expiry (server time zone).

Rule files in <data_dir>/compliance/*.yaml are in force as they are (docs/compliance.md); their JSON
Schema is schema/compliance-rule.schema.json. Changes are recorded in the audit log.

${GLOBAL_OPTIONS_HELP}`;

/** A device or group that does not exist is bad input to check (exit 2), not a violation (1). */
async function selected(a: Appliance, values: ComplianceValues): Promise<DeviceCompliance[]> {
  try {
    const groupId = values.group === undefined ? null : resolveGroup(a.db, values.group);
    return await checkCompliance(a.db, a.snapshots, consoleActor(), { device: values.device, groupId });
  } catch (e) {
    if (e instanceof ApiError && e.code === 'RESOURCE_NOT_FOUND') throw new UsageError(e.message);
    throw e;
  }
}

export const complianceCommand: Command = {
  name: 'compliance',
  summary: 'Compliance: check devices against rules (CI), report, rules, packs, waivers',
  help: HELP,
  async run(argv) {
    const { values, positionals } = parse(argv, OPTIONS);
    // --config is the global appliance.conf option everywhere else; `rule test` takes it as the configuration to judge.
    const flags = flagsOf(positionals[0] === 'rule' && positionals[1] === 'test' ? { ...values, config: undefined } : values);
    const [sub, ...rest] = positionals;
    switch (sub) {
      case 'check': {
        if (rest.length) throw new UsageError(`compliance check: unexpected argument "${rest[0]}"`);
        const chosen = [values.device !== undefined, values.group !== undefined, values.all === true].filter(Boolean).length;
        if (chosen !== 1) throw new UsageError('compliance check: give exactly one of --device ID|NAME, --group G, --all');
        return withAppliance(flags, async (a) => {
          const devices = await selected(a, values);
          let violations = 0;
          for (const d of devices) for (const r of d.results) if (r.status === 'fail') violations++;
          if (values.json) out(JSON.stringify(devices, null, 2));
          else {
            for (const d of devices)
              for (const r of d.results.filter((x) => x.status === 'fail'))
                for (const f of r.failing) out([d.device_name, r.rule_id, r.severity, f.line ?? '-', f.text, f.message].join('\t'));
          }
          const judged = devices.filter((d) => d.results.length).length;
          err(
            `${devices.length} device${devices.length === 1 ? '' : 's'} checked (${judged} with rules that apply), ${violations} violation${violations === 1 ? '' : 's'}`,
          );
          return violations ? 1 : 0;
        });
      }
      case 'report': {
        if (rest.length) throw new UsageError(`compliance report: unexpected argument "${rest[0]}"`);
        const format = values.format ?? 'csv';
        if (format !== 'csv' && format !== 'json') throw new UsageError('compliance report: --format takes csv or json');
        return withAppliance(flags, async (a) => {
          const rows = reportRows(await selected(a, values));
          if (format === 'json') out(JSON.stringify(rows, null, 2));
          else process.stdout.write(reportCsv(rows));
          return 0;
        });
      }
      case 'rule':
        return runRuleCommand(rest, values, flags);
      case 'pack':
        return runPackCommand(rest, values, flags);
      case 'waiver': {
        if (rest[0] !== 'add' || rest.length > 1) throw new UsageError('compliance waiver: the subcommand is "add"');
        const { device, rule, reason, owner, expires } = values;
        if (!device || !rule || !reason || !owner || !expires)
          throw new UsageError('compliance waiver add: --device, --rule, --reason, --owner and --expires are required');
        return withAppliance(flags, (a) => {
          const at = parseLocalTimestamp(expires, a.config.server.timezone);
          if (at === null) throw new UsageError('compliance waiver add: --expires takes "YYYY-MM-DD HH:MM:SS"');
          const id = addWaiver(a.db, consoleActor(), { device, rule_id: rule, reason, owner, expires_at: at });
          err(`waiver ${id} added`);
          return 0;
        });
      }
      default:
        throw new UsageError(sub ? `unknown subcommand "${sub}"` : 'missing subcommand');
    }
  },
};
