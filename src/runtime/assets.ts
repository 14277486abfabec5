// Files the appliance ships with (SQL migrations, the docs bundle, native addons): SEA assets in the executable, repo files in development.
import { runtimeEnv } from '../config/runtime-env';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, readdirSync, renameSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { isMainThread, workerData } from 'node:worker_threads';

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

/** The workerData key under which a worker thread gets the shipped files it reads (see assetsForWorker). */
export const WORKER_ASSETS = 'confvaultAssets';

/** Shipped files handed to this worker thread by its parent: an eval'd worker in the executable cannot read the SEA's assets. */
function handedAssets(): Record<string, string> | null {
  if (isMainThread) return null;
  const handed = (workerData as Record<string, unknown> | null | undefined)?.[WORKER_ASSETS];
  return handed && typeof handed === 'object' ? (handed as Record<string, string>) : null;
}

/** The texts of these shipped folders and files, keyed by name, for a worker thread's workerData[WORKER_ASSETS]. */
export function assetsForWorker(folders: readonly string[], files: readonly string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of [...folders.flatMap((f) => listAssets(f)), ...files]) out[name] = readAsset(name).toString('utf8');
  return out;
}

/** Read a shipped file by its repository-relative name, e.g. "schema/0001_init.sql". */
export function readAsset(name: string): Buffer {
  const handed = handedAssets();
  if (handed && name in handed) return Buffer.from(handed[name], 'utf8');
  const s = sea();
  if (s) return Buffer.from(s.getAsset(name));
  return readFileSync(path.join(repoRoot(), name));
}

/** Names of shipped files under a folder (the executable carries a manifest of them). */
export function listAssets(folder: string): string[] {
  const handed = handedAssets();
  const names = handed ? Object.keys(handed).filter((n) => n.startsWith(folder + '/')) : [];
  if (names.length > 0) return names.sort();
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
