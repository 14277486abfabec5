// `confvault inventory ...`: inventory sources (NetBox, Nautobot, HTTP JSON): list, add, sync (or its dry run), remove.
import { syncSource } from '../features/inventory/inventory-sync.service';
import { SourceInputSchema, type Plan } from '../features/inventory/inventory.schemas';
import { createSource, credentialIdNamed, deleteSource, findSourceRow, listSources } from '../features/inventory/inventory.service';
import { destinationPolicy } from '../features/notifications/notifications.service';
import { GLOBAL_OPTIONS_HELP, UsageError, consoleActor, err, flagsOf, fmtTime, out, parse, readStdinSecret, withAppliance, type Command } from './common';

const list = (v: string | undefined) =>
  (v ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);

/** "a=b,c=d" -> { a: 'b', c: 'd' }. */
function pairs(v: string | undefined, flag: string): Record<string, string> {
  const outMap: Record<string, string> = {};
  for (const item of list(v)) {
    const at = item.indexOf('=');
    if (at < 1) throw new UsageError(`${flag}: expected KEY=VALUE pairs separated by commas, got "${item}"`);
    outMap[item.slice(0, at)] = item.slice(at + 1);
  }
  return outMap;
}

function printPlan(plan: Plan): void {
  for (const c of plan.creates) out(['create', c.name, c.hostname, c.template, c.group_path || '-'].join('\t'));
  for (const u of plan.updates)
    out(
      [
        'update',
        u.name,
        Object.entries(u.changes)
          .map(([k, v]) => `${k}: ${String(v.before)} -> ${String(v.after)}`)
          .join('; '),
      ].join('\t'),
    );
  for (const r of plan.reactivations) out(['reactivate', r.name].join('\t'));
  for (const r of plan.retirements) out(['retire', r.name].join('\t'));
  for (const s of plan.skipped) out(['skip', s.name || s.external_id, s.reason].join('\t'));
  const verb = plan.dry_run ? 'would' : 'did';
  err(
    `${plan.source}: ${plan.fetched} listed; ${verb} create ${plan.creates.length}, update ${plan.updates.length}, reactivate ${plan.reactivations.length}, ` +
      `retire ${plan.retirements.length}; ${plan.skipped.length} skipped, ${plan.unchanged} unchanged.`,
  );
}

export const inventoryCommand: Command = {
  name: 'inventory',
  summary: 'Inventory sources (NetBox, Nautobot, HTTP JSON): list, add, sync with a dry run, remove',
  help: `Usage:
  confvault inventory list
  confvault inventory add NAME --kind netbox|nautobot|http --url URL --credential NAME [--token-stdin]
                          [--site A,B] [--role A,B] [--tag A,B] [--status A,B]
                          [--platform-map PLATFORM=TEMPLATE,...] [--default-template TEMPLATE]
                          [--group-path '{region}/{site}'] [--hostname-from primary_ip|name]
                          [--fields name=KEY,ip=KEY,model=KEY,group=KEY] [--interval MINUTES]
  confvault inventory sync NAME [--dry-run]
  confvault inventory remove NAME

add      netbox, nautobot: --url is the base URL (/api/dcim/devices/ is read page by page);
         http: the URL of a JSON array in Oxidized's http source layout (--fields names its keys,
         dotted for nested ones). --token-stdin reads the API token (Authorization: Token ...),
         stored encrypted, never shown. --platform-map maps a platform slug or name (http: the
         model) to a template; a device whose platform is not mapped gets --default-template,
         or is skipped when there is none. --group-path places devices in groups (created as
         needed): {region} {site} {location} {tenant} {role}, {group} for http. The URL must be
         allowed by [notifications] allowed_destinations. --interval: scheduled sync inside serve.
sync     Creates, updates (renames keep the device and its history), retires the devices that
         vanished from the source (never deletes) and reactivates those back; one transaction,
         audited through the door "inventory". --dry-run prints the plan and writes nothing.
         Output: one line per change, tab-separated (create/update/reactivate/retire/skip).
remove   The devices stay and are managed by hand from then on.
Exit codes: 0 done, 1 the operation failed (a source that cannot be read changes nothing), 2 usage error.

${GLOBAL_OPTIONS_HELP}`,
  async run(argv) {
    const { values, positionals } = parse(argv, {
      kind: { type: 'string' },
      url: { type: 'string' },
      credential: { type: 'string' },
      'token-stdin': { type: 'boolean' },
      site: { type: 'string' },
      role: { type: 'string' },
      tag: { type: 'string' },
      status: { type: 'string' },
      'platform-map': { type: 'string' },
      'default-template': { type: 'string' },
      'group-path': { type: 'string' },
      'hostname-from': { type: 'string' },
      fields: { type: 'string' },
      interval: { type: 'string' },
      'dry-run': { type: 'boolean' },
    });
    const [verb, name] = positionals;
    const flags = flagsOf(values);
    const actor = consoleActor();
    const needName = () => {
      if (!name) throw new UsageError(`inventory ${verb}: missing NAME`);
      return name;
    };
    switch (verb) {
      case 'list':
        return withAppliance(flags, (a) => {
          for (const s of listSources(a.db, actor))
            out(
              [
                s.id,
                s.name,
                s.kind,
                s.url,
                s.devices,
                s.interval_minutes ? `every ${s.interval_minutes} min` : 'on demand',
                fmtTime(s.last_sync_at, a.config.server.timezone),
                s.last_sync_error ?? '-',
              ].join('\t'),
            );
          return 0;
        });
      case 'add': {
        const n = needName();
        if (!values.credential) throw new UsageError('inventory add: --credential is required');
        if (values.interval !== undefined && !/^\d+$/.test(values.interval)) throw new UsageError('--interval takes a number of minutes');
        const token = values['token-stdin'] ? await readStdinSecret('API token') : undefined;
        const fields = values.fields === undefined ? undefined : pairs(values.fields, '--fields');
        return withAppliance(flags, async (a) => {
          const credential_id = credentialIdNamed(a.db, values.credential ?? '');
          const parsed = SourceInputSchema.safeParse({
            name: n,
            kind: values.kind,
            url: values.url,
            token,
            credential_id,
            filters: Object.fromEntries((['site', 'role', 'tag', 'status'] as const).filter((k) => values[k] !== undefined).map((k) => [k, list(values[k])])),
            platform_map: pairs(values['platform-map'], '--platform-map'),
            default_template: values['default-template'] ?? null,
            ...(values['group-path'] !== undefined ? { group_path: values['group-path'] } : {}),
            ...(values['hostname-from'] !== undefined ? { hostname_from: values['hostname-from'] } : {}),
            ...(fields ? { fields } : {}),
            interval_minutes: values.interval === undefined ? null : Number(values.interval),
          });
          if (!parsed.success) throw new UsageError(parsed.error.issues.map((i) => `${i.path.join('.') || 'source'}: ${i.message}`).join('; '));
          const s = await createSource(a.db, actor, a.secrets, destinationPolicy(a.config), parsed.data);
          err(`Inventory source ${s.name} (${s.kind}) added${s.has_token ? ', token stored encrypted' : ''}.`);
          return 0;
        });
      }
      case 'sync': {
        const n = needName();
        return withAppliance(flags, async (a) => {
          printPlan(await syncSource(a.db, actor, a.secrets, destinationPolicy(a.config), n, values['dry-run'] === true));
          return 0;
        });
      }
      case 'remove': {
        const n = needName();
        return withAppliance(flags, (a) => {
          deleteSource(a.db, actor, findSourceRow(a.db, n).id);
          err(`Inventory source ${n} removed; its devices stay.`);
          return 0;
        });
      }
      default:
        throw new UsageError(verb ? `unknown subcommand "${verb}"` : 'missing subcommand');
    }
  },
};
