// `confvault notify ...`: notification channels (add, list, test, remove), rules (add, list, remove) and the delivery log.
import {
  createChannel,
  destinationPolicy,
  createRule,
  listChannels,
  listDeliveries,
  listRules,
  removeChannel,
  removeRule,
  type ChannelInfo,
} from '../features/notifications/notifications.service';
import { sendTestMessage } from '../features/notifications/notifications.worker';
import {
  GLOBAL_OPTIONS_HELP,
  UsageError,
  consoleActor,
  err,
  flagsOf,
  fmtTime,
  out,
  parse,
  parseIdList,
  readStdinSecret,
  withAppliance,
  type Command,
} from './common';

function channelWhere(c: ChannelInfo): string {
  const s = c.settings;
  if (c.type === 'email') return `${s.smtp_host}:${s.smtp_port} ${s.smtp_tls} ${s.from} -> ${(s.to ?? []).join(',')}`;
  if (c.type === 'slack' || c.type === 'teams') return '(URL stored encrypted)';
  return s.url ?? '-';
}

const list = (v: string | undefined) =>
  (v ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);

export const notifyCommand: Command = {
  name: 'notify',
  summary: 'Manage notifications: channels, rules, delivery log',
  help: `Usage:
  confvault notify channel add NAME --type webhook|slack|teams|email|syslog [--url URL] [--secret-stdin]
                               [--smtp-host H --smtp-port P [--smtp-tls none|starttls|tls] [--smtp-user U]
                                --from A --to A,B]
  confvault notify channel list
  confvault notify channel test NAME
  confvault notify channel remove NAME
  confvault notify rule add NAME --events E1,E2 --channels C1,C2 [--groups ID,ID] [--include-diff]
  confvault notify rule list
  confvault notify rule remove NAME
  confvault notify log [CHANNEL]

channel add   webhook: --url is where the JSON is POSTed; --secret-stdin reads the HMAC-SHA256 key
              (X-Confvault-Signature). slack, teams: the incoming-webhook URL is a secret: give it on
              standard input with --secret-stdin (or --url). email: SMTP settings (port 465 means TLS,
              otherwise STARTTLS is required unless --smtp-tls none); --secret-stdin reads the SMTP
              password. syslog: --url udp://HOST:PORT or tcp://HOST:PORT (RFC 5424).
              Secrets are stored encrypted with the master key and never shown again. The destination
              must be allowed by [notifications] allowed_destinations (checked on the resolved address,
              now and at every send); loopback and link-local need an entry naming them (exit 1).
channel test  Sends a test message now; exit code 1 when the receiver did not take it, with the failure
              class (refused, timed out, TLS error, HTTP status ...), never what the receiver said.
rule add      Events: config_changed, backup_failed, device_unreachable, device_recovered, backup_stale,
              compliance_failed, compliance_recovered.
              --groups limits the rule to devices in these groups and their subgroups (default: all).
              --include-diff adds the configuration diff (redacted as the template redacts) to
              config_changed; off by default, since configurations are sensitive.
log           Latest deliveries, tab-separated: delivery id, channel id, status (pending, sent, dead),
              attempts, events, created, last error.
Exit codes: 0 done, 1 the operation failed, 2 usage error.

${GLOBAL_OPTIONS_HELP}`,
  async run(argv) {
    const { values, positionals } = parse(argv, {
      type: { type: 'string' },
      url: { type: 'string' },
      'secret-stdin': { type: 'boolean' },
      'smtp-host': { type: 'string' },
      'smtp-port': { type: 'string' },
      'smtp-tls': { type: 'string' },
      'smtp-user': { type: 'string' },
      from: { type: 'string' },
      to: { type: 'string' },
      events: { type: 'string' },
      channels: { type: 'string' },
      groups: { type: 'string' },
      'include-diff': { type: 'boolean' },
    });
    const [noun, verb, name] = positionals;
    const flags = flagsOf(values);
    const actor = consoleActor();
    const key = `${noun ?? ''} ${verb ?? ''}`.trim();
    const needName = () => {
      if (!name) throw new UsageError(`notify ${key}: missing NAME`);
      return name;
    };
    if (noun === 'log') {
      return withAppliance(flags, (a) => {
        for (const d of listDeliveries(a.db, actor, verb ?? null)) {
          out([d.id, d.channel_id, d.status, d.attempts, d.event_count, fmtTime(d.created_at, a.config.server.timezone), d.last_error ?? '-'].join('\t'));
        }
        return 0;
      });
    }
    switch (key) {
      case 'channel add': {
        const n = needName();
        if (!values.type) throw new UsageError('notify channel add: --type is required');
        const port = values['smtp-port'];
        if (port !== undefined && !/^\d+$/.test(port)) throw new UsageError('--smtp-port takes a port number');
        const secret = values['secret-stdin'] ? await readStdinSecret('Channel secret') : undefined;
        return withAppliance(flags, async (a) => {
          const c = await createChannel(a.db, actor, a.secrets, destinationPolicy(a.config), {
            name: n,
            type: values.type ?? '',
            url: values.url,
            secret,
            smtp_host: values['smtp-host'],
            smtp_port: port === undefined ? undefined : Number(port),
            smtp_tls: values['smtp-tls'],
            smtp_user: values['smtp-user'],
            from: values.from,
            to: values.to === undefined ? undefined : list(values.to),
          });
          err(`Notification channel ${c.name} (${c.type}) added.`);
          return 0;
        });
      }
      case 'channel list':
        return withAppliance(flags, (a) => {
          for (const c of listChannels(a.db, actor))
            out(
              [c.id, c.name, c.type, channelWhere(c), c.has_secret ? 'secret set' : 'no secret', fmtTime(c.last_sent_at, a.config.server.timezone)].join('\t'),
            );
          return 0;
        });
      case 'channel test': {
        const n = needName();
        return withAppliance(flags, async (a) => {
          const r = await sendTestMessage({ db: a.db, secrets: a.secrets, snapshots: a.snapshots, config: a.config }, actor, n);
          if (r.error) {
            err(`Test message to ${n} failed: ${r.error} (delivery ${r.delivery_id})`);
            return 1;
          }
          err(`Test message delivered to ${n} (delivery ${r.delivery_id}).`);
          return 0;
        });
      }
      case 'channel remove': {
        const n = needName();
        return withAppliance(flags, (a) => {
          removeChannel(a.db, actor, n);
          err(`Notification channel ${n} removed.`);
          return 0;
        });
      }
      case 'rule add': {
        const n = needName();
        if (!values.events) throw new UsageError('notify rule add: --events is required');
        if (!values.channels) throw new UsageError('notify rule add: --channels is required');
        const groups = values.groups ? parseIdList(values.groups, '--groups') : [];
        return withAppliance(flags, (a) => {
          const r = createRule(a.db, actor, {
            name: n,
            events: list(values.events),
            channels: list(values.channels),
            groups,
            include_diff: values['include-diff'] === true,
          });
          err(`Notification rule ${r.name} added.`);
          return 0;
        });
      }
      case 'rule list':
        return withAppliance(flags, (a) => {
          const names = new Map(listChannels(a.db, actor).map((c) => [c.id, c.name]));
          for (const r of listRules(a.db, actor)) {
            const groups = r.group_ids.length ? r.group_ids.join(',') : 'all';
            out(
              [r.id, r.name, r.events.join(','), r.channel_ids.map((c) => names.get(c) ?? c).join(','), groups, r.include_diff ? 'diff' : 'no diff'].join('\t'),
            );
          }
          return 0;
        });
      case 'rule remove': {
        const n = needName();
        return withAppliance(flags, (a) => {
          removeRule(a.db, actor, n);
          err(`Notification rule ${n} removed.`);
          return 0;
        });
      }
      default:
        throw new UsageError(noun ? `unknown subcommand "${key}"` : 'missing subcommand');
    }
  },
};
