// Process settings that are not appliance settings: where the source tree is (development), where native addons are extracted, prebuilt worker bundles (development).
export interface RuntimeEnv {
  /** CONFVAULT_ROOT: the repository root, when running from source outside it; null to search from the script and cwd. */
  root: string | null;
  /** CONFVAULT_NATIVE_DIR: where the executable extracts its native addons; null for DATA_DIR/.native. */
  nativeDir: string | null;
  /**
   * CONFVAULT_WORKER_BUNDLES: running from source, a folder holding each worker pool's bundle under its asset's file name
   * (`node build/worker-bundles.mjs DIR`, which test/run.sh runs once for the suite); null to bundle src/ at first use.
   */
  workerBundles: string | null;
}

/** The runtime environment variables, read here only (an empty value counts as unset). */
export function runtimeEnv(env: NodeJS.ProcessEnv = process.env): RuntimeEnv {
  return { root: env.CONFVAULT_ROOT || null, nativeDir: env.CONFVAULT_NATIVE_DIR || null, workerBundles: env.CONFVAULT_WORKER_BUNDLES || null };
}
