// Copies content-addressed snapshot files between two data dirs (the appliance's and a replica): missing files only, never overwriting, each verified against its hash before it is written.
import { existsSync, promises as fsp } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { gunzip } from 'node:zlib';
import { sha256Hex, type SnapshotStore } from '../../store/snapshots';
import { fsyncDir } from '../maintenance/db-restore';

const gunzipAsync = promisify(gunzip);

export interface MirrorResult {
  copied: number;
  present: number;
  /** Hashes the source does not hold. */
  missing: string[];
  /** Hashes whose file at the source does not match its hash (never copied). */
  corrupt: string[];
}

/** Copy one verified file: temporary name, fsync, rename; the caller fsyncs the folders it returns. */
async function copyVerified(from: string, hash: string, toStore: SnapshotStore): Promise<'copied' | 'corrupt'> {
  const body = await fsp.readFile(from);
  let text: Buffer;
  try {
    text = from.endsWith('.gz') ? await gunzipAsync(body) : body;
  } catch {
    return 'corrupt';
  }
  if (sha256Hex(text) !== hash) return 'corrupt';
  const dir = path.join(toStore.root, hash.slice(0, 2));
  await fsp.mkdir(dir, { recursive: true, mode: 0o700 });
  const final = path.join(dir, path.basename(from));
  const temp = path.join(dir, `.${hash}.${process.pid}.mirror.tmp`);
  const fh = await fsp.open(temp, 'w', 0o600);
  try {
    await fh.writeFile(body);
    await fh.sync();
  } finally {
    await fh.close();
  }
  await fsp.rename(temp, final);
  return 'copied';
}

/**
 * Make `to` hold the file of every hash in `hashes` that it lacks, copied from `from`. Files already at `to` are left
 * alone (a content-addressed file never changes once written). `known` holds hashes already confirmed at `to`, and
 * gains those confirmed here, so a long-running mirror stats each file once. `parallel` copies run at once.
 */
export async function mirrorSnapshots(
  from: SnapshotStore,
  to: SnapshotStore,
  hashes: Iterable<string>,
  known = new Set<string>(),
  parallel = 4,
): Promise<MirrorResult> {
  const result: MirrorResult = { copied: 0, present: 0, missing: [], corrupt: [] };
  const touched = new Set<string>();
  const todo = [...hashes].filter((h) => !known.has(h));
  let next = 0;
  const worker = async () => {
    while (next < todo.length) {
      const hash = todo[next++];
      if (to.locate(hash)) {
        result.present++;
        known.add(hash);
        continue;
      }
      const src = from.locate(hash);
      if (!src) {
        result.missing.push(hash);
        continue;
      }
      if ((await copyVerified(src, hash, to)) === 'corrupt') {
        result.corrupt.push(hash);
        continue;
      }
      result.copied++;
      known.add(hash);
      touched.add(path.join(to.root, hash.slice(0, 2)));
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, parallel) }, worker));
  for (const dir of touched) fsyncDir(dir);
  if (touched.size && existsSync(to.root)) fsyncDir(to.root);
  return result;
}
