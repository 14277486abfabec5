// What the git mirror's test files share: one test appliance, devices and versions stored through the services, bare repositories read with plain git.
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { importBackup } from '../../src/features/backups/import.service';
import type { MirrorContext } from '../../src/features/gitmirror/gitmirror.service';
import type { RemoteConfig } from '../../src/features/gitmirror/gitmirror.types';
import { SYSTEM_ACTOR } from '../../src/identity/actor';
import { startTestAppliance, tempDir, type TestAppliance } from '../helpers/appliance';
import { git } from '../helpers/git';
import { seedBuiltinTemplate, seedCredential, seedDevice } from '../helpers/seed';

export const SECRET = 'S3cr3tEnable99';
const HOUR = 3_600_000;
const T0 = Date.UTC(2026, 0, 5, 8, 0, 0);

/** A remote with every key at its default but the ones given. */
export function remote(fields: Partial<RemoteConfig> & { url: string }): RemoteConfig {
  return { token_file: '', username: 'confvault', ssh_key_file: '', ssh_key_passphrase_file: '', known_host: '', accept_any_host_key: false, ...fields };
}

export class MirrorFixture {
  t!: TestAppliance;
  root = tempDir('confvault-gitmirror-');
  clock = T0;
  seq = 0;
  private tpl = 0;
  private cred = 0;

  async start(): Promise<this> {
    this.t = await startTestAppliance();
    this.tpl = seedBuiltinTemplate(this.db, 'cisco-ios');
    this.cred = seedCredential(this.db, this.t.appliance.secrets, { name: 'c', username: 'u', password: 'p' });
    return this;
  }

  get db() {
    return this.t.appliance.db;
  }

  /** A mirror context with these remotes, the outbound policy given (127.0.0.1 allowed by default). */
  ctx(remotes: RemoteConfig[], opts: { allowed?: string[]; enabled?: boolean; dataDir?: string } = {}): MirrorContext {
    const base = this.t.services.config;
    const config = {
      ...base,
      storage: { ...base.storage, data_dir: opts.dataDir ?? base.storage.data_dir },
      notifications: { ...base.notifications, allowed_destinations: opts.allowed ?? ['127.0.0.1'] },
      git_mirror: { ...base.git_mirror, enabled: opts.enabled ?? true, remote: remotes },
    };
    return { db: this.db, store: this.t.appliance.snapshots, config, log: null };
  }

  /** A new empty bare repository under root, branch main, that accepts pushes over HTTP too. */
  bare(name: string): string {
    const dir = path.join(this.root, name);
    mkdirSync(dir);
    git(dir, ['init', '--bare', '-q', '-b', 'main']);
    git(dir, ['config', 'http.receivepack', 'true']);
    return name;
  }

  /** Points the remote's main at a commit the mirror does not have (someone else pushed); returns it. */
  moveOn(repo: string): string {
    const dir = path.join(this.root, repo);
    const foreign = git(dir, ['commit-tree', git(dir, ['mktree'], undefined).trim(), '-m', 'someone else'], undefined).trim();
    git(dir, ['update-ref', 'refs/heads/main', foreign]);
    return foreign;
  }

  newDevice(group: number | null): number {
    const n = ++this.seq;
    return seedDevice(this.db, { name: `edge${n}`, hostname: `10.0.0.${n}`, port: 22, credential_id: this.cred, template_id: this.tpl, group_id: group });
  }

  /** Stores a version of the device (an hour after the previous one), through the import service. */
  store(device: number, text: string) {
    const body = `hostname edge\nenable secret 9 ${SECRET}\n${text}\nend\n`;
    return importBackup(this.db, SYSTEM_ACTOR, this.t.appliance.snapshots, device, body, (this.clock += HOUR), {
      redact_key: this.t.appliance.secrets.redactionKey,
    });
  }

  /** `git log --reverse` of the repository's main, one line per commit in `fmt`. */
  log(repo: string, fmt: string): string[] {
    return git(path.join(this.root, repo), ['log', '--reverse', `--format=${fmt}`, 'main'])
      .trim()
      .split('\n');
  }
}
