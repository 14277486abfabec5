// Refusals of a capture command are recognised for every recorded vendor, and no recorded configuration is taken for one.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { isCommandRejected } from '../../src/engine/command-errors';
import { sessionVocabulary } from '../../src/engine/prompts';
import { getBuiltinTemplate } from '../../src/templates/index';
import { loadTranscript } from '../sim/transcript';
import { REPO_ROOT } from '../helpers/appliance';

const DIR = path.join(REPO_ROOT, 'test/sim/transcripts');
const transcripts = readdirSync(DIR)
  .filter((f) => f.endsWith('.json'))
  .map((f) => loadTranscript(path.join(DIR, f)));

/** The refusal lines a backup with this transcript's template knows: the template's own, then the engine defaults. */
const refusalsOf = (template: string) => sessionVocabulary(getBuiltinTemplate(template)!).commandErrors;

test('every recorded "unknown command" answer is a refusal (template lines and defaults), also with CRLF and around the echo', () => {
  assert.ok(transcripts.length >= 45, `${transcripts.length} transcripts`);
  for (const t of transcripts) {
    const refusal = t.unknown_command.replaceAll('foo', 'show running-confg');
    assert.ok(isCommandRejected(refusal, refusalsOf(t.template)), `${t.template}: ${JSON.stringify(refusal)}`);
    assert.ok(isCommandRejected(`\r\n${refusal.replace(/\n/g, '\r\n')}\r\n`, refusalsOf(t.template)), `${t.template} with CRLF`);
  }
  for (const live of ['% Unknown command: show nonsense', '% Command incomplete: show ip', 'bash: line 1: shw: command not found']) {
    assert.ok(isCommandRejected(live), live);
  }
});

test('no recorded command output is taken for a refusal', () => {
  for (const t of transcripts) {
    for (const [command, output] of Object.entries(t.commands)) {
      assert.ok(!isCommandRejected(output, refusalsOf(t.template)), `${t.template}: '${command}'`);
    }
  }
  for (const text of ['', '\n\n', 'srv1-lab\n', 'hostname r1\n', 'ip route 10.0.0.0/8 Null0\nend\n']) assert.ok(!isCommandRejected(text), JSON.stringify(text));
});

test('an error line inside a longer output is not a refusal of the whole command', () => {
  const config = ['hostname r1', 'banner motd ^', '% Invalid input is what users see', '^', 'interface eth0', ' description x', 'end'].join('\n');
  assert.equal(isCommandRejected(config), false);
});
