// Templates as YAML files: the built-in library (src/templates/builtin/*.yaml, carried in the executable as assets), the parser every template file goes through, and the writer of exported files.
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { parse, stringify } from 'yaml';
import { listAssets, readAsset } from '../runtime/assets';
import { TEMPLATE_FIELDS, templateDefaults } from './schema';
import type { TemplateSpec } from './types';

export { TEMPLATE_FIELDS } from './schema';

export const BUILTIN_FOLDER = 'src/templates/builtin';

/** Where the JSON Schema of a template file is served by the web interface (and shipped: schema/template.schema.json). */
export const TEMPLATE_SCHEMA_URL_PATH = '/schema/template.schema.json';
export const TEMPLATE_SCHEMA_ASSET = 'schema/template.schema.json';

/** A template file that is not YAML or not a mapping; field-level problems are validateTemplate's. */
export class TemplateFileError extends Error {
  constructor(
    readonly file: string,
    message: string,
  ) {
    super(`${file}: ${message}`);
    this.name = 'TemplateFileError';
  }
}

/**
 * The template a YAML text describes, with the optional fields filled in as the schema's defaults say (empty
 * lists, null prompt/enable/exit, shell mode, redaction on). Field values are not checked here: run
 * validateTemplate on the result before using it.
 */
export function parseTemplateYaml(text: string, file: string): TemplateSpec {
  let data: unknown;
  try {
    data = parse(text, { prettyErrors: true, uniqueKeys: true, maxAliasCount: 100 });
  } catch (err) {
    throw new TemplateFileError(file, `not valid YAML: ${err instanceof Error ? err.message.split('\n')[0] : String(err)}`);
  }
  return templateFromData(data, file);
}

/** A template file's parsed YAML as a template (parseTemplateYaml's second half). */
function templateFromData(data: unknown, file: string): TemplateSpec {
  if (typeof data !== 'object' || data === null || Array.isArray(data)) throw new TemplateFileError(file, 'must be a mapping of template fields');
  return templateWithDefaults(data as TemplateSpec);
}

/** A template with the optional fields a file may leave out filled in as the schema's defaults say. */
export function templateWithDefaults(fields: Pick<TemplateSpec, 'name' | 'vendor' | 'commands'> & Partial<TemplateSpec>): TemplateSpec {
  return { ...templateDefaults(), ...fields } as TemplateSpec;
}

const builtinFiles = () => listAssets(BUILTIN_FOLDER).filter((n) => n.endsWith('.yaml'));

/** The built-in files parsed when the bundle was built (build/esbuild-node.mjs); absent when running from src/. */
declare const __CONFVAULT_BUILTIN_TEMPLATES__: string | undefined;

/**
 * The built-in templates in file-name order. A broken built-in file stops the process: it is a release bug. A bundle
 * carries the files parsed at build time, used when the shipped files have the digest they were parsed from (their
 * YAML is not parsed again: 0.1-0.15 s of CPU for each process); otherwise, and when running from src/, each is parsed.
 */
export function loadBuiltinTemplates(): TemplateSpec[] {
  const built = parsedAtBuild(typeof __CONFVAULT_BUILTIN_TEMPLATES__ === 'string' ? __CONFVAULT_BUILTIN_TEMPLATES__ : undefined, builtinFilesDigest());
  return builtinFiles().map((n) => (built && n in built ? templateFromData(built[n], n) : parseTemplateYaml(readAsset(n).toString('utf8'), n)));
}

/** The data of a bundle's parsed built-ins (`{ digest, data }` as JSON), by file, when `digest` is theirs; else null. */
export function parsedAtBuild(json: string | undefined, digest: string): Record<string, unknown> | null {
  if (json === undefined) return null;
  const built = JSON.parse(json) as { digest?: unknown; data?: unknown };
  return built.digest === digest && typeof built.data === 'object' && built.data !== null ? (built.data as Record<string, unknown>) : null;
}

let filesDigest: string | undefined;

/** SHA-256 of the built-in files as shipped, names and bytes: reading them costs a small part of parsing them. */
export function builtinFilesDigest(): string {
  if (filesDigest !== undefined) return filesDigest;
  const hash = createHash('sha256');
  for (const n of builtinFiles()) hash.update(`${n}\0`).update(readAsset(n)).update('\0');
  return (filesDigest = hash.digest('hex'));
}

/** The template as a YAML file that parseTemplateYaml reads back to the same template (fields in the documented order). */
export function templateToYaml(spec: TemplateSpec, header: readonly string[] = []): string {
  const data: Record<string, unknown> = {};
  for (const field of TEMPLATE_FIELDS) {
    const value = spec[field];
    // Optional fields left out when absent or empty, as a hand-written file would.
    if (value === undefined) continue;
    if (Array.isArray(value) && value.length === 0 && field === 'change_events') continue;
    data[field] =
      field === 'redact_patterns'
        ? spec.redact_patterns.map(({ pattern, replacement, within }) => ({
            pattern,
            ...(replacement === undefined ? {} : { replacement }),
            ...(within === undefined ? {} : { within }),
          }))
        : value;
  }
  const comments = header.map((l) => `# ${l}\n`).join('');
  return comments + stringify(data, { lineWidth: 0 });
}

/** One template file of a folder: its text, or why it could not be read. */
export interface TemplateFolderEntry {
  path: string;
  text: string | null;
  readError: string | null;
}

/** The `*.yaml` and `*.yml` files of a custom-template folder in name order; a missing folder holds none. Hidden files (editor swap files) are skipped. */
export function readTemplateFolder(dir: string): TemplateFolderEntry[] {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw err;
  }
  return names
    .filter((n) => /\.ya?ml$/i.test(n) && !n.startsWith('.'))
    .sort()
    .map((n) => {
      const file = path.join(dir, n);
      try {
        return { path: file, text: readFileSync(file, 'utf8'), readError: null };
      } catch (err) {
        return { path: file, text: null, readError: (err as Error).message };
      }
    });
}
