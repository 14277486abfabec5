// The worker pools' bundles (src/runtime/worker-pool.ts): each entry in src/ and the asset file its bundle becomes.
// The executable carries them as assets (build/build.mjs); the test suite makes them once (test/run.sh) and points every
// process at them with CONFVAULT_WORKER_BUNDLES, instead of each process that runs a backup, a search or a compliance
// check bundling src/ again with esbuild (about 0.3 s of CPU each time, some hundred processes a run).
// Usage: node build/worker-bundles.mjs OUTDIR   (prints the files written, one a line)
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import * as esbuild from 'esbuild';
import { NATIVE_PLUGINS, NODE_BUNDLE } from './esbuild-node.mjs';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/** Each worker pool's entry and the asset file its bundle becomes (the pools' `asset`, under workers/). */
export const WORKERS = [
  ['src/features/configs/workers/compute-worker.ts', 'compute-worker.cjs'], // search, diff: WORKER_ASSET in src/features/configs/workers/pool.ts
  ['src/engine/capture/capture-worker.ts', 'capture-worker.cjs'], // capture post-processing and device sessions: ENGINE_WORKER_ASSET
  ['src/features/compliance/compliance-worker.ts', 'compliance-worker.cjs'], // compliance judgements: COMPLIANCE_WORKER_ASSET
];

/** Bundles every pool's worker into `outdir`; returns the files written. */
export async function bundleWorkerPools(outdir) {
  return Promise.all(
    WORKERS.map(async ([entry, file]) => {
      const outfile = path.join(outdir, file);
      await esbuild.build({ ...NODE_BUNDLE, entryPoints: [path.join(ROOT, entry)], outfile, plugins: NATIVE_PLUGINS });
      return outfile;
    }),
  );
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const outdir = process.argv[2];
  if (!outdir) throw new Error('usage: node build/worker-bundles.mjs OUTDIR');
  for (const f of await bundleWorkerPools(path.resolve(outdir))) console.log(path.relative(process.cwd(), f));
}
