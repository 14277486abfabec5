// `confvault collector`: on the central, enrolment tokens, the collector list, revocation and zones; at a site, enrol and run.
import { readFileSync } from 'node:fs';
import {
  createEnrolToken,
  listCollectors,
  listEnrolTokens,
  revokeCollector,
  revokeEnrolToken,
  setCollectorZone,
  setZone,
} from '../features/collectors/collectors.service';
import { loadConfig } from '../config/config';
import { createLogger } from '../lib/logger';
import { generateCollectorKeys } from '../lib/collector-protocol';
import { enrolCollector, runCollector, CollectorStop } from '../collector/run';
import { identityPath, loadIdentity, saveIdentity } from '../collector/identity';
import { startSiteSyslog } from './collector-syslog';
import { GLOBAL_OPTIONS_HELP, UsageError, consoleActor, flagsOf, fmtTime, out, parse, readStdinSecret, withAppliance, type Command } from './common';

export const collectorCommand: Command = {
  name: 'collector',
  summary: 'Remote collectors: enrolment tokens, list, revoke, zones; enrol and run at a site',
  help: `Usage (on the central appliance):
  confvault collector token create --zone ZONE [--hours N]
  confvault collector token list [--json]
  confvault collector token revoke ID
  confvault collector list [--json]
  confvault collector revoke NAME
  confvault collector zone (--device NAME | --group ID) (--zone ZONE | --central)
  confvault collector zone --collector NAME --zone ZONE
Usage (at a site, with the site's own --data-dir):
  confvault collector enrol --central URL --name NAME [--token TOKEN]
  confvault collector run

token create  prints a one-time enrolment token for a collector of ZONE, valid N hours (default 24).
token list    the tokens, newest first: id, zone, state (valid, used, expired), who made it; never the token.
token revoke  deletes an unused token (by its id from token list): it enrols nothing.
list          each collector: zone, state (online, offline, revoked), last seen, version, its zone's queue.
revoke        the collector's key is refused from now on; its leased backups return to the queue.
zone          puts a device, or a group with the devices that inherit it, in ZONE: its backups are
              leased to that zone's collector instead of run by the central; --central takes it back.
              With --collector: the collector serves ZONE from its next lease on.
The API has the same operations under /api/v1/collectors (docs/collectors.md).
enrol         makes the site's Ed25519 and X25519 key pairs (data dir, mode 0600), sends the public halves
              with the token (from --token, else the first line of standard input); the central pins them.
run           dials out to the central (no inbound port), leases the zone's due backups, runs them and
              uploads the results; results the central cannot take are spooled (bounded by spool_mb) and
              delivered in order later. With [collector] syslog_listen = "HOST:PORT" (off by default) it also
              receives the zone's syslog (UDP and TCP) and forwards every message to the central (batched,
              at most 1,000 a second, spooled on disk while the central is away, oldest dropped past 32 MiB);
              the central starts a backup for a change message of a device of this zone only.
              SIGTERM or SIGINT stops it: the jobs it leased ahead and had not started go back to the queue.

Settings in [collector] (appliance.conf.example); docs/collectors.md describes the protocol and its security.
${GLOBAL_OPTIONS_HELP}`,
  async run(argv) {
    const { values, positionals } = parse(argv, {
      zone: { type: 'string' },
      hours: { type: 'string' },
      json: { type: 'boolean' },
      device: { type: 'string' },
      group: { type: 'string' },
      collector: { type: 'string' },
      central: { type: 'string' },
      name: { type: 'string' },
      token: { type: 'string' },
    });
    const flags = flagsOf(values);
    const [verb, sub, ...rest] = positionals;
    if (verb === 'token' && sub === 'create') {
      if (!values.zone) throw new UsageError('collector token create: --zone is required');
      const hours = values.hours === undefined ? 24 : Number(values.hours);
      return withAppliance(flags, (a) => {
        const t = createEnrolToken(a.db, consoleActor(), values.zone!, hours);
        out(t.token);
        process.stderr.write(`one-time token for zone ${values.zone}, valid until ${fmtTime(t.expires_at, a.config.server.timezone)}\n`);
        return 0;
      });
    }
    if (verb === 'token' && sub === 'list') {
      return withAppliance(flags, (a) => {
        const { items } = listEnrolTokens(a.db, consoleActor(), 1, 1000);
        if (values.json) out(JSON.stringify(items, null, 2));
        else
          for (const t of items)
            out(
              `${t.id}  zone ${t.zone}  ${t.state}  expires ${fmtTime(t.expires_at, a.config.server.timezone)}  by ${t.created_by}${t.collector_id ? `  collector ${t.collector_id}` : ''}`,
            );
        return 0;
      });
    }
    if (verb === 'token' && sub === 'revoke') {
      if (rest.length !== 1) throw new UsageError('collector token revoke: expected one token id (from collector token list)');
      return withAppliance(flags, (a) => {
        revokeEnrolToken(a.db, consoleActor(), rest[0]);
        out(`token ${rest[0]} revoked`);
        return 0;
      });
    }
    if (verb === 'list') {
      return withAppliance(flags, (a) => {
        const list = listCollectors(a.db, consoleActor(), a.config.collector.offline_after * 1000);
        if (values.json) out(JSON.stringify(list, null, 2));
        else
          for (const c of list)
            out(
              `${c.name}  zone ${c.zone}  ${c.state}  last seen ${fmtTime(c.last_seen_at, a.config.server.timezone)}  ${c.version ?? '-'}  queued ${c.queued}  leased ${c.leased}  stored ${c.stored_total}`,
            );
        return 0;
      });
    }
    if (verb === 'revoke') {
      if (!sub || rest.length) throw new UsageError('collector revoke: expected one collector name');
      return withAppliance(flags, (a) => {
        revokeCollector(a.db, consoleActor(), sub);
        out(`collector ${sub} revoked`);
        return 0;
      });
    }
    if (verb === 'zone' && values.collector !== undefined) {
      if (!values.zone || values.device || values.group || values.central) throw new UsageError('collector zone --collector NAME: give --zone ZONE only');
      return withAppliance(flags, (a) => {
        setCollectorZone(a.db, consoleActor(), values.collector!, values.zone!);
        out(`collector ${values.collector} serves zone ${values.zone}`);
        return 0;
      });
    }
    if (verb === 'zone') {
      if (!!values.device === !!values.group) throw new UsageError('collector zone: give exactly one of --device, --group and --collector');
      if (!!values.zone === !!values.central) throw new UsageError('collector zone: give exactly one of --zone ZONE and --central');
      const what = values.device ? { device: values.device } : { group: Number(values.group) };
      return withAppliance(flags, (a) => {
        setZone(a.db, consoleActor(), what, values.central ? null : values.zone!);
        return 0;
      });
    }
    if (verb === 'enrol') return enrol(values, flags);
    if (verb === 'run') return run(flags);
    throw new UsageError(`collector: expected token create, list, revoke, zone, enrol or run, got ${verb ?? 'nothing'}`);
  },
};

async function enrol(values: { central?: string; name?: string; token?: string }, flags: ReturnType<typeof flagsOf>): Promise<number> {
  const config = loadConfig(flags);
  const central_url = values.central ?? config.collector.central_url;
  if (!central_url) throw new UsageError('collector enrol: --central URL (or [collector] central_url) is required');
  if (!values.name) throw new UsageError('collector enrol: --name is required');
  const dataDir = config.storage.data_dir;
  if (loadIdentity(dataDir)) throw new Error(`already enrolled (${identityPath(dataDir)}); remove that file to enrol again`);
  const token = values.token ?? (await readStdinSecret('enrolment token'));
  const ca = config.collector.ca_file ? readFileSync(config.collector.ca_file) : undefined;
  const id = await enrolCollector({ dataDir, central_url, token, name: values.name, ca }, generateCollectorKeys());
  saveIdentity(dataDir, id);
  out(`enrolled as collector ${id.name} (id ${id.collector_id}) of zone ${id.zone}`);
  return 0;
}

async function run(flags: ReturnType<typeof flagsOf>): Promise<number> {
  const config = loadConfig(flags);
  const log = createLogger(config.log.level);
  const controller = new AbortController();
  const stop = () => controller.abort();
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
  // [collector] syslog_listen: the zone's syslog, forwarded to the central (src/cli/collector-syslog.ts).
  const syslog = await startSiteSyslog(config, log);
  try {
    await runCollector(config, log, controller.signal);
    return 0;
  } catch (e) {
    if (e instanceof CollectorStop) throw new Error(e.message);
    throw e;
  } finally {
    await syslog?.stop();
    process.off('SIGTERM', stop);
    process.off('SIGINT', stop);
  }
}
