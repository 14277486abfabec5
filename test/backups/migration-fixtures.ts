// Oxidized and RANCID repositories as those tools write them, built with git for the migration tests.
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { git } from '../helpers/git';

/** One commit per entry: each writes its files (path relative to the repository → text) at its own time. */
export function commitHistory(repo: string, commits: { date: string; files: Record<string, string> }[]): void {
  mkdirSync(repo, { recursive: true });
  git(repo, ['init', '-q', '-b', 'master']);
  for (const c of commits) {
    for (const [file, text] of Object.entries(c.files)) {
      mkdirSync(path.dirname(path.join(repo, file)), { recursive: true });
      writeFileSync(path.join(repo, file), text);
    }
    git(repo, ['add', '-A'], c.date);
    git(repo, ['commit', '-q', '-m', `update ${Object.keys(c.files).join(' ')}`], c.date);
  }
}

/**
 * What Oxidized's `ios` model stores: `show version` and `show inventory` as `! ` comments (its `comment '! '`), then
 * `show running-config` without its first three lines (Building configuration, blank, byte count) and without
 * `ntp clock-period`; the change stamps stay.
 */
export function oxidizedIos(running: string, hostname: string): string {
  const header = [
    `! Cisco IOS XE Software, Version 17.09.04a`,
    `! Image: Software: CAT9K_IOSXE, 17.9.4a`,
    `! Image: Compiled: Fri 20-Oct-23 10:44 by mcpre`,
    `! Chassis type: C9300-48P`,
    `! Memory: main 1333273K`,
    `! Processor ID: FOC2345X0AB`,
    `! CPU: X86`,
    `! Image: flash:packages.conf`,
    `! `,
    `! NAME: "c93xx Stack", DESCR: "c93xx Stack"`,
    `! PID: C9300-48P         , VID: V02  , SN: FOC2345X0AB`,
    `! `,
  ];
  const lines = running
    .replace(/\n$/, '')
    .split('\n')
    .slice(3)
    .filter((l) => !/^ntp clock-period /.test(l));
  return [...header, ...lines].join('\n').replaceAll('core-sw1', hostname) + '\n';
}

/**
 * What RANCID's `ios.pm` stores with FILTER_PWDS=ALL and NOCOMMSTR=YES: the content-type line and its `!Key: value`
 * header, the running configuration without the build lines, change stamps and `ntp clock-period`, runs of `!`
 * collapsed, secrets commented out as `<removed>`, and the username lines sorted.
 */
export function rancidIos(running: string, hostname: string): string {
  const header = [
    '!RANCID-CONTENT-TYPE: cisco',
    '!',
    '!Chassis type: C9300-48P - a C9300 switch',
    '!CPU: X86',
    '!',
    '!Memory: main 1333273K/3145719K',
    '!Memory: nvram 2048K',
    '!',
    '!Processor ID: FOC2345X0AB',
    '!',
    '!Image: Software: CAT9K_IOSXE, 17.9.4a, RELEASE SOFTWARE (fc3)',
    '!Image: Compiled: Fri 20-Oct-23 10:44 by mcpre',
    '!Image: flash:packages.conf',
    '!',
    '!Config register: 0x102',
    '!',
    '!NAME: "c93xx Stack", DESCR: "c93xx Stack"',
    '!PID: C9300-48P         , VID: V02  , SN: FOC2345X0AB',
    '!',
  ];
  const out: string[] = [];
  const users: string[] = [];
  const flushUsers = () => out.push(...users.sort().splice(0));
  for (const line of running.replace(/\n$/, '').split('\n')) {
    if (/^(Building|Current) configuration|^! (Last configuration change|NVRAM config last updated)|^ntp clock-period /.test(line)) continue;
    let m: RegExpExecArray | null;
    let kept: string = line;
    if ((m = /^username (\S+)(\s.*)? (secret|password) /.exec(line))) {
      users.push(`!username ${m[1]}${m[2] ?? ''} ${m[3]} <removed>`);
      continue;
    }
    flushUsers();
    if ((m = /^(enable )?(password|passwd)( level \d+)? /.exec(line))) kept = `!${m[1] ?? ''}${m[2]}${m[3] ?? ''} <removed>`;
    else if (/^enable secret /.test(line)) kept = '!enable secret <removed>';
    else if ((m = /^(\s*)password /.exec(line))) kept = `!${m[1]}password <removed>`;
    else if ((m = /^\s*neighbor (\S*) password /.exec(line))) kept = `! neighbor ${m[1]} password <removed>`;
    else if ((m = /^snmp-server community (\S+)(.*)$/.exec(line))) kept = `!snmp-server community <removed>${m[2]}`;
    else if ((m = /^((tacacs|radius)-server\s(?:\S+\s)*?key) (\d )?\S+(.*)$/.exec(line))) kept = `!${m[1]} <removed>${m[4]}`;
    if (kept === '!' && out[out.length - 1] === '!') continue;
    out.push(kept);
  }
  flushUsers();
  return [...header, ...out].join('\n').replaceAll('core-sw1', hostname) + '\n';
}
