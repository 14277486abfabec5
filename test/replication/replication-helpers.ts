// Shared by the replication tests: waiting for a condition, a fresh data dir for a restore, a device to write versions for, restore-then-check through the CLI.
import assert from 'node:assert/strict';
import { copyFileSync, mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { DB } from '../../src/db/open';
import { openDatabase } from '../../src/db/open';
import { MASTER_KEY_FILE, type SecretBox } from '../../src/identity/secrets';
import { SnapshotStore } from '../../src/store/snapshots';
import type { TestContext } from 'node:test';
import { runCliAsync, spawnServe, startTestAppliance } from '../helpers/appliance';
import { seedBuiltinTemplate, seedCredential, seedDevice } from '../helpers/seed';

export async function until(what: string, cond: () => boolean, ms = 60_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

/** A fresh data dir under `work` holding only the primary's master key (it travels apart from the replica). */
export function freshDataDir(work: string, name: string, masterKeyFrom: string): string {
  const dir = path.join(work, name);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  copyFileSync(path.join(masterKeyFrom, MASTER_KEY_FILE), path.join(dir, MASTER_KEY_FILE));
  return dir;
}

/** A device with a credential and the frr template, to import versions for. */
export function seedVersionedDevice(db: DB, secrets: SecretBox, name: string): number {
  return seedDevice(db, {
    name,
    credential_id: seedCredential(db, secrets, { name: `cred-${name}`, username: 'u', password: `pw-${name}-1` }),
    template_id: seedBuiltinTemplate(db, 'frr'),
  });
}

/** An appliance.conf under `work` with [replication] engine = "litestream" (interval 1 s) and no schedule that would write. */
export function litestreamConfFile(work: string, name: string, replica: string, extra = ''): string {
  const file = path.join(work, name);
  const replication = `[replication]\nenabled = true\nengine = "litestream"\nreplica = "${replica}"\ninterval_seconds = 1\n${extra}`;
  writeFileSync(file, `${replication}\n[maintenance]\ndb_backup_schedule = ""\n\n[backup]\nschedule = "0 0 1 1 *"\n`);
  return file;
}

/** `db restore --from-replica ARGS` onto `fresh`, then `db check`: both succeed; the restored versions (id, hash). */
export async function restoreAndCheck(
  args: string[],
  fresh: string,
  env: NodeJS.ProcessEnv = {},
): Promise<{ restoreOutput: string; rows: { id: string; hash: string }[] }> {
  const restore = await runCliAsync(['db', 'restore', '--from-replica', ...args, '--data-dir', fresh], { env });
  assert.equal(restore.status, 0, restore.stdout + restore.stderr);
  assert.match(restore.stdout, /each matching its hash/);
  const check = await runCliAsync(['db', 'check', '--data-dir', fresh]);
  assert.equal(check.status, 0, check.stdout + check.stderr);
  assert.match(check.stdout, /snapshots missing: 0/);
  assert.match(check.stdout, /snapshots failing their hash: 0/);
  const db = openDatabase(path.join(fresh, 'confvault.db'), { readonly: true });
  try {
    const rows = db.prepare('SELECT id, config_snapshot_hash AS hash FROM backups WHERE success = 1').all() as { id: string; hash: string }[];
    return { restoreOutput: restore.stdout, rows: rows.map((r) => ({ id: String(r.id), hash: r.hash })) };
  } finally {
    db.close();
  }
}

/** A primary: a test appliance with a device to write versions for, and `serve` on its data dir with `conf` (both ended after the test). */
export async function startPrimary(ctx: TestContext, deviceName: string, conf: string, env: NodeJS.ProcessEnv = {}) {
  const t = await startTestAppliance();
  ctx.after(() => t.close());
  const deviceId = seedVersionedDevice(t.services.db, t.services.secrets, deviceName);
  const served = await spawnServe(['--config', conf, '--data-dir', t.services.dataDir, '--listen', '127.0.0.1:0'], env);
  ctx.after(() => served.child.kill('SIGKILL'));
  return { t, ...t.services, deviceId, served };
}

/** Every restored version is one that was written and reads back equal to it (its hash verified); the versions lost. */
export function checkRestoredAsWritten<W extends { id: string; text: string }>(fresh: string, rows: { id: string; hash: string }[], written: W[]): W[] {
  const store = new SnapshotStore(fresh);
  const byId = new Map(written.map((w) => [w.id, w]));
  for (const row of rows) {
    const w = byId.get(row.id);
    assert.ok(w, `restored version ${row.id} is one that was written`);
    assert.equal(store.read(row.hash), w.text, `version ${row.id} readable, its hash verified`);
  }
  const restored = new Set(rows.map((r) => r.id));
  return written.filter((w) => !restored.has(w.id));
}
