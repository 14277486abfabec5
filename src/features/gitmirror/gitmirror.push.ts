// Pushes the mirror's branch to each [[git_mirror.remote]]: policy-checked destination, retries with backoff, never forced.
import fs from 'node:fs';
import git from 'isomorphic-git';
import http from 'isomorphic-git/http/node';
import { DestinationPolicy } from '../../lib/destinations';
import { getRemote, recordPushFailure, recordPushed } from './gitmirror.store';
import type { MirrorContext } from './gitmirror.types';

const MAX_BACKOFF_MS = 15 * 60_000;

/** Why a push failed, and whether the remote refused it (non-fast-forward, a hook) rather than being unreachable. */
function describe(err: unknown): { text: string; rejected: boolean } {
  const e = err as { code?: string; message?: string; data?: { reason?: string } };
  if (e.code === 'PushRejectedError')
    return { text: `rejected (${e.data?.reason ?? 'refused'}): the remote has commits the mirror does not; it is never force-pushed`, rejected: true };
  if (e.code === 'GitPushError') return { text: `rejected by the remote: ${e.message ?? ''}`, rejected: true };
  return { text: e.message ?? String(err), rejected: false };
}

/** Checks the remote's host against [notifications] allowed_destinations (the appliance's one outbound policy). */
async function checkDestination(policy: DestinationPolicy, url: string): Promise<void> {
  const u = new URL(url);
  const port = u.port ? Number(u.port) : u.protocol === 'https:' ? 443 : 80;
  await policy.resolve(u.hostname, port);
}

/** Pushes `head` to every remote that is due and not already there; a failure waits interval x 2^attempts (at most 15 min). */
export async function pushRemotes(ctx: MirrorContext, dir: string, head: string, now: number): Promise<void> {
  const policy = new DestinationPolicy(ctx.config.notifications.allowed_destinations);
  for (const remote of ctx.config.git_mirror.remote) {
    const state = getRemote(ctx.db, remote.url);
    if (state.pushed_commit === head || state.next_attempt_at > now) continue;
    try {
      await checkDestination(policy, remote.url);
      const token = remote.token_file ? fs.readFileSync(remote.token_file, 'utf8').trim() : null;
      const result = await git.push({
        fs,
        http,
        gitdir: dir,
        url: remote.url,
        ref: 'main',
        remoteRef: 'refs/heads/main',
        force: false,
        onAuth: () => (token ? { username: remote.username, password: token } : { cancel: true }),
      });
      if (!result.ok) throw Object.assign(new Error(result.error ?? 'push refused'), { code: 'GitPushError' });
      recordPushed(ctx.db, remote.url, head, Date.now());
      ctx.log?.info({ remote: remote.url, commit: head }, 'git mirror: pushed');
    } catch (err) {
      const { text, rejected } = describe(err);
      const wait = Math.min(ctx.config.git_mirror.interval * 1000 * 2 ** Math.min(state.attempts, 20), MAX_BACKOFF_MS);
      recordPushFailure(ctx.db, remote.url, text, rejected, now + wait);
      ctx.log?.[rejected ? 'error' : 'warn']({ remote: remote.url, error: text, attempts: state.attempts + 1 }, 'git mirror: push failed');
    }
  }
}
