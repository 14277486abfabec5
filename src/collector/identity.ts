// The site's collector identity: its key pairs and what the central said at enrolment, one 0600 file in its data dir.
import { chmodSync, existsSync, mkdirSync, readFileSync, renameSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { CollectorKeys } from '../lib/collector-protocol';
import type { AppConfig } from '../config/config';
import type { ClientOptions } from './central-client';

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

/** How this site reaches the central: [collector] central_url (else the enrolled one) and ca_file, signed as `id`. */
export function centralClientOptions(cfg: Readonly<AppConfig['collector']>, id: CollectorIdentity): ClientOptions {
  return {
    central_url: cfg.central_url || id.central_url,
    ca: cfg.ca_file ? readFileSync(cfg.ca_file) : undefined,
    signer: { collector_id: id.collector_id, signing_private: id.keys.signing_private },
  };
}
