// The git mirror: commits every stored version to a bare repository (isomorphic-git: pure JavaScript, no git on the host) and pushes it.
import fs from 'node:fs';
import path from 'node:path';
import git from 'isomorphic-git';
import type { DB } from '../../db/open';
import type { AppConfig } from '../../config/config';
import {
  commitOf,
  forgetCommits,
  listRemotes,
  mirrorCounts,
  setMirrorEnabled,
  type RemoteRow,
  dropPending,
  groupPath,
  insertPending,
  listPending,
  listUncommitted,
  recordCommit,
  type MirrorVersionRow,
} from './gitmirror.store';
import { pushRemotes } from './gitmirror.push';
import type { MirrorContext } from './gitmirror.types';

export type { MirrorContext };

export const BRANCH = 'main';
const REF = `refs/heads/${BRANCH}`;
const BATCH = 200;

/** Where the bare repository lives: [git_mirror] path, else <data_dir>/git-mirror. */
export function mirrorDir(config: Readonly<AppConfig>): string {
  return config.git_mirror.path || path.join(config.storage.data_dir, 'git-mirror');
}

/**
 * The backup path's one call, inside the transaction that records a successful version: queues it when the mirror
 * is enabled (git_mirror_state), so the commit and the push happen later, off the request path.
 */
export function queueGitMirror(db: DB, backupId: string, at = Date.now()): void {
  insertPending(db, backupId, at);
}

/** Records whether the backup path should queue versions ([git_mirror] enabled), at every start of serve and the CLI. */
export function applyMirrorSetting(db: DB, config: Readonly<AppConfig>): void {
  setMirrorEnabled(db, config.git_mirror.enabled, config.git_mirror.max_queue);
}

/** A path segment from a device or group name: no slash, never "." or "..", never empty. */
function segment(name: string): string {
  const s = name.replace(/[/\\\0]/g, '_').trim();
  return s === '' || s === '.' || s === '..' || s === '.git' ? `_${s}` : s;
}

/** Creates the bare repository when it is missing; a new repository holds nothing, so no version counts as committed. */
async function ensureRepo(db: DB, dir: string): Promise<void> {
  if (fs.existsSync(path.join(dir, 'HEAD'))) return;
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  await git.init({ fs, dir, gitdir: dir, bare: true, defaultBranch: BRANCH });
  forgetCommits(db);
}

async function headCommit(dir: string): Promise<string | null> {
  try {
    return await git.resolveRef({ fs, gitdir: dir, ref: REF });
  } catch {
    return null;
  }
}

/** The tree `root` with `file` at `parts` (a new tree object per level on the way down). */
async function treeWith(dir: string, root: string | null, parts: string[], blob: string): Promise<string> {
  const entries = root ? (await git.readTree({ fs, gitdir: dir, oid: root })).tree : [];
  const [name, ...rest] = parts;
  const existing = entries.find((e) => e.path === name);
  const oid = rest.length ? await treeWith(dir, existing?.type === 'tree' ? existing.oid : null, rest, blob) : blob;
  const entry = rest.length ? { mode: '040000', path: name, oid, type: 'tree' as const } : { mode: '100644', path: name, oid, type: 'blob' as const };
  const tree = entries.filter((e) => e.path !== name).concat(entry);
  return git.writeTree({ fs, gitdir: dir, tree });
}

function message(v: MirrorVersionRow, file: string): string {
  const job = v.job_id ? `, job ${v.job_id}` : '';
  return `${file}: ${v.trigger ?? 'backup'} backup${job}\n\nBackup-Id: ${v.backup_id}\nTrigger: ${v.trigger ?? ''}\n${v.job_id ? `Job-Id: ${v.job_id}\n` : ''}`;
}

/** Commits one version on top of the branch; a version whose text equals the file in the tree records the head commit. */
async function commitVersion(ctx: MirrorContext, dir: string, v: MirrorVersionRow): Promise<void> {
  if (commitOf(ctx.db, v.backup_id) !== null) return dropPending(ctx.db, v.backup_id);
  const text = v.config_snapshot_hash && v.device_name !== null ? ctx.store.read(v.config_snapshot_hash) : null;
  if (text === null || v.device_name === null) {
    ctx.log?.warn({ backup_id: v.backup_id }, 'git mirror: version no longer readable, skipped');
    return dropPending(ctx.db, v.backup_id);
  }
  const parts = [...groupPath(ctx.db, v.group_id).map(segment), segment(v.device_name)];
  const file = parts.join('/');
  const head = await headCommit(dir);
  // A crash after the branch moved and before the record committed: the head already is this version.
  if (head) {
    const last = await git.readCommit({ fs, gitdir: dir, oid: head });
    if (last.commit.message.includes(`\nBackup-Id: ${v.backup_id}\n`)) return recordCommit(ctx.db, v.backup_id, head, file, Date.now());
  }
  const blob = await git.writeBlob({ fs, gitdir: dir, blob: Buffer.from(text, 'utf8') });
  const parentTree = head ? (await git.readCommit({ fs, gitdir: dir, oid: head })).commit.tree : null;
  const tree = await treeWith(dir, parentTree, parts, blob);
  if (head && tree === parentTree) return recordCommit(ctx.db, v.backup_id, head, file, Date.now());
  const when = { timestamp: Math.floor((v.started_at ?? Date.now()) / 1000), timezoneOffset: 0 };
  const author = v.changed_by ? { name: v.changed_by, email: `${v.changed_by.replace(/[<>\s]/g, '_')}@confvault.invalid` } : APPLIANCE;
  const commit = await git.writeCommit({
    fs,
    gitdir: dir,
    commit: { tree, parent: head ? [head] : [], author: { ...author, ...when }, committer: { ...APPLIANCE, ...when }, message: message(v, file) },
  });
  await git.writeRef({ fs, gitdir: dir, ref: REF, value: commit, force: true });
  recordCommit(ctx.db, v.backup_id, commit, file, Date.now());
}

const APPLIANCE = { name: 'confvault', email: 'confvault@confvault.invalid' };

/** One writer per repository at a time, in this process (the CLI and serve are kept apart by the lock file). */
const running = new Map<string, Promise<unknown>>();

async function exclusive<T>(dir: string, fn: () => Promise<T>): Promise<T> {
  const before = running.get(dir) ?? Promise.resolve();
  const next = before.then(() => withLockFile(dir, fn));
  running.set(
    dir,
    next.catch(() => undefined),
  );
  return next;
}

async function withLockFile<T>(dir: string, fn: () => Promise<T>): Promise<T> {
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  const lock = path.join(dir, 'confvault.lock');
  for (let waited = 0; !takeLock(lock); waited += LOCK_POLL_MS) {
    if (waited >= LOCK_WAIT_MS) throw new Error(`git mirror ${dir} is in use by process ${fs.readFileSync(lock, 'utf8')}`);
    await new Promise((r) => setTimeout(r, LOCK_POLL_MS));
  }
  try {
    return await fn();
  } finally {
    fs.rmSync(lock, { force: true });
  }
}

const LOCK_WAIT_MS = 60_000;
const LOCK_POLL_MS = 200;

/** Takes the lock file, or takes it over from a process that is gone; false while a live process holds it. */
function takeLock(lock: string): boolean {
  try {
    fs.writeFileSync(lock, String(process.pid), { flag: 'wx' });
    return true;
  } catch {
    const holder = Number(fs.readFileSync(lock, 'utf8'));
    if (holder && holder !== process.pid && isAlive(holder)) return false;
    fs.writeFileSync(lock, String(process.pid));
    return true;
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Commits batch after batch of versions from `next` until it has none; returns how many were handled. */
async function drain(ctx: MirrorContext, next: (db: DB, limit: number) => MirrorVersionRow[], onProgress?: (done: number) => void): Promise<number> {
  const dir = mirrorDir(ctx.config);
  return exclusive(dir, async () => {
    await ensureRepo(ctx.db, dir);
    let done = 0;
    for (let batch = next(ctx.db, BATCH); batch.length; batch = next(ctx.db, BATCH)) {
      for (const v of batch) await commitVersion(ctx, dir, v);
      done += batch.length;
      onProgress?.(done);
    }
    return done;
  });
}

/** Commits the queued versions, in the order they were stored. Returns how many were handled. */
export function commitPending(ctx: MirrorContext): Promise<number> {
  return drain(ctx, listPending);
}

/** Writes every stored version not yet in the repository, oldest first; a version already committed is skipped. */
export function backfill(ctx: MirrorContext, onProgress?: (done: number) => void): Promise<number> {
  return drain(ctx, listUncommitted, onProgress);
}

/** One round: commit what is queued, then push to each remote that is due. */
export async function syncGitMirror(ctx: MirrorContext, now = Date.now()): Promise<void> {
  await commitPending(ctx);
  const dir = mirrorDir(ctx.config);
  const head = await headCommit(dir);
  if (head) await pushRemotes(ctx, dir, head, now);
}

const NEVER_PUSHED: RemoteRow = {
  url: '',
  pushed_commit: null,
  pushed_at: null,
  attempts: 0,
  next_attempt_at: 0,
  last_error: null,
  rejected: 0,
  rejected_total: 0,
  failures_total: 0,
};

export interface MirrorStatus {
  enabled: boolean;
  dir: string;
  head: string | null;
  pending: number;
  committed: number;
  overflowed: number;
  remotes: RemoteRow[];
}

/** What `confvault git-mirror status` prints: the queue, the head, and each configured remote's last push or failure. */
export async function mirrorStatus(ctx: Pick<MirrorContext, 'db' | 'config'>): Promise<MirrorStatus> {
  const dir = mirrorDir(ctx.config);
  const urls = new Set(ctx.config.git_mirror.remote.map((r) => r.url));
  const known = new Map(listRemotes(ctx.db).map((r) => [r.url, r]));
  return {
    ...mirrorCounts(ctx.db),
    enabled: ctx.config.git_mirror.enabled,
    dir,
    head: fs.existsSync(path.join(dir, 'HEAD')) ? await headCommit(dir) : null,
    remotes: [...urls].map((url) => known.get(url) ?? { ...NEVER_PUSHED, url }),
  };
}

/**
 * serve's mirror: every [git_mirror] interval seconds, commit what is queued and push to the remotes that are due
 * (one round at a time). Records the enabled setting first, so the backup path queues only while it is on.
 */
export function startGitMirror(ctx: MirrorContext): { stop(): Promise<void> } {
  applyMirrorSetting(ctx.db, ctx.config);
  if (!ctx.config.git_mirror.enabled) return { stop: () => Promise.resolve() };
  let round: Promise<void> | null = null;
  const tick = () => {
    round ??= syncGitMirror(ctx)
      .catch((err: unknown) => ctx.log?.error({ err }, 'git mirror: round failed'))
      .finally(() => (round = null));
  };
  const timer = setInterval(tick, ctx.config.git_mirror.interval * 1000);
  timer.unref();
  tick();
  return {
    async stop() {
      clearInterval(timer);
      await round;
    },
  };
}
