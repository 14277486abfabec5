// Real configurations written by other people, imported as `backup import` does (built-in template per vendor
// folder, redaction on): no secret left in clear, no file refused, no token in place of a keyword or a brace.
//
// The corpus is not in the repository (its sources' licences allow use, not redistribution here): it is the folder
// named by CONFVAULT_CORPUS, else ../shared/corpus beside the repository, laid out as <template name>/<source>/<file>
// (test/corpus/SOURCES.md lists where each part came from). Without it the test is skipped and says so.
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { openAppliance, type Appliance } from '../../src/app/bootstrap';
import { loadConfig } from '../../src/config/config';
import { importBackup, normaliseImportedText } from '../../src/features/backups/import.service';
import { SYSTEM_ACTOR } from '../../src/identity/actor';
import { REPO_ROOT, tempDir } from '../helpers/appliance';
import { seedBuiltinTemplate, seedCredential, seedDevice } from '../helpers/seed';
import { checkImported } from './corpus-check';
import { FAMILY_OF } from './secret-detector';

const CORPUS = process.env.CONFVAULT_CORPUS ?? path.resolve(REPO_ROOT, '..', 'shared', 'corpus');
const present = existsSync(CORPUS) && statSync(CORPUS).isDirectory();

function filesUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile())
    .map((e) => path.join(e.parentPath, e.name))
    .sort();
}

const skip = present ? false : `no corpus at ${CORPUS}: set CONFVAULT_CORPUS to run it (test/corpus/SOURCES.md)`;

describe(`real-configuration corpus (${CORPUS})`, () => {
  let appliance: Appliance | undefined;
  before(() => {
    if (skip) return;
    const dir = tempDir('confvault-corpus-');
    appliance = openAppliance({}, loadConfig({ dataDir: path.join(dir, 'data') }, { CONFVAULT_LOG_LEVEL: 'silent' }));
  });
  after(() => appliance?.close());

  test('every file imports, no secret is left in clear and no token replaced structure', { skip, timeout: 600_000 }, (t) => {
    const { db, snapshots, secrets } = appliance!;
    const cred = seedCredential(db, secrets, { name: 'corpus', username: 'corpus', password: 'corpus' });
    const totals = { files: 0, bytes: 0, secrets: 0, tokens: 0, leaks: 0, damaged: 0, failed: 0 };
    const platforms: string[] = [];
    const problems: string[] = [];
    for (const platform of readdirSync(CORPUS).sort()) {
      const family = FAMILY_OF[platform];
      if (!family) continue;
      platforms.push(platform);
      const device = seedDevice(db, { name: platform, port: 22, credential_id: cred, template_id: seedBuiltinTemplate(db, platform) });
      let at = Date.now() - 86_400_000;
      for (const file of filesUnder(path.join(CORPUS, platform))) {
        const text = readFileSync(file, 'utf8');
        const where = path.relative(CORPUS, file);
        totals.files++;
        totals.bytes += Buffer.byteLength(text);
        let stored: string;
        try {
          const r = importBackup(db, SYSTEM_ACTOR, snapshots, device, text, at++, { redact_key: secrets.redactionKey });
          stored = snapshots.read(r.hash!) ?? '';
        } catch (err) {
          totals.failed++;
          problems.push(`${where}: import failed: ${(err as Error).message}`);
          continue;
        }
        const v = checkImported(normaliseImportedText(text), stored, family);
        totals.secrets += v.secrets;
        totals.tokens += v.tokens;
        totals.leaks += v.leaks.length;
        if (v.damage.length) totals.damaged++;
        for (const l of v.leaks) problems.push(`${where}: leak ${l}`);
        for (const d of v.damage) problems.push(`${where}: damage ${d}`);
      }
    }
    t.diagnostic(
      `${totals.files} files (${(totals.bytes / 1e6).toFixed(1)} MB), ${platforms.length} platforms, ${totals.secrets} secrets found, ` +
        `${totals.tokens} tokens written, ${totals.leaks} leaks, ${totals.damaged} files damaged, ${totals.failed} failed imports`,
    );
    assert.ok(totals.files > 0, 'the corpus folder holds no file of a known platform');
    assert.deepEqual(problems.slice(0, 200), [], `${problems.length} problems`);
  });
});
