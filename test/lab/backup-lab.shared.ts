// Shared by the backup tests against the device lab: an appliance driven through its public API and CLI, and the expected stored text.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { readdirSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import ssh2 from 'ssh2';
import { runCliAsync, startTestAppliance, type TestAppliance } from '../helpers/appliance';
import { acquireLabLock, ensureLab, labAvailable } from './lab';

const { Client } = ssh2;

/** Outside CI a machine without root or namespaces skips with the reason; in CI the lab must come up. */
export function labSkip(): string | false {
  const availability = labAvailable();
  return !availability.ok && !process.env.CI ? (availability.reason ?? 'device lab unavailable') : false;
}

/** Exclusive use of the lab for the whole file, then the lab itself; resolves with the release. */
export async function takeLab(): Promise<() => void> {
  const release = await acquireLabLock();
  try {
    await ensureLab();
  } catch (err) {
    release();
    throw err;
  }
  return release;
}

export interface DeviceDto {
  id: number;
  name: string;
  host_key: string | null;
  accept_host_key_change: boolean;
  reachability: { status: 'reachable' | 'unreachable' | 'unknown'; checked_at: string | null; error: string | null };
  last_backup: { id: string; success: boolean } | null;
}

export interface BackupRecordDto {
  id: string;
  started_at: string;
  finished_at: string | null;
  success: boolean;
  error_message: string | null;
  config_snapshot_hash: string | null;
}

/** One line of `confvault backup run` output. */
export interface CliBackupLine {
  result: 'ok' | 'failed' | 'skipped';
  changed: boolean;
  failure: string | null;
  message: string | null;
}

/** A test appliance used the way an operator does: inventory through /api/v1 with an API key, backups with the CLI. */
export class LabAppliance {
  private constructor(
    readonly t: TestAppliance,
    private readonly key: string,
    /** appliance.conf for the CLI and `serve` */
    readonly configFile: string,
  ) {}

  static async start(conf = '[backup]\nretries = 0\n'): Promise<LabAppliance> {
    const t = await startTestAppliance();
    const key = await t.keyFor({ permissions: 'all' });
    const configFile = path.join(t.dir, 'appliance.conf');
    writeFileSync(configFile, conf);
    return new LabAppliance(t, key, configFile);
  }

  get dataDir(): string {
    return this.t.services.dataDir;
  }

  /** The appliance's redaction key: secrets are stored as its keyed tokens (redaction is on by default). */
  get redactionKey(): Buffer {
    return this.t.services.secrets.redactionKey;
  }

  /** A JSON request to /api/v1 that must answer `status`; resolves with the body. */
  async call<T>(method: string, pathname: string, status: number, json?: unknown): Promise<T> {
    const res = await this.t.api(`/api/v1${pathname}`, { method, key: this.key, json });
    const body = await res.json();
    assert.equal(res.status, status, `${method} ${pathname}: ${JSON.stringify(body)}`);
    return body as T;
  }

  async createCredential(body: { name: string; username: string; password?: string; private_key?: string; passphrase?: string }): Promise<number> {
    return (await this.call<{ id: number }>('POST', '/credentials', 201, body)).id;
  }

  /** The id of a template by exact name, found the way an operator would: GET /templates?q=<name>. */
  async templateId(name: string): Promise<number> {
    const page = await this.call<{ items: { id: number; name: string }[] }>('GET', `/templates?q=${encodeURIComponent(name)}`, 200);
    const found = page.items.find((i) => i.name === name);
    assert.ok(found, `template ${name} is listed`);
    return found.id;
  }

  async createDevice(body: { name: string; port: number; protocol?: 'ssh' | 'telnet'; credential_id: number; template_id: number }): Promise<DeviceDto> {
    return this.call<DeviceDto>('POST', '/devices', 201, { hostname: '127.0.0.1', ...body });
  }

  device(id: number): Promise<DeviceDto> {
    return this.call<DeviceDto>('GET', `/devices/${id}`, 200);
  }

  /** The device's backup records, newest first. */
  async history(id: number, limit = 10): Promise<BackupRecordDto[]> {
    return (await this.call<{ items: BackupRecordDto[] }>('GET', `/devices/${id}/backups?limit=${limit}`, 200)).items;
  }

  async content(backupId: string): Promise<string | null> {
    return (await this.call<{ config_text: string | null }>('GET', `/backups/${backupId}/content`, 200)).config_text;
  }

  /** `confvault backup run --device ID` as a child process; checks the exit status against the result it prints. */
  async backupNow(deviceId: number): Promise<CliBackupLine> {
    const r = await runCliAsync(['backup', 'run', '--device', String(deviceId), '--config', this.configFile, '--data-dir', this.dataDir]);
    const lines = r.stdout.trim().split('\n');
    assert.equal(lines.length, 1, `one summary line; stdout: ${r.stdout}; stderr: ${r.stderr}`);
    const [id, , result, changed, seconds, failure, message] = lines[0].split('\t');
    assert.equal(Number(id), deviceId);
    assert.match(seconds, /^\d+\.\d$/);
    assert.ok(result === 'ok' || result === 'failed' || result === 'skipped', lines[0]);
    assert.equal(r.status, result === 'ok' ? 0 : 1, `exit status of a run whose result is ${result}; stderr: ${r.stderr}`);
    return { result, changed: changed === 'yes', failure: failure === '-' ? null : failure, message: message === '-' ? null : message };
  }

  /** Backs up now and returns the record the run left, read back through the API, with its content. */
  async backupAndRead(deviceId: number): Promise<{ line: CliBackupLine; record: BackupRecordDto; text: string | null }> {
    const line = await this.backupNow(deviceId);
    const [record] = await this.history(deviceId, 1);
    assert.ok(record?.finished_at, 'the run left a finished record');
    return { line, record, text: await this.content(record.id) };
  }

  /** Every snapshot file in the data directory. */
  snapshotFiles(): string[] {
    const root = path.join(this.dataDir, 'snapshots');
    return readdirSync(root, { recursive: true, encoding: 'utf8' })
      .filter((p) => statSync(path.join(root, p)).isFile())
      .sort();
  }

  close(): Promise<void> {
    return this.t.close();
  }
}

/**
 * What the appliance should store for captured output, computed independently of the engine: lines matching a
 * strip pattern dropped, LF endings, no trailing spaces, no leading or trailing blank lines, one final newline.
 */
export function expectedStoredText(raw: string, stripPatterns: readonly string[]): string {
  const strip = stripPatterns.map((p) => new RegExp(p));
  const lines = raw
    .replace(/\r\n/g, '\n')
    .split('\n')
    .filter((line) => !strip.some((re) => re.test(line)))
    .map((line) => line.trimEnd());
  while (lines.length && lines[0] === '') lines.shift();
  while (lines.length && lines[lines.length - 1] === '') lines.pop();
  return lines.join('\n') + '\n';
}

export function sha256(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

/** The SSH host key the device presents right now, as "SHA256:<base64>" (OpenSSH's fingerprint format). */
export function presentedHostKey(port: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const client = new Client();
    let key: string | null = null;
    client.on('error', () => (key ? resolve(key) : reject(new Error(`no host key from 127.0.0.1:${port}`))));
    client.connect({
      host: '127.0.0.1',
      port,
      username: 'nobody',
      readyTimeout: 10_000,
      hostVerifier: (raw: Buffer) => {
        key = `SHA256:${createHash('sha256').update(raw).digest('base64').replace(/=+$/, '')}`;
        return false; // refuse: the key is all we came for
      },
    });
  });
}
