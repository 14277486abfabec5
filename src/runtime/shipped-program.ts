// Runs the whole program shipped inside the executable as an asset (`confvault serve`, src/exe-main.ts), compiled with the
// V8 code cache the build made for it with this very node (a rejected cache only costs start-up time).
import { createRequire } from 'node:module';
import path from 'node:path';
import vm from 'node:vm';

/** The asset keys build/build.mjs writes: the program (already wrapped as a CommonJS function) and its code cache. */
export const PROGRAM_ASSET = 'program/confvault-full.cjs';
export const PROGRAM_CACHE_ASSET = 'program/confvault-full.cache';

interface Sea {
  isSea(): boolean;
  getAsset(key: string): ArrayBuffer;
}

/** Runs the shipped program and returns true; false outside the executable (development runs src/main.ts itself). */
export function runShippedProgram(): boolean {
  const req = createRequire(process.execPath);
  const sea = req('node:sea') as Sea;
  if (!sea.isSea()) return false;
  const code = Buffer.from(sea.getAsset(PROGRAM_ASSET)).toString('utf8');
  const script = new vm.Script(code, {
    filename: PROGRAM_ASSET,
    cachedData: Buffer.from(sea.getAsset(PROGRAM_CACHE_ASSET)),
    importModuleDynamically: vm.constants.USE_MAIN_CONTEXT_DEFAULT_LOADER,
  });
  const run = script.runInThisContext() as (exports: object, require: NodeJS.Require, module: object, file: string, dir: string) => void;
  const module = { exports: {} };
  run.call(module.exports, module.exports, req, module, process.execPath, path.dirname(process.execPath));
  return true;
}
