// Process settings that are not appliance settings: where the source tree is (development) and where native addons are extracted.
export interface RuntimeEnv {
  /** CONFVAULT_ROOT: the repository root, when running from source outside it; null to search from the script and cwd. */
  root: string | null;
  /** CONFVAULT_NATIVE_DIR: where the executable extracts its native addons; null for DATA_DIR/.native. */
  nativeDir: string | null;
}

/** The runtime environment variables, read here only (an empty value counts as unset). */
export function runtimeEnv(env: NodeJS.ProcessEnv = process.env): RuntimeEnv {
  return { root: env.CONFVAULT_ROOT || null, nativeDir: env.CONFVAULT_NATIVE_DIR || null };
}
