// Seeding for tests, through the services with the system actor (audited as any change is); `rawState` and `rawScript` for the few states no service can make.
import { randomBytes } from 'node:crypto';
import type Database from 'better-sqlite3';
import type { DB } from '../../src/db/open';
import { createCredential } from '../../src/features/credentials/credentials.service';
import { createDevice, type DeviceInput } from '../../src/features/devices/devices.service';
import { createGroup } from '../../src/features/groups/groups.service';
import { createTemplate, syncBuiltinTemplates } from '../../src/features/templates/templates.service';
import { SYSTEM_ACTOR } from '../../src/identity/actor';
import { SecretBox } from '../../src/identity/secrets';
import { getBuiltinTemplate } from '../../src/templates/index';

let seq = 0;

/** A unique name for a seed whose name does not matter. */
function unique(prefix: string): string {
  return `${prefix}-${process.pid}-${++seq}`;
}

/** Seals nothing: the box for a credential without secrets, when the caller has no appliance's box at hand. */
let noSecrets: SecretBox | undefined;

/** A credential created by the service (secrets sealed with `secrets`; null: a credential without secrets). */
export function seedCredential(
  db: DB,
  secrets: SecretBox | null,
  c: { name?: string; username?: string; password?: string; private_key?: string; passphrase?: string; enable_secret?: string },
): number {
  const hasSecret = c.password !== undefined || c.private_key !== undefined || c.passphrase !== undefined || c.enable_secret !== undefined;
  if (!secrets && hasSecret) throw new Error('seedCredential: a credential with secrets needs the appliance secret box');
  const box = secrets ?? (noSecrets ??= new SecretBox(randomBytes(32)));
  return createCredential(db, SYSTEM_ACTOR, box, { ...c, name: c.name ?? unique('cred'), username: c.username ?? 'backup' }).id;
}

/** The id of a built-in template's row (start-up syncs them; synced here when a database skipped that). */
export function seedBuiltinTemplate(db: DB, name: string): number {
  const find = () => db.prepare('SELECT id FROM templates WHERE name = ? AND builtin = 1').pluck().get(name) as number | undefined;
  let id = find();
  if (id === undefined) {
    syncBuiltinTemplates(db);
    id = find();
  }
  if (id === undefined) throw new Error(`no built-in template ${name}`);
  return id;
}

/** A custom template created by the service: the built-in `linux` template's settings under another name. */
export function seedTemplate(db: DB, name = unique('tpl'), vendor = 'Test'): number {
  const linux = getBuiltinTemplate('linux');
  if (!linux) throw new Error('no built-in template linux');
  return createTemplate(db, SYSTEM_ACTOR, { ...linux, name, vendor, description: '' }).id;
}

export function seedGroup(db: DB, name: string, parentId: number | null = null, extra: { schedule?: string | null; description?: string } = {}): number {
  return createGroup(db, SYSTEM_ACTOR, { name, parent_id: parentId, description: extra.description ?? '', schedule: extra.schedule ?? null }).id;
}

/** A device created by the service: SSH to 127.0.0.1 unless given, enabled unless `enabled: false`. */
export function seedDevice(
  db: DB,
  d: {
    name: string;
    hostname?: string;
    port?: number;
    protocol?: 'ssh' | 'telnet';
    credential_id: number;
    template_id: number;
    group_id?: number | null;
    enabled?: boolean;
  },
): number {
  return createTestDevice(db, d, d.name, {
    hostname: d.hostname ?? '127.0.0.1',
    port: d.port,
    protocol: d.protocol ?? 'ssh',
    group_id: d.group_id ?? null,
    enabled: d.enabled !== false,
  }).id;
}

/** A device created through the service by the system actor: SSH, no group, enabled, no schedule; `extra` overrides any field. */
export function createTestDevice(
  db: DB,
  refs: { credential_id: number; template_id: number },
  name: string,
  extra: Partial<DeviceInput> = {},
): ReturnType<typeof createDevice> {
  return createDevice(db, SYSTEM_ACTOR, {
    name,
    hostname: '192.0.2.10',
    protocol: 'ssh',
    group_id: null,
    enabled: true,
    description: '',
    schedule: null,
    accept_host_key_change: false,
    credential_id: refs.credential_id,
    template_id: refs.template_id,
    ...extra,
  });
}

/**
 * A state no service can make (a clock in the past, a crash left behind, a row a migration finds, a scale the
 * services do not reach in seconds), written by one raw statement and named with `why`: `grep -rn rawState test`
 * lists each one with its reason.
 */
export function rawState(db: DB, why: string, sql: string, ...params: unknown[]): Database.RunResult {
  if (why.trim().length < 8) throw new Error('rawState: say why no service can make this state');
  return db.prepare(sql).run(...params);
}

/** rawState for a script of several statements (a database as an older version left it, for a migration test). */
export function rawScript(db: DB, why: string, sql: string): void {
  if (why.trim().length < 8) throw new Error('rawScript: say why no service can make this state');
  db.exec(sql);
}
