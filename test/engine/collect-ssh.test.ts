// Successful SSH captures against the simulator: shell and exec, pagers, enable, login methods, host keys, algorithms.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { collectConfig } from '../../src/engine/collect';
import type { CollectResult, CollectSuccess } from '../../src/engine/types';
import { startSimulator, type RunningSimulator, type SimDevice } from '../sim/simulator';
import { ed25519KeyPair } from '../helpers/keys';
import { BIRD_TEMPLATE, FAST_LIMITS, IOS_EXEC_TEMPLATE, IOS_TEMPLATE, fixtureTranscript, iosDevice, target } from '../sim/fixtures/engine-fixtures';

function success(r: CollectResult): CollectSuccess {
  if (!r.ok) assert.fail(`expected success, got ${r.failure}: ${r.message}`);
  return r;
}

/** Any 32 bytes stand for the appliance's redaction key here. */
const KEY = Buffer.alloc(32, 1);
const EXPECTED_TEXT_START = '!\n! NVRAM config last updated at 10:00:05 UTC Mon Nov 20 2023 by admin\n!\nversion 15.2\n';

describe('SSH shell and exec capture', () => {
  let sim: RunningSimulator;
  let referenceText = '';
  before(async () => {
    sim = await startSimulator({ devices: [iosDevice(), { name: 'bird1', transcript: fixtureTranscript('bird-like') }] });
  });
  after(() => sim.close());

  it('captures in shell mode with enable, strip and redaction', async () => {
    const r = success(await collectConfig(target(sim.port, { username: 'core-sw1' }), IOS_TEMPLATE, FAST_LIMITS, { redact_key: KEY }));
    assert.ok(r.text.startsWith(EXPECTED_TEXT_START), r.text.slice(0, 200));
    assert.ok(r.text.endsWith('!\nend\n'));
    assert.ok(!r.text.includes('\r'));
    assert.match(r.text, /^enable secret 5 <redacted>$/m);
    assert.match(r.text, /^snmp-server community <redacted> RO$/m);
    assert.ok(!r.text.includes('s3cretCommunity'));
    assert.ok(!r.text.includes('Building configuration'));
    assert.ok(!r.text.includes('core-sw1#'), 'no prompt line in the text');
    assert.ok(!r.text.includes('show running-config'), 'no command echo in the text');
    assert.ok(r.raw.startsWith('Building configuration...\n'));
    assert.ok(r.raw.includes('s3cretCommunity'), 'raw is before redaction');
    assert.equal(r.host_key, sim.hostKeyFingerprint);
    referenceText = r.text;
  });

  it('captures the same text in exec mode', async () => {
    const r = success(await collectConfig(target(sim.port, { username: 'core-sw1' }), IOS_EXEC_TEMPLATE, FAST_LIMITS, { redact_key: KEY }));
    assert.equal(r.text, referenceText);
  });

  it('stores secrets when the appliance does not redact (no key), or the template turns redaction off', async () => {
    const off = success(await collectConfig(target(sim.port, { username: 'core-sw1' }), IOS_TEMPLATE, FAST_LIMITS));
    assert.match(off.text, /s3cretCommunity/);
    const r = success(await collectConfig(target(sim.port, { username: 'core-sw1' }), { ...IOS_TEMPLATE, redact: false }, FAST_LIMITS, { redact_key: KEY }));
    assert.match(r.text, /s3cretCommunity/);
  });

  it('detects a prompt drawn with bracketed-paste codes and cleans NUL, CR and ANSI output', async () => {
    const r = success(await collectConfig(target(sim.port, { username: 'bird1', password: 'birdops123' }), BIRD_TEMPLATE, FAST_LIMITS));
    assert.equal(
      r.text,
      'Name       Proto      Table      State  Since         Info\n' +
        'device1    Device     ---        up     2023-11-20\n' +
        'bgp_r1     BGP        ---        up     2023-11-20    Established\n' +
        'static1    Static     master4    up     2023-11-20\n' +
        'router id 10.200.0.13;\n',
    );
  });

  it('is not fooled by a log message and reprinted prompt arriving before the echo', async () => {
    const noisy = await startSimulator({ devices: [iosDevice({ unsolicited: '%LINK-3-UPDOWN: Interface GigabitEthernet0/2, changed state to up' })] });
    try {
      const r = success(await collectConfig(target(noisy.port), IOS_TEMPLATE, FAST_LIMITS, { redact_key: KEY }));
      assert.equal(r.text, referenceText);
    } finally {
      await noisy.close();
    }
  });

  it('runs several capture commands and concatenates their output', async () => {
    const tpl = { ...IOS_TEMPLATE, commands: ['show version', 'show running-config'] };
    const r = success(await collectConfig(target(sim.port, { username: 'core-sw1' }), tpl, FAST_LIMITS));
    assert.ok(r.text.startsWith('Cisco IOS Software, C2960 Software'));
    assert.ok(r.text.includes('core-sw1 uptime is 1 year, 2 weeks, 3 days\n\n!\n! NVRAM'));
  });
});

describe('pagers answered when paging cannot be turned off', () => {
  const styles: { more: string; erase: 'backspace' | 'cr' | 'ansi' }[] = [
    { more: ' --More-- ', erase: 'backspace' },
    { more: '---- More ----', erase: 'ansi' },
    { more: '-- More --', erase: 'cr' },
    { more: 'Press any key to continue', erase: 'cr' },
  ];
  let sim: RunningSimulator;
  let reference = '';
  before(async () => {
    const devices: SimDevice[] = styles.map((s, i) => {
      const t = fixtureTranscript('ios-like');
      return {
        name: `pager${i}`,
        transcript: { ...t, paging: { page_lines: 7, more_prompt: s.more, disable_commands: ['terminal length 0'], erase: s.erase } },
        failure: 'paging_stuck',
      };
    });
    devices.push(iosDevice());
    sim = await startSimulator({ devices });
    reference = success(await collectConfig(target(sim.port, { username: 'core-sw1' }), IOS_TEMPLATE, FAST_LIMITS)).text;
  });
  after(() => sim.close());

  styles.forEach((s, i) => {
    it(`answers ${JSON.stringify(s.more)} (${s.erase} erase)`, async () => {
      const r = success(await collectConfig(target(sim.port, { username: `pager${i}` }), IOS_TEMPLATE, FAST_LIMITS));
      assert.equal(r.text, reference);
    });
  });
});

describe('login methods', () => {
  let sim: RunningSimulator;
  const keyPlain = ed25519KeyPair();
  const keyLocked = ed25519KeyPair({ passphrase: 'key-pass-phrase' });
  before(async () => {
    sim = await startSimulator({
      devices: [
        iosDevice({ name: 'kbd', auth_methods: ['keyboard-interactive'] }),
        iosDevice({ name: 'key', auth_methods: ['publickey'], authorized_key: keyPlain.public }),
        iosDevice({ name: 'locked', auth_methods: ['publickey'], authorized_key: keyLocked.public }),
      ],
    });
  });
  after(() => sim.close());

  it('answers keyboard-interactive password prompts', async () => {
    success(await collectConfig(target(sim.port, { username: 'kbd' }), IOS_TEMPLATE, FAST_LIMITS));
  });

  it('logs in with a private key', async () => {
    success(await collectConfig(target(sim.port, { username: 'key', password: null, private_key: keyPlain.private }), IOS_TEMPLATE, FAST_LIMITS));
  });

  it('logs in with a passphrase-protected private key', async () => {
    const t = target(sim.port, { username: 'locked', password: null, private_key: keyLocked.private, passphrase: 'key-pass-phrase' });
    success(await collectConfig(t, IOS_TEMPLATE, FAST_LIMITS));
  });

  it('reports a wrong passphrase as AUTH_FAILED without the passphrase', async () => {
    const t = target(sim.port, { username: 'locked', password: null, private_key: keyLocked.private, passphrase: 'not-the-phrase' });
    const r = await collectConfig(t, IOS_TEMPLATE, FAST_LIMITS);
    assert.equal(r.ok, false);
    if (r.ok) return;
    assert.equal(r.failure, 'AUTH_FAILED');
    assert.match(r.message, /passphrase/);
    assert.ok(!r.message.includes('not-the-phrase'));
  });

  it('reports a key the device does not know as AUTH_FAILED (publickey)', async () => {
    const r = await collectConfig(
      target(sim.port, { username: 'key', password: null, private_key: keyLocked.private, passphrase: 'key-pass-phrase' }),
      IOS_TEMPLATE,
      FAST_LIMITS,
    );
    assert.equal(r.ok, false);
    if (r.ok) return;
    assert.equal(r.failure, 'AUTH_FAILED');
    assert.equal(r.message, 'Authentication failed for user key (publickey).');
    assert.equal(r.reachable, true);
  });
});

describe('host keys', () => {
  let sim: RunningSimulator;
  before(async () => {
    sim = await startSimulator({ devices: [iosDevice()] });
  });
  after(() => sim.close());

  it('accepts the recorded key', async () => {
    const r = success(await collectConfig(target(sim.port, { known_host_key: sim.hostKeyFingerprint }), IOS_TEMPLATE, FAST_LIMITS));
    assert.equal(r.host_key, sim.hostKeyFingerprint);
  });

  it('fails with HOST_KEY_CHANGED and reports the key seen', async () => {
    const old = 'SHA256:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA';
    const r = await collectConfig(target(sim.port, { known_host_key: old }), IOS_TEMPLATE, FAST_LIMITS);
    assert.equal(r.ok, false);
    if (r.ok) return;
    assert.equal(r.failure, 'HOST_KEY_CHANGED');
    assert.equal(r.host_key, sim.hostKeyFingerprint);
    assert.ok(r.message.includes(old) && r.message.includes(sim.hostKeyFingerprint));
    assert.equal(r.reachable, true);
  });

  it('accepts a changed key only when it is the approved fingerprint, and reports the new one', async () => {
    const known = 'SHA256:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA';
    const t = target(sim.port, { known_host_key: known, accepted_host_key: sim.hostKeyFingerprint });
    const r = success(await collectConfig(t, IOS_TEMPLATE, FAST_LIMITS));
    assert.equal(r.host_key, sim.hostKeyFingerprint);
    const other = await collectConfig(
      target(sim.port, { known_host_key: known, accepted_host_key: 'SHA256:BBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBB' }),
      IOS_TEMPLATE,
      FAST_LIMITS,
    );
    assert.equal(other.ok, false);
    assert.equal(!other.ok && other.failure, 'HOST_KEY_CHANGED', 'an approval of another key accepts nothing else');
  });

  it('sees a new key after the device is re-keyed on the same port', async () => {
    const port = sim.port;
    const before = sim.hostKeyFingerprint;
    await sim.close();
    sim = await startSimulator({ devices: [iosDevice()], port });
    const r = await collectConfig(target(port, { known_host_key: before }), IOS_TEMPLATE, FAST_LIMITS);
    assert.equal(r.ok ? 'ok' : r.failure, 'HOST_KEY_CHANGED');
    assert.notEqual(sim.hostKeyFingerprint, before);
  });
});

describe('SSH algorithms', () => {
  it('falls back to legacy algorithms for an old switch', async () => {
    const sim = await startSimulator({ devices: [iosDevice()], algorithms: 'legacy-only' });
    try {
      const r = success(await collectConfig(target(sim.port), IOS_TEMPLATE, FAST_LIMITS));
      assert.equal(r.host_key, sim.hostKeyFingerprint);
    } finally {
      await sim.close();
    }
  });

  it('fails with ALGORITHM_MISMATCH when even legacy algorithms do not match', async () => {
    const sim = await startSimulator({ devices: [iosDevice()], algorithms: { cipher: ['aes128-ctr'], hmac: ['hmac-md5'] } });
    try {
      const r = await collectConfig(target(sim.port), IOS_TEMPLATE, FAST_LIMITS);
      assert.equal(r.ok, false);
      if (r.ok) return;
      assert.equal(r.failure, 'ALGORITHM_MISMATCH');
      assert.match(r.message, /MAC/);
      assert.equal(r.reachable, true);
    } finally {
      await sim.close();
    }
  });
});
