// Deterministic configuration texts for the seeded database: real vendor transcripts made per-device and per-version, and the 200 KB config.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { REPO_ROOT } from './common';

/** The 14 built-in templates, with how often each appears in the seeded fleet (campus-heavy, like most estates). */
export const FLEET_MIX: ReadonlyArray<readonly [template: string, weight: number]> = [
  ['cisco-ios', 30],
  ['cisco-nxos', 8],
  ['cisco-asa', 4],
  ['arista-eos', 8],
  ['juniper-junos', 8],
  ['mikrotik-routeros', 4],
  ['huawei-vrp', 6],
  ['hpe-comware', 6],
  ['aruba-procurve', 10],
  ['fortinet-fortios', 5],
  ['paloalto-panos', 3],
  ['frr', 3],
  ['bird', 2],
  ['linux', 3],
];

/** Small fast PRNG (mulberry32): the same seed gives the same database on every machine. */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

interface Base {
  hostname: string;
  lines: string[];
}

const bases = new Map<string, Base>();

/** The recorded configuration of a vendor (what the engine stores for the transcript), split in lines. */
function baseFor(template: string): Base {
  let b = bases.get(template);
  if (!b) {
    const dir = path.join(REPO_ROOT, 'test/sim/transcripts');
    const transcript = JSON.parse(readFileSync(path.join(dir, `${template}.json`), 'utf8')) as { hostname: string };
    const text = readFileSync(path.join(dir, `${template}.expected.txt`), 'utf8');
    b = { hostname: transcript.hostname, lines: text.replace(/\n$/, '').split('\n') };
    bases.set(template, b);
  }
  return b;
}

/**
 * The text device `name` held at `version` (0 = its first backup). Per device: its hostname everywhere and
 * a few port descriptions; per version: the lines a change added, so consecutive versions differ a little.
 */
export function deviceConfig(name: string, template: string, deviceIndex: number, version: number): string {
  const base = baseFor(template);
  const lines = base.lines.map((l) => l.replaceAll(base.hostname, name));
  const extra: string[] = [];
  for (let k = 0; k < deviceIndex % 40; k++) extra.push(`! port ${k + 1}: ${name}-peer${k + 1} (patch ${(deviceIndex * 7 + k) % 48})`);
  for (let v = 1; v <= version; v++) {
    extra.push(`! change ${v}: CHG${String(100000 + ((deviceIndex * 31 + v * 977) % 900000))} ntp/syslog/acl update by netops`);
  }
  const at = Math.min(lines.length, 3);
  lines.splice(at, 0, ...extra);
  return lines.join('\n') + '\n';
}

/** A chassis-sized Cisco configuration of about 200 KB; each version changes a handful of ports. */
export function bigConfig(name: string, version: number, targetBytes = 200 * 1024): string {
  const base = baseFor('cisco-ios');
  const head = base.lines.map((l) => l.replaceAll(base.hostname, name));
  const rnd = prng(0xb16c0f);
  const blocks: string[] = [];
  let size = head.join('\n').length;
  for (let slot = 1; size < targetBytes; slot++) {
    for (let port = 1; port <= 48 && size < targetBytes; port++) {
      const k = slot * 100 + port;
      const vlan = 100 + Math.floor(rnd() * 400);
      const touched = version > 0 && (k * 2654435761) % 97 < version % 97 ? ` rev${version}` : '';
      const block =
        `interface GigabitEthernet${slot}/0/${port}\n` +
        ` description access ${name} slot${slot} port${port} room ${Math.floor(rnd() * 900) + 100}${touched}\n` +
        ` switchport access vlan ${vlan}\n switchport mode access\n switchport port-security maximum 3\n` +
        ` spanning-tree portfast\n ip dhcp snooping limit rate 20\n!`;
      blocks.push(block);
      size += block.length + 1;
    }
  }
  return [...head.slice(0, 3), ...blocks, ...head.slice(3)].join('\n') + '\n';
}
