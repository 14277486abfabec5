// Pushes the mirror's branch to each [[git_mirror.remote]]: policy-checked destination, retries with backoff, never forced.
import fs from 'node:fs';
import git from 'isomorphic-git';
import http from 'isomorphic-git/http/node';
import { DestinationPolicy } from '../../lib/destinations';
import { getRemote, recordPushFailure, recordPushed } from './gitmirror.store';
import { isSshRemote } from '../../config/git-mirror-config';
import { parseSshUrl, SshGitSession } from './gitmirror.ssh';
import type { MirrorContext, RemoteConfig } from './gitmirror.types';

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

/** An HTTPS remote: isomorphic-git's own client, the token from token_file as the password. */
async function pushHttps(dir: string, policy: DestinationPolicy, remote: RemoteConfig) {
  await checkDestination(policy, remote.url);
  const token = remote.token_file ? fs.readFileSync(remote.token_file, 'utf8').trim() : null;
  return git.push({
    ...PUSH,
    fs,
    http,
    gitdir: dir,
    url: remote.url,
    onAuth: () => (token ? { username: remote.username, password: token } : { cancel: true }),
  });
}

/** An SSH remote: the same push through an SSH session to the checked address, the host key pinned. */
async function pushSsh(dir: string, policy: DestinationPolicy, remote: RemoteConfig) {
  const target = parseSshUrl(remote.url);
  const address = await policy.resolve(target.host, target.port);
  const session = new SshGitSession(target, {
    address,
    keyFile: remote.ssh_key_file,
    passphraseFile: remote.ssh_key_passphrase_file,
    knownHost: remote.known_host,
    acceptAnyHostKey: remote.accept_any_host_key,
  });
  try {
    // isomorphic-git speaks only HTTP: it is handed a placeholder URL and the session as its HTTP client.
    return await git.push({ ...PUSH, fs, http: session.http, gitdir: dir, url: 'https://ssh.invalid/repository' });
  } finally {
    session.close();
  }
}

const PUSH = { ref: 'main', remoteRef: 'refs/heads/main', force: false } as const;

/** Pushes `head` to every remote that is due and not already there; a failure waits interval x 2^attempts (at most 15 min). */
export async function pushRemotes(ctx: MirrorContext, dir: string, head: string, now: number): Promise<void> {
  const policy = new DestinationPolicy(ctx.config.notifications.allowed_destinations);
  for (const remote of ctx.config.git_mirror.remote) {
    const state = getRemote(ctx.db, remote.url);
    if (state.pushed_commit === head || state.next_attempt_at > now) continue;
    try {
      const result = await (isSshRemote(remote.url) ? pushSsh : pushHttps)(dir, policy, remote);
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
