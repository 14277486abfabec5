// appliance.conf.example: names every setting of the schema, with the code's defaults, and every CONFVAULT_* variable.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parse as parseToml } from 'smol-toml';
import { ENV_KEYS, loadConfig } from '../../src/config/config';
import { REPO_ROOT } from '../helpers/appliance';

const EXAMPLE = path.join(REPO_ROOT, 'appliance.conf.example');

test('the example file loads to exactly the defaults', () => {
  assert.deepEqual(loadConfig({ config: EXAMPLE }, {}), loadConfig({}, {}));
});

test('the example file sets every key of every section, and no other', () => {
  const defaults = loadConfig({}, {}) as unknown as Record<string, Record<string, unknown>>;
  const example = parseToml(readFileSync(EXAMPLE, 'utf8')) as Record<string, Record<string, unknown>>;
  assert.deepEqual(Object.keys(example).sort(), Object.keys(defaults).sort());
  for (const section of Object.keys(defaults)) {
    assert.deepEqual(Object.keys(example[section]).sort(), Object.keys(defaults[section]).sort(), `[${section}]`);
  }
});

test('every key in the example has a comment line right above it', () => {
  const lines = readFileSync(EXAMPLE, 'utf8').split('\n');
  lines.forEach((line, i) => {
    if (/^[a-z_]+\s*=/.test(line)) assert.match(lines[i - 1], /^# \S/, `no explanation above "${line}"`);
  });
});

test('the example lists every CONFVAULT_* variable with the key it sets', () => {
  const text = readFileSync(EXAMPLE, 'utf8');
  for (const [name, [section, key]] of Object.entries(ENV_KEYS)) {
    assert.match(text, new RegExp(`^#\\s+${name}\\s+\\[${section}\\] ${key}\\b`, 'm'), name);
  }
  assert.match(text, /^#\s+CONFVAULT_CONFIG\s/m);
});
