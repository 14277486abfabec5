// Files the appliance ships with (SQL migrations, the docs bundle, native addons): SEA assets in the executable, repo files in development.
import { runtimeEnv } from '../config/runtime-env';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, readdirSync, renameSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';

interface SeaModule {
  isSea(): boolean;
  getAsset(key: string): ArrayBuffer;
}

let seaModule: SeaModule | null | undefined;
function sea(): SeaModule | null {
  if (seaModule === undefined) {
    try {
      // node:sea exists from Node 20.12; outside an executable isSea() is false.
      const m = createRequire(__filenameSafe())('node:sea') as SeaModule;
      seaModule = m.isSea() ? m : null;
    } catch {
      seaModule = null;
    }
  }
  return seaModule;
}

function __filenameSafe(): string {
  return typeof __filename === 'string' ? __filename : path.join(process.cwd(), 'index.js');
}

export function isExecutable(): boolean {
  return sea() !== null;
}

let rootDir: string | undefined;
/** The repository root in development: the nearest folder holding our package.json and schema/. */
export function repoRoot(): string {
  if (rootDir) return rootDir;
  const starts = [runtimeEnv().root, process.argv[1] && path.dirname(path.resolve(process.argv[1])), process.cwd()];
  for (const start of starts) {
    if (!start) continue;
    let dir = start;
    for (;;) {
      if (existsSync(path.join(dir, 'schema')) && existsSync(path.join(dir, 'package.json'))) {
        try {
          if ((JSON.parse(readFileSync(path.join(dir, 'package.json'), 'utf8')) as { name?: unknown }).name === 'confvault') return (rootDir = dir);
        } catch {
          /* not ours; keep walking */
        }
      }
      const up = path.dirname(dir);
      if (up === dir) break;
      dir = up;
    }
  }
  throw new Error('cannot find the confvault source tree (set CONFVAULT_ROOT)');
}

/** Read a shipped file by its repository-relative name, e.g. "schema/0001_init.sql". */
export function readAsset(name: string): Buffer {
  const s = sea();
  if (s) return Buffer.from(s.getAsset(name));
  return readFileSync(path.join(repoRoot(), name));
}

/** Names of shipped files under a folder (the executable carries a manifest of them). */
export function listAssets(folder: string): string[] {
  const s = sea();
  if (s) {
    const manifest = JSON.parse(Buffer.from(s.getAsset('manifest.json')).toString('utf8')) as string[];
    return manifest.filter((n) => n.startsWith(folder + '/')).sort();
  }
  return readdirSync(path.join(repoRoot(), folder))
    .map((f) => `${folder}/${f}`)
    .sort();
}

/**
 * Native addons inside the executable are written once to <dir>/<sha256>/<name> and loaded from there;
 * the hash in the path means a new build never loads an old addon.
 */
export function extractNativeAddon(assetName: string, dir: string): string {
  const bytes = readAsset(assetName);
  const hash = createHash('sha256').update(bytes).digest('hex').slice(0, 16);
  const target = path.join(dir, hash, path.basename(assetName));
  if (!existsSync(target)) {
    mkdirSync(path.dirname(target), { recursive: true, mode: 0o700 });
    const tmp = `${target}.${process.pid}.tmp`;
    writeFileSync(tmp, bytes, { mode: 0o500 });
    renameSync(tmp, target);
  }
  return target;
}
