// `confvault git-mirror status|backfill`: the git mirror's queue and remotes, and writing the history stored before it was on.
import { backfill, mirrorStatus, syncGitMirror } from '../features/gitmirror/gitmirror.service';
import { createLogger } from '../lib/logger';
import { GLOBAL_OPTIONS_HELP, UsageError, flagsOf, fmtTime, out, parse, withAppliance, type Command } from './common';

export const gitMirrorCommand: Command = {
  name: 'git-mirror',
  summary: 'Git mirror of every stored version: status, backfill',
  help: `Usage:
  confvault git-mirror status [--json]
  confvault git-mirror backfill [--no-push]

status     the repository, its head commit, versions waiting in the queue, versions not queued because the
           queue was full ([git_mirror] max_queue), and each remote's last push, failure and rejection.
backfill   commits every stored version that is not in the repository yet, oldest first, then pushes to
           the remotes (not with --no-push). A version already committed is never committed again, so it
           can be run at any time, also while serve runs (it waits up to a minute for serve's round).

The mirror is configured in [git_mirror] (appliance.conf.example); docs/git-mirror.md tells how to read its history.
${GLOBAL_OPTIONS_HELP}`,
  async run(argv) {
    const { values, positionals } = parse(argv, { json: { type: 'boolean' }, 'no-push': { type: 'boolean' } });
    const flags = flagsOf(values);
    const [verb] = positionals;
    if (verb === 'status') {
      return withAppliance(flags, async (a) => {
        const s = await mirrorStatus({ db: a.db, config: a.config });
        if (values.json) {
          out(JSON.stringify(s, null, 2));
          return 0;
        }
        const tz = a.config.server.timezone;
        out(`enabled     ${s.enabled ? 'yes' : 'no'}`);
        out(`repository  ${s.dir}`);
        out(`head        ${s.head ?? '-'}`);
        out(`committed   ${s.committed}`);
        out(`pending     ${s.pending}`);
        if (s.overflowed) out(`overflowed  ${s.overflowed} (not queued: run \`confvault git-mirror backfill\`)`);
        for (const r of s.remotes) {
          const state = r.rejected ? 'REJECTED' : r.last_error ? 'failing' : 'ok';
          out(`remote      ${r.url}  ${state}  pushed ${r.pushed_commit ?? '-'} at ${r.pushed_at ? fmtTime(r.pushed_at, tz) : '-'}`);
          if (r.last_error) out(`            ${r.last_error} (attempt ${r.attempts}, next at ${fmtTime(r.next_attempt_at, tz)})`);
        }
        return 0;
      });
    }
    if (verb === 'backfill') {
      return withAppliance(flags, async (a) => {
        const ctx = { db: a.db, store: a.snapshots, config: a.config, log: createLogger(a.config.log.level) };
        const done = await backfill(ctx);
        out(`${done} version(s) written`);
        if (!values['no-push']) await syncGitMirror(ctx, Number.MAX_SAFE_INTEGER);
        const s = await mirrorStatus(ctx);
        for (const r of s.remotes) if (r.last_error) out(`remote ${r.url}: ${r.last_error}`);
        return s.remotes.some((r) => r.last_error) ? 1 : 0;
      });
    }
    throw new UsageError(`git-mirror: expected status or backfill, got ${verb ?? 'nothing'}`);
  },
};
