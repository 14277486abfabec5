// Child process of the seeder: digests its share of the distinct configuration texts, then writes them through the real SnapshotStore.
import { changeFingerprint } from '../../src/templates/patterns';
import { getBuiltinTemplate } from '../../src/templates/index';
import { SnapshotStore, sha256Hex } from '../../src/store/snapshots';
import { isEntryPoint, reportFatal, sendToParent } from './common';
import { bigConfig, deviceConfig } from './seed-configs';

/** One distinct text to store: a device's configuration at one version. */
export interface SnapshotJobItem {
  key: number;
  name: string;
  template: string;
  deviceIndex: number;
  version: number;
  big: boolean;
}

export interface SnapshotJob {
  dataDir: string;
  compress: boolean;
  items: SnapshotJobItem[];
}

/** Phase 1, per item: [key, hash, size, change fingerprint]; enough for the records, sent before any file is written. */
export type SnapshotDigest = [number, string, number, string];
/** Phase 2, per item: [key, hash, stored_size, compressed (0/1)], once SnapshotStore.put has made the file durable. */
export type SnapshotStored = [number, string, number, number];

export function isSnapshotJob(m: unknown): m is SnapshotJob {
  return !!m && typeof m === 'object' && 'items' in m && 'dataDir' in m;
}

export function isSnapshotDigests(m: unknown): m is { digests: SnapshotDigest[] } {
  return !!m && typeof m === 'object' && 'digests' in m;
}

export function isSnapshotStored(m: unknown): m is { stored: SnapshotStored[] } {
  return !!m && typeof m === 'object' && 'stored' in m;
}

const textOf = (it: SnapshotJobItem) => (it.big ? bigConfig(it.name, it.version) : deviceConfig(it.name, it.template, it.deviceIndex, it.version));

function digest(job: SnapshotJob): SnapshotDigest[] {
  const ignore = new Map<string, readonly string[]>();
  return job.items.map((it) => {
    let patterns = ignore.get(it.template);
    if (!patterns) ignore.set(it.template, (patterns = getBuiltinTemplate(it.template)?.ignore_patterns ?? []));
    const text = textOf(it);
    return [it.key, sha256Hex(text), Buffer.byteLength(text), changeFingerprint(text, patterns)];
  });
}

function store(job: SnapshotJob): SnapshotStored[] {
  const snapshots = new SnapshotStore(job.dataDir, job.compress);
  return job.items.map((it) => {
    const snap = snapshots.put(textOf(it));
    return [it.key, snap.hash, snap.stored_size, snap.compressed ? 1 : 0];
  });
}

if (isEntryPoint(import.meta.url)) {
  process.once('message', (m: unknown) => {
    (async () => {
      if (!isSnapshotJob(m)) throw new Error('expected a snapshot job');
      await sendToParent({ digests: digest(m) });
      await sendToParent({ stored: store(m) });
      process.exit(0);
    })().catch(reportFatal);
  });
}
