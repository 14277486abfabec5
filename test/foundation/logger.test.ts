// The log destination: the lines of one event-loop turn leave together right after it, nothing is held longer, nothing is lost at exit.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { closeSync, openSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { Writable } from 'node:stream';
import { accessLogWriter, createLogger, type AccessEntry } from '../../src/lib/logger';
import { REPO_ROOT, tempDir } from '../helpers/appliance';

test('lines logged in one turn are written together right after it, as one JSON object per line, secrets censored', async () => {
  const dir = tempDir('confvault-log-');
  const file = path.join(dir, 'log.jsonl');
  const fd = openSync(file, 'w');
  try {
    const log = createLogger('info', fd);
    log.info({ request_id: 'a', status: 200 }, 'request');
    log.warn({ password: 'hunter2-secret' }, 'credential touched');
    log.debug('below the level');
    assert.equal(readFileSync(file, 'utf8'), '', 'nothing written during the turn');
    await nextTurn();
    const lines = readFileSync(file, 'utf8')
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    assert.deepEqual(
      lines.map((l) => [l.level, l.msg]),
      [
        ['info', 'request'],
        ['warn', 'credential touched'],
      ],
    );
    assert.equal(lines[1].password, '[redacted]');

    // A line on a quiet logger is not held back for company.
    log.info('alone');
    await nextTurn();
    assert.match(readFileSync(file, 'utf8'), /"msg":"alone"\}\n$/);
  } finally {
    closeSync(fd);
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a line logged just before process.exit reaches stdout', () => {
  const loader = pathToFileURL(path.join(REPO_ROOT, 'node_modules/tsx/dist/loader.mjs')).href;
  const logger = pathToFileURL(path.join(REPO_ROOT, 'src/lib/logger.ts')).href;
  const script = `import { createLogger } from ${JSON.stringify(logger)}; const log = createLogger('info'); log.info('one'); log.error('last words'); process.exit(3);`;
  const r = spawnSync(process.execPath, ['--import', loader, '--input-type=module', '-e', script], { encoding: 'utf8' });
  assert.equal(r.status, 3, r.stderr);
  const msgs = r.stdout
    .trimEnd()
    .split('\n')
    .map((l) => (JSON.parse(l) as { msg: string }).msg);
  assert.deepEqual(msgs, ['one', 'last words']);
});

test('the access-log writer writes the line pino writes for the same entry, and nothing below level info', () => {
  const capture = () => {
    const lines: string[] = [];
    const stream = new Writable({ write: (chunk: Buffer, _enc, done) => (lines.push(chunk.toString('utf8')), done()) });
    return { lines, stream };
  };
  const entries: AccessEntry[] = [
    { request_id: 'r-1', method: 'GET', path: '/api/v1/devices/7/backups', status: 200, duration_ms: 0.42, user: 'reader' },
    { request_id: 'r-2', method: 'POST', path: '/login"\\\n\u00e9', status: 401, duration_ms: 12, user: undefined },
  ];
  const pinoOut = capture();
  const pinoLog = createLogger('info', pinoOut.stream);
  for (const e of entries) pinoLog.info(e, 'request');
  const ours = capture();
  const write = accessLogWriter(createLogger('info', ours.stream));
  for (const e of entries) write(e);
  assert.equal(ours.lines.length, 2);
  const withoutTime = (l: string) => l.replace(/"time":"[^"]+"/, '"time":""');
  assert.deepEqual(ours.lines.map(withoutTime), pinoOut.lines.map(withoutTime), 'same bytes, same order of fields');
  assert.match(JSON.parse(ours.lines[0]).time, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);

  const quiet = capture();
  accessLogWriter(createLogger('warn', quiet.stream))(entries[0]);
  assert.deepEqual(quiet.lines, []);
});
