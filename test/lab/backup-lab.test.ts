// Backups of the real device lab, driven like an operator does (inventory through /api/v1, `confvault backup run`, `serve`):
// every transport and template, logins, failures, host keys, pagers, refused commands, dedup, changes, the schedule.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import net from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { spawnServe } from '../helpers/appliance';
import { secretToken } from '../../src/templates/redact';
import { LAB_DEVICES, LAB_KEY_ENC_PATH, LAB_KEY_PASSPHRASE, LAB_KEY_PATH, onDevice, rekey, showRunningConfig, vtysh } from './lab';
import { LabAppliance, expectedStoredText, labSkip, presentedHostKey, sha256, takeLab, type DeviceDto } from './backup-lab.shared';

const skip = labSkip();
const { r1, r2, bird1, srv1 } = LAB_DEVICES;

let app: LabAppliance;
let release: (() => void) | undefined;
let frrTemplate: number;
let frrStrip: string[];
let frrRedact: { pattern: string }[];
/** netops / netops123, the FRR devices' login */
let netops: number;

before(
  async () => {
    if (skip) return;
    release = await takeLab();
    app = await LabAppliance.start();
    frrTemplate = await app.templateId('frr');
    const frr = await app.call<{ strip_patterns: string[]; redact_patterns: { pattern: string }[] }>('GET', `/templates/${frrTemplate}`, 200);
    frrStrip = frr.strip_patterns;
    frrRedact = frr.redact_patterns;
    netops = await app.createCredential({ name: 'netops', username: r1.username, password: r1.password });
  },
  { timeout: 30 * 60_000 },
); // waits for other lab test files, and a first lab start installs packages

after(async () => {
  try {
    await app?.close();
  } finally {
    release?.();
  }
});

/**
 * What an FRR device's backup must store: its running-config now, without the volatile lines, and its BGP passwords
 * as the appliance's keyed tokens (redaction is on by default).
 */
async function expectedFrr(device: 'r1' | 'r2', key = app.redactionKey): Promise<string> {
  return withBgpTokens(expectedStoredText(await showRunningConfig(device), frrStrip), key);
}

/** FRR's stored text has each BGP neighbour password as the appliance's keyed token. */
function withBgpTokens(text: string, key: Buffer): string {
  return text.replace(/^( neighbor \S+ password )(\S+)$/gm, (_all, head: string, secret: string) => head + secretToken(key, secret));
}

/** What a network engineer looks for in a stored FRR config, beyond equality with the expectation. */
function assertCleanFrrConfig(text: string | null, hostname: string): asserts text is string {
  assert.ok(text, 'the backup has content');
  for (const volatile of [/^Building configuration/m, /^Current configuration/m, /^frr version /m]) assert.doesNotMatch(text, volatile);
  // eslint-disable-next-line no-control-regex -- matching control characters is the point of this pattern
  assert.doesNotMatch(text, /[\r\x1b\x00]/, 'no CR, escape codes or NUL');
  const lines = text.split('\n');
  assert.ok(lines.includes(`hostname ${hostname}`), 'its hostname line');
  assert.ok(
    lines.some((l) => /^router bgp \d+$/.test(l)),
    'the BGP section',
  );
  assert.ok(!lines.some((l) => l.startsWith(`${hostname}#`) || l === 'show running-config' || l === 'terminal length 0'), 'no prompt or echoed command');
  assert.equal(lines.at(-2), 'end', 'ends with "end" and one newline');
  assert.equal(lines.at(-1), '');
}

test('FRR r1 over SSH in shell mode (built-in frr): the running-config minus its volatile lines, byte for byte; host key recorded', { skip }, async () => {
  const dev = await app.createDevice({ name: 'r1-ssh-shell', port: r1.ssh_port, credential_id: netops, template_id: frrTemplate });
  const { line, record, text } = await app.backupAndRead(dev.id);
  assert.equal(line.result, 'ok', line.message ?? '');
  assert.equal(line.changed, false, 'the first backup of a device is not a change');
  assertCleanFrrConfig(text, r1.hostname);
  const expected = await expectedFrr('r1');
  assert.equal(text, expected);
  assert.equal(record.config_snapshot_hash, sha256(expected));
  assert.ok(!text.includes('LabBgpSecret1'), 'the BGP password is not stored: redaction is on by default');
  assert.ok(text.includes(` neighbor 10.201.1.2 password ${secretToken(app.redactionKey, 'LabBgpSecret1')}\n`), 'it is stored as its keyed token');
  const d = await app.device(dev.id);
  assert.equal(d.reachability.status, 'reachable');
  assert.equal(d.host_key, await presentedHostKey(r1.ssh_port), 'the key r1 presents is recorded on first contact');
  assert.equal(d.last_backup?.id, record.id);
});

test('FRR r1 over SSH in exec mode (custom template created through the API): the same text as shell mode', { skip }, async () => {
  const tpl = await app.call<{ id: number; mode: string }>('POST', '/templates', 201, {
    name: 'frr-exec-lab',
    vendor: 'FRRouting (vtysh over SSH exec)',
    mode: 'exec',
    commands: ['show running-config'],
    strip_patterns: frrStrip,
    redact_patterns: frrRedact,
  });
  assert.equal(tpl.mode, 'exec');
  const dev = await app.createDevice({ name: 'r1-ssh-exec', port: r1.ssh_port, credential_id: netops, template_id: tpl.id });
  const { line, text } = await app.backupAndRead(dev.id);
  assert.equal(line.result, 'ok', line.message ?? '');
  assertCleanFrrConfig(text, r1.hostname);
  assert.equal(text, await expectedFrr('r1'));
});

test('FRR r1 over Telnet (login and password prompts, built-in frr): the same text as over SSH', { skip }, async () => {
  const dev = await app.createDevice({ name: 'r1-telnet', port: r1.telnet_port!, protocol: 'telnet', credential_id: netops, template_id: frrTemplate });
  const { line, text } = await app.backupAndRead(dev.id);
  assert.equal(line.result, 'ok', line.message ?? '');
  assertCleanFrrConfig(text, r1.hostname);
  assert.equal(text, await expectedFrr('r1'));
  const d = await app.device(dev.id);
  assert.equal(d.reachability.status, 'reachable');
  assert.equal(d.host_key, null, 'Telnet has no host key');
});

test('FRR r1 paging through less (`terminal paginate`): the pager is answered once and the capture is complete', { skip }, async () => {
  // less ends with "(END)" drawn in pieces; a second "q" for the redraw used to land at the vtysh prompt and hang the backup.
  const tpl = await app.call<{ id: number }>('POST', '/templates', 201, {
    name: 'frr-paged-lab',
    vendor: 'FRRouting (vtysh with its pager on)',
    pre_commands: ['terminal paginate'],
    commands: ['show running-config'],
    strip_patterns: frrStrip,
    redact_patterns: frrRedact,
  });
  const dev = await app.createDevice({ name: 'r1-paged', port: r1.ssh_port, credential_id: netops, template_id: tpl.id });
  const { line, text } = await app.backupAndRead(dev.id);
  assert.equal(line.result, 'ok', line.message ?? '');
  assertCleanFrrConfig(text, r1.hostname);
  assert.doesNotMatch(text, /\(END\)/, 'no pager prompt in the text');
  assert.equal(text, await expectedFrr('r1'));
});

test('a capture command FRR rejects (shell and exec): COMMAND_FAILED, and its "% Unknown command" is not stored as the config', { skip }, async () => {
  for (const mode of ['shell', 'exec'] as const) {
    const tpl = await app.call<{ id: number }>('POST', '/templates', 201, {
      name: `frr-typo-${mode}`,
      vendor: 'FRRouting (a mistyped command)',
      mode,
      commands: ['show running-confg'],
    });
    const dev = await app.createDevice({ name: `r1-typo-${mode}`, port: r1.ssh_port, credential_id: netops, template_id: tpl.id });
    const { line, record, text } = await app.backupAndRead(dev.id);
    assert.equal(line.failure, 'COMMAND_FAILED', `${mode}: ${line.result} ${line.message}`);
    assert.match(line.message ?? '', /rejected 'show running-confg'/);
    assert.equal(record.success, false);
    assert.equal(text, null);
    assert.equal((await app.device(dev.id)).reachability.status, 'reachable');
  }
});

test('BIRD bird1 (built-in bird): status and protocols without prompts, escape codes or clocks; a second backup is not a change', { skip }, async () => {
  const birdops = await app.createCredential({ name: 'birdops', username: bird1.username, password: bird1.password });
  const dev = await app.createDevice({ name: 'bird1', port: bird1.ssh_port, credential_id: birdops, template_id: await app.templateId('bird') });
  const first = await app.backupAndRead(dev.id);
  assert.equal(first.line.result, 'ok', first.line.message ?? '');
  const text = first.text;
  assert.ok(text);
  // eslint-disable-next-line no-control-regex -- matching control characters is the point of this pattern
  assert.doesNotMatch(text, /[\r\x1b\x00]/, 'no CR, escape codes or NUL padding');
  assert.doesNotMatch(text, /^bird>|show status|show protocols/m, 'no prompt or echoed command');
  assert.doesNotMatch(
    text,
    /^BIRD [\d.]+ ready\.$|^Current server time|^Last reboot|^Last reconfiguration|Hold timer:|Keepalive timer:|Routes: +\d+ imported/m,
    'volatile lines dropped',
  );
  for (const re of [
    /^Router ID is 10\.201\.0\.13$/m,
    /^r1 +BGP /m,
    /^ +Description: +r1-lab$/m,
    /^ +Neighbor address: 10\.201\.0\.11$/m,
    /^ +Neighbor AS: +65001$/m,
    /^lab_nets +Static /m,
  ]) {
    assert.match(text, re);
  }
  assert.equal(text, expectedStoredText(text, []), 'stored normalised');

  const second = await app.backupAndRead(dev.id);
  assert.equal(second.line.result, 'ok', second.line.message ?? '');
  if (second.line.changed) console.error('BIRD-DIFF-FIRST\n' + text + '\nBIRD-DIFF-SECOND\n' + second.text);
  assert.equal(second.line.changed, false, 'session clocks and counters are not a configuration change');
});

/** srv1's three files as the template's commands print them, concatenated. */
async function srv1Files(): Promise<string> {
  let out = '';
  for (const file of ['/etc/hostname', '/etc/hosts', '/etc/network/interfaces']) {
    const text = await onDevice('srv1', 'cat', file);
    out += text.endsWith('\n') ? text : `${text}\n`;
  }
  return expectedStoredText(out, []);
}

test('Linux srv1 (built-in linux, exec) with a password: hostname, hosts and interfaces files, byte for byte', { skip }, async () => {
  const linuxops = await app.createCredential({ name: 'linuxops', username: srv1.username, password: srv1.password });
  const dev = await app.createDevice({ name: 'srv1', port: srv1.ssh_port, credential_id: linuxops, template_id: await app.templateId('linux') });
  const { line, text } = await app.backupAndRead(dev.id);
  assert.equal(line.result, 'ok', line.message ?? '');
  assert.equal(text, await srv1Files());
  assert.match(text, /^srv1-lab\n/);
  assert.match(text, /^iface eth0 inet static\n {4}address 10\.201\.0\.14\/24$/m);
});

test('key logins: the plain key on r1 and the passphrase-protected key on srv1, credentials created through the API', { skip }, async () => {
  const plain = await app.call<{ id: number; has_private_key: boolean; has_password: boolean }>('POST', '/credentials', 201, {
    name: 'netops-key',
    username: r1.username,
    private_key: readFileSync(LAB_KEY_PATH, 'utf8'),
  });
  assert.deepEqual([plain.has_private_key, plain.has_password], [true, false], 'a key and no password: only the key can log in');
  const encrypted = await app.call<Record<string, unknown> & { id: number; has_passphrase: boolean }>('POST', '/credentials', 201, {
    name: 'linuxops-key-enc',
    username: srv1.username,
    private_key: readFileSync(LAB_KEY_ENC_PATH, 'utf8'),
    passphrase: LAB_KEY_PASSPHRASE,
  });
  assert.equal(encrypted.has_passphrase, true);
  assert.ok(!JSON.stringify(encrypted).includes(LAB_KEY_PASSPHRASE) && !('private_key' in encrypted), 'secrets are write-only');

  const onR1 = await app.createDevice({ name: 'r1-key', port: r1.ssh_port, credential_id: plain.id, template_id: frrTemplate });
  const r1Backup = await app.backupAndRead(onR1.id);
  assert.equal(r1Backup.line.result, 'ok', r1Backup.line.message ?? '');
  assert.equal(r1Backup.text, await expectedFrr('r1'));

  const onSrv1 = await app.createDevice({ name: 'srv1-key-enc', port: srv1.ssh_port, credential_id: encrypted.id, template_id: await app.templateId('linux') });
  const srv1Backup = await app.backupAndRead(onSrv1.id);
  assert.equal(srv1Backup.line.result, 'ok', srv1Backup.line.message ?? '');
  assert.equal(srv1Backup.text, await srv1Files());
});

test('a wrong password: AUTH_FAILED, no content, and the device still counts as reachable', { skip }, async () => {
  const wrong = await app.createCredential({ name: 'netops-wrong', username: r1.username, password: 'not-the-password' });
  const dev = await app.createDevice({ name: 'r1-wrong-password', port: r1.ssh_port, credential_id: wrong, template_id: frrTemplate });
  const { line, record, text } = await app.backupAndRead(dev.id);
  assert.equal(line.result, 'failed');
  assert.equal(line.failure, 'AUTH_FAILED');
  assert.match(line.message ?? '', /Authentication failed for user netops/);
  assert.ok(!line.message?.includes('not-the-password'), 'the password is not in the message');
  assert.equal(record.success, false);
  assert.equal(record.error_message, line.message);
  assert.equal(record.config_snapshot_hash, null);
  assert.equal(text, null);
  const d = await app.device(dev.id);
  assert.equal(d.reachability.status, 'reachable', 'the device answered; the login is what failed');
  assert.equal(d.last_backup?.success, false);
});

test('a closed port: CONNECTION_REFUSED, the device unreachable and listed by GET /devices/unreachable', { skip }, async () => {
  const port = 2499;
  await assert.rejects(
    new Promise((resolve, reject) => net.connect(port, '127.0.0.1').once('connect', resolve).once('error', reject)),
    { code: 'ECONNREFUSED' },
    `nothing may listen on 127.0.0.1:${port} for this test`,
  );
  const dev = await app.createDevice({ name: 'closed-port', port, credential_id: netops, template_id: frrTemplate });
  const { line, record } = await app.backupAndRead(dev.id);
  assert.equal(line.result, 'failed');
  assert.equal(line.failure, 'CONNECTION_REFUSED');
  assert.equal(record.success, false);
  const d = await app.device(dev.id);
  assert.equal(d.reachability.status, 'unreachable');
  assert.match(d.reachability.error ?? '', /refused/i);
  const unreachable = await app.call<{ items: DeviceDto[] }>('GET', '/devices/unreachable?limit=100', 200);
  assert.deepEqual(
    unreachable.items.map((i) => i.name),
    ['closed-port'],
    'only the closed port: a refused login is not unreachable',
  );
});

test('an address on the lab LAN where no device answers: NETWORK_UNREACHABLE (no route to host), not a time-out', { skip }, async () => {
  // 10.201.0.250 is on the lab bridge, but nothing owns it: ARP goes unanswered and the kernel reports
  // EHOSTUNREACH after about 3 s, as for a switch that is powered off on a management VLAN.
  const dev = await app.call<DeviceDto>('POST', '/devices', 201, {
    name: 'powered-off',
    hostname: '10.201.0.250',
    port: 22,
    credential_id: netops,
    template_id: frrTemplate,
  });
  const { line, record } = await app.backupAndRead(dev.id);
  assert.equal(line.failure, 'NETWORK_UNREACHABLE', `${line.result} ${line.message}`);
  assert.match(line.message ?? '', /No route to 10\.201\.0\.250/);
  assert.equal(record.success, false);
  const d = await app.device(dev.id);
  assert.equal(d.reachability.status, 'unreachable');
});

test('repeated backups of an unchanged device: new records, one snapshot hash and one file, not flagged as changed', { skip }, async () => {
  const dev = await app.createDevice({ name: 'r1-dedup', port: r1.ssh_port, credential_id: netops, template_id: frrTemplate });
  const first = await app.backupAndRead(dev.id);
  assert.equal(first.line.result, 'ok', first.line.message ?? '');
  const files = app.snapshotFiles();
  const second = await app.backupAndRead(dev.id);
  assert.equal(second.line.result, 'ok', second.line.message ?? '');
  assert.equal(second.line.changed, false);
  assert.notEqual(second.record.id, first.record.id, 'each backup is its own record');
  assert.equal(second.record.config_snapshot_hash, first.record.config_snapshot_hash);
  assert.deepEqual(app.snapshotFiles(), files, 'no new snapshot file');
  assert.equal(files.filter((f) => f.includes(first.record.config_snapshot_hash!)).length, 1);
  assert.deepEqual(
    (await app.history(dev.id)).map((r) => r.config_snapshot_hash),
    [first.record.config_snapshot_hash, first.record.config_snapshot_hash],
  );
});

test('a change made on r1 with vtysh is seen as changed, with the new line; reverting it brings back the first snapshot', { skip }, async () => {
  const route = 'ip route 100.64.123.0/24 Null0';
  assert.ok(!(await showRunningConfig('r1')).split('\n').includes(route), `${route} is not in r1's seed config`);
  const dev = await app.createDevice({ name: 'r1-change', port: r1.ssh_port, credential_id: netops, template_id: frrTemplate });
  const original = await app.backupAndRead(dev.id);
  assert.equal(original.line.result, 'ok', original.line.message ?? '');

  await vtysh('r1', 'configure terminal', route);
  try {
    const changed = await app.backupAndRead(dev.id);
    assert.equal(changed.line.result, 'ok', changed.line.message ?? '');
    assert.equal(changed.line.changed, true, 'flagged as changed');
    assert.ok(changed.text?.split('\n').includes(route), 'the new route is in the stored text');
    assert.equal(changed.text, await expectedFrr('r1'));
    assert.notEqual(changed.record.config_snapshot_hash, original.record.config_snapshot_hash);
  } finally {
    await vtysh('r1', 'configure terminal', `no ${route}`);
  }
  const reverted = await app.backupAndRead(dev.id);
  assert.equal(reverted.line.changed, true, 'removing the route is a change too');
  assert.equal(reverted.record.config_snapshot_hash, original.record.config_snapshot_hash);
});

test('a changed host key (rekey r2): HOST_KEY_CHANGED, then accepted through PUT /devices/{id}, the new key recorded', { skip }, async () => {
  const dev = await app.createDevice({ name: 'r2-rekeyed', port: r2.ssh_port, credential_id: netops, template_id: frrTemplate });
  const first = await app.backupAndRead(dev.id);
  assert.equal(first.line.result, 'ok', first.line.message ?? '');
  const oldKey = (await app.device(dev.id)).host_key;
  assert.equal(oldKey, await presentedHostKey(r2.ssh_port));

  await rekey('r2');
  const newKey = await presentedHostKey(r2.ssh_port);
  assert.notEqual(newKey, oldKey);
  const refused = await app.backupAndRead(dev.id);
  assert.equal(refused.line.result, 'failed');
  assert.equal(refused.line.failure, 'HOST_KEY_CHANGED');
  assert.ok(refused.line.message?.includes(oldKey) && refused.line.message.includes(newKey), `both keys named: ${refused.line.message}`);
  assert.equal(refused.text, null);
  let d = await app.device(dev.id);
  assert.equal(d.host_key, oldKey, 'a refused key is not recorded');
  assert.equal(d.reachability.status, 'reachable');

  d = await app.call<DeviceDto>('PUT', `/devices/${dev.id}`, 200, { accept_host_key_change: true });
  assert.equal(d.accept_host_key_change, true);
  const accepted = await app.backupAndRead(dev.id);
  assert.equal(accepted.line.result, 'ok', accepted.line.message ?? '');
  assert.equal(accepted.text, await expectedFrr('r2'));
  d = await app.device(dev.id);
  assert.equal(d.host_key, newKey, 'the new key is recorded');
  assert.equal(d.accept_host_key_change, false, 'acceptance covers one change only');
});

test(
  'done when: r1 added through the API, backed up by `backup run --device` and by the schedule of `serve`, read back byte for byte',
  { skip, timeout: 60_000 },
  async () => {
    // Its own appliance: the schedule backs up every enabled device, and only this one should be there.
    const own = await LabAppliance.start(
      ['[server]', 'listen = "127.0.0.1:0"', '', '[backup]', 'schedule = "*/2 * * * * *"', 'jitter = 0', 'retries = 0', ''].join('\n'),
    );
    try {
      const db = own.t.services.db;
      const credential = await own.createCredential({ name: 'lab r1', username: r1.username, password: r1.password });
      const frr = await own.call<{ items: { id: number; name: string; builtin: boolean; strip_patterns: string[] }[] }>('GET', '/templates?q=frr', 200);
      const template = frr.items.find((i) => i.name === 'frr');
      assert.ok(template?.builtin, 'the built-in frr template is listed');
      const dev = await own.createDevice({ name: 'r1', port: r1.ssh_port, credential_id: credential, template_id: template.id });

      const cli = await own.backupNow(dev.id);
      assert.equal(cli.result, 'ok', cli.message ?? '');
      const [cliRecord] = await own.history(dev.id, 1);

      const served = await spawnServe(['--config', own.configFile, '--data-dir', own.dataDir], { CONFVAULT_LOG_LEVEL: 'info' });
      let scheduled: { id: string; changed: number } | undefined;
      try {
        const byTrigger = db.prepare(
          "SELECT id, changed FROM backups WHERE device_id = ? AND trigger = 'schedule' AND finished_at IS NOT NULL ORDER BY started_at LIMIT 1",
        );
        for (const deadline = Date.now() + 20_000; !scheduled && Date.now() < deadline; await sleep(100)) {
          scheduled = byTrigger.get(dev.id) as typeof scheduled;
        }
      } finally {
        assert.equal(await served.stop(), 0, 'serve stops cleanly');
      }
      assert.ok(scheduled, `a scheduled backup of the device within 20 s; serve said:\n${served.output().stdout.slice(-3000)}${served.output().stderr}`);
      assert.equal(scheduled.changed, 0, 'the schedule found the same configuration as the CLI');
      // the public record has no trigger: the database is the only place that tells the two apart
      assert.equal(db.prepare('SELECT trigger FROM backups WHERE id = ?').pluck().get(cliRecord.id), 'cli');

      const expected = withBgpTokens(expectedStoredText(await showRunningConfig('r1'), template.strip_patterns), own.redactionKey);
      const history = await own.history(dev.id, 200);
      for (const id of [cliRecord.id, scheduled.id]) {
        const record = history.find((r) => r.id === id);
        assert.ok(record?.success, `backup ${id} is in the device's history and succeeded`);
        assert.equal(record.config_snapshot_hash, sha256(expected));
        const text = await own.content(id);
        assertCleanFrrConfig(text, r1.hostname);
        assert.equal(text, expected, `backup ${id}: what showRunningConfig('r1') shows minus the stripped lines`);
      }
    } finally {
      await own.close();
    }
  },
);

test(
  'detection on the real lab devices: template auto picks frr on r1, bird on bird1 and linux on srv1; credential auto finds the login',
  { skip },
  async () => {
    const birdops = await app.createCredential({ name: 'detect-birdops', username: bird1.username, password: bird1.password });
    const linuxops = await app.createCredential({ name: 'detect-linuxops', username: srv1.username, password: srv1.password });
    const cases = [
      { name: 'detect-r1', port: r1.ssh_port, credential_id: netops, expected: 'frr' },
      { name: 'detect-bird1', port: bird1.ssh_port, credential_id: birdops, expected: 'bird' },
      { name: 'detect-srv1', port: srv1.ssh_port, credential_id: linuxops, expected: 'linux' },
    ];
    for (const c of cases) {
      const dev = await app.call<DeviceDto & { template_id: number }>('POST', '/devices', 201, {
        hostname: '127.0.0.1',
        name: c.name,
        port: c.port,
        credential_id: c.credential_id,
        template_id: 'auto',
      });
      assert.equal(dev.template_id, await app.templateId(c.expected), `${c.name}: detected as ${c.expected}`);
    }
    // The credential left to detection: the credentials the key may use, in order, until one logs in (netops, created first).
    const byLogin = await app.call<DeviceDto & { credential_id: number }>('POST', '/devices', 201, {
      hostname: '127.0.0.1',
      name: 'detect-r1-login',
      port: r1.ssh_port,
      credential_id: 'auto',
      template_id: frrTemplate,
    });
    assert.equal(byLogin.credential_id, netops);
  },
);
