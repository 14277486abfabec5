// The site's collector identity: its key pairs and what the central said at enrolment, one 0600 file in its data dir.
import { chmodSync, existsSync, mkdirSync, readFileSync, renameSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { CollectorKeys } from '../lib/collector-protocol';

export const IDENTITY_FILE = 'collector.json';

export interface CollectorIdentity {
  central_url: string;
  collector_id: number;
  name: string;
  zone: string;
  keys: CollectorKeys;
}

export function identityPath(dataDir: string): string {
  return path.join(dataDir, IDENTITY_FILE);
}

/** Written whole under a temporary name (mode 0600) and renamed into place; the data dir itself is 0700. */
export function saveIdentity(dataDir: string, id: CollectorIdentity): void {
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  if ((statSync(dataDir).mode & 0o077) !== 0) chmodSync(dataDir, 0o700);
  const file = identityPath(dataDir);
  const temp = `${file}.${process.pid}.tmp`;
  writeFileSync(temp, JSON.stringify(id, null, 2) + '\n', { mode: 0o600, flag: 'wx' });
  renameSync(temp, file);
}

export function loadIdentity(dataDir: string): CollectorIdentity | null {
  const file = identityPath(dataDir);
  if (!existsSync(file)) return null;
  if ((statSync(file).mode & 0o077) !== 0) chmodSync(file, 0o600);
  return JSON.parse(readFileSync(file, 'utf8')) as CollectorIdentity;
}
