// Seeding for tests: a credential (secrets encrypted as the service does), a built-in template row, groups, and devices (by row or through the service).
import type { DB } from '../../src/db/open';
import { createDevice, type DeviceInput } from '../../src/features/devices/devices.service';
import { SYSTEM_ACTOR } from '../../src/identity/actor';
import { getBuiltinTemplate } from '../../src/templates/index';
import type { SecretBox } from '../../src/identity/secrets';

export function seedCredential(
  db: DB,
  secrets: SecretBox,
  c: { name: string; username: string; password?: string; private_key?: string; passphrase?: string; enable_secret?: string },
): number {
  const enc = (v?: string) => (v === undefined ? null : secrets.encrypt(v));
  const now = Date.now();
  return Number(
    db
      .prepare(
        `INSERT INTO credentials (name, username, password_enc, private_key_enc, passphrase_enc, enable_secret_enc, created_at, updated_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
      )
      .run(c.name, c.username, enc(c.password), enc(c.private_key), enc(c.passphrase), enc(c.enable_secret), now, now).lastInsertRowid,
  );
}

/** The id of a built-in template's row, inserting it when the appliance has not synced built-ins. */
export function seedBuiltinTemplate(db: DB, name: string): number {
  const existing = db.prepare('SELECT id FROM templates WHERE name = ?').pluck().get(name) as number | undefined;
  if (existing) return existing;
  const spec = getBuiltinTemplate(name);
  if (!spec) throw new Error(`no built-in template ${name}`);
  const { name: _n, vendor, description, ...settings } = spec;
  const now = Date.now();
  return Number(
    db
      .prepare('INSERT INTO templates (name, vendor, description, builtin, spec, created_at, updated_at) VALUES (?, ?, ?, 1, ?, ?, ?)')
      .run(name, vendor, description, JSON.stringify(settings), now, now).lastInsertRowid,
  );
}

export function seedDevice(
  db: DB,
  d: {
    name: string;
    hostname?: string;
    port: number;
    protocol?: 'ssh' | 'telnet';
    credential_id: number;
    template_id: number;
    group_id?: number | null;
    enabled?: boolean;
  },
): number {
  const now = Date.now();
  return Number(
    db
      .prepare(
        `INSERT INTO devices (name, hostname, port, protocol, group_id, credential_id, template_id, enabled, created_at, updated_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      )
      .run(
        d.name,
        d.hostname ?? '127.0.0.1',
        d.port,
        d.protocol ?? 'ssh',
        d.group_id ?? null,
        d.credential_id,
        d.template_id,
        d.enabled === false ? 0 : 1,
        now,
        now,
      ).lastInsertRowid,
  );
}

export function seedGroup(db: DB, name: string, parentId: number | null = null): number {
  const now = Date.now();
  return Number(
    db.prepare('INSERT INTO device_groups (name, parent_id, created_at, updated_at) VALUES (?, ?, ?, ?)').run(name, parentId, now, now).lastInsertRowid,
  );
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
    ...refs,
    ...extra,
  });
}
