// Platform detection against the simulator: every built-in's recorded session is detected as its own template (or reported as a twin).
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { probeDevice } from '../../src/engine/detect-probe';
import { builtinTemplates, getBuiltinTemplate, validateTemplate } from '../../src/templates/index';
import { DETECT_WEIGHTS, probeCommands, scoreTemplates, type DetectVerdict } from '../../src/templates/detect';
import { generateHostKey, loadTranscript, startSimulator, type RunningSimulator, type Transcript } from '../sim/simulator';

const TRANSCRIPTS = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'sim', 'transcripts');
// A probe stuck at a pager no pattern knows (PAN-OS) waits out the command time-out: short here.
const LIMITS = { connect_timeout_ms: 5_000, login_timeout_ms: 8_000, command_timeout_ms: 2_000, overall_timeout_ms: 60_000 };

/**
 * What detection makes of each transcript when it is not its own template: twins no evidence tells apart, and
 * platforms with nothing citable to recognise them by (their template says so).
 */
const NOT_PICKED: Record<string, { twins: string[] } | 'nothing'> = {
  'huawei-ce': { twins: ['huawei-ce', 'huawei-vrp'] },
  'huawei-vrp': { twins: ['huawei-ce', 'huawei-vrp'] },
  // ArubaOS controllers and Instant APs print the same show version line; no transcript records it.
  'aruba-os': 'nothing',
  'aruba-instant': 'nothing',
  'adtran-aos': 'nothing',
  'dell-os6': 'nothing',
  netgear: 'nothing',
  'tplink-jetstream': 'nothing',
};

const templates = builtinTemplates();
const names = readdirSync(TRANSCRIPTS)
  .filter((f) => f.endsWith('.json'))
  .map((f) => f.slice(0, -5))
  .sort();
const transcripts = new Map<string, Transcript>(names.map((n) => [n, loadTranscript(path.join(TRANSCRIPTS, `${n}.json`))]));

describe('platform detection on every built-in transcript', () => {
  let sim: RunningSimulator;
  const verdicts = new Map<string, DetectVerdict>();

  before(async () => {
    // One simulator, each device chosen by its login name.
    sim = await startSimulator({
      devices: names.map((n) => ({ name: n, transcript: transcripts.get(n)!, username: n })),
      host_key: generateHostKey(),
    });
    const probes = probeCommands(templates);
    // Four sessions at a time: most of a session is waiting for the device.
    const queue = [...names];
    const work = async () => {
      for (let n = queue.shift(); n !== undefined; n = queue.shift()) {
        const t = transcripts.get(n)!;
        const r = await probeDevice({ host: '127.0.0.1', port: sim.port, protocol: 'ssh', username: n, password: t.password }, probes, LIMITS);
        if (!r.ok) assert.fail(`${n}: ${r.failure} ${r.message}`);
        verdicts.set(n, scoreTemplates(templates, r));
      }
    };
    await Promise.all([work(), work(), work(), work()]);
  });
  after(() => sim?.close());

  test('there is one transcript per built-in template', () => {
    assert.deepEqual(names, templates.map((t) => t.name).sort());
  });

  for (const name of names) {
    test(name, () => {
      const v = verdicts.get(name)!;
      const expected = NOT_PICKED[name];
      if (expected === undefined) {
        assert.equal(v.template, name, `${name} detected as ${v.template}: ${v.reason}; candidates ${JSON.stringify(v.candidates.slice(0, 3))}`);
        assert.ok(v.reason.startsWith(`${name}: `), v.reason);
        assert.ok(v.candidates[0].evidence.length > 0);
      } else if (expected === 'nothing') {
        assert.equal(v.template, null, `${name}: ${v.reason}`);
        assert.match(v.reason, /^could not tell/);
      } else {
        assert.equal(v.template, null, `${name}: ${v.reason}`);
        assert.equal(v.reason, `could not tell: top candidates ${expected.twins.join(', ')} match equally well`);
      }
    });
  }

  test('a probe match is the evidence where the transcript records the probe', () => {
    const v = verdicts.get('cisco-ios')!;
    const probe = v.candidates[0].evidence.find((e) => e.source === 'probe');
    assert.deepEqual(probe && { command: probe.command, line: probe.line.slice(0, 18) }, { command: 'show version', line: 'Cisco IOS Software' });
    assert.equal(v.candidates[0].score, DETECT_WEIGHTS.probe);
  });

  test('a specific Linux-based platform beats linux, which matches its prompt too', () => {
    for (const n of ['vyos', 'nvidia-cumulus', 'openwrt', 'sonic', 'bird-host', 'ubiquiti-edgeos']) {
      const v = verdicts.get(n)!;
      assert.ok(
        v.candidates.some((c) => c.template === 'linux'),
        `${n}: linux is a candidate`,
      );
      assert.equal(v.template, n);
    }
  });
});

describe('scoring', () => {
  const obs = (o: Partial<{ banner: string; prompt: string; probes: Record<string, string | null> }>) => ({ banner: '', prompt: '', probes: {}, ...o });

  test('nothing recognised: a clear "could not tell", never a pick', () => {
    const v = scoreTemplates(templates, obs({ banner: 'hello', prompt: 'box#', probes: { 'show version': '% Invalid input' } }));
    assert.equal(v.template, null);
    assert.equal(v.reason, 'could not tell: no template recognised the banner, the prompt or the probe output');
  });

  test("a custom template's detect patterns are checked like its others: RE2 only, never one matching every line", () => {
    const ios = getBuiltinTemplate('cisco-ios')!;
    const spec = { ...ios, name: 'ios-custom', detect: { banner: ['(?=lookahead)'], probe: { command: 'show version', patterns: ['.*'] } } };
    const fields = validateTemplate(spec).map((e) => e.field);
    assert.ok(fields.includes('detect.banner.0'), JSON.stringify(fields));
    assert.ok(fields.includes('detect.probe.patterns.0'), JSON.stringify(fields));
  });

  test('each probe command is run once, the most shared first', () => {
    const probes = probeCommands(templates);
    assert.equal(new Set(probes).size, probes.length);
    assert.equal(probes[0], 'show version');
  });
});
