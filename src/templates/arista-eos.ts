// Built-in template: Arista EOS switches, running configuration over an interactive shell.
import type { TemplateSpec } from './types';

export const aristaEos: TemplateSpec = {
  name: 'arista-eos',
  vendor: 'Arista EOS',
  description:
    'Arista EOS switches. Turns paging off and widens the terminal for the session (terminal length 0, ' +
    'terminal width 32767) and stores "show running-config". Enters enable mode when the credential carries an ' +
    'enable secret. The "! Command:", "! device:" and "! Time:" header lines are dropped (the device line ' +
    'carries the EOS release; track releases with a custom template adding "show version" if you need them).',
  mode: 'shell',
  // leaf1>, leaf1#, leaf1(config)#, leaf1(config-if-Et1/1)#, leaf1(s1)(config-s-s1)#
  prompt: '(?:^|[\\r\\n])[\\w.\\-@/:]+(?:\\([^()\\r\\n]*\\)){0,2}[#>] ?$',
  pre_commands: ['terminal length 0', 'terminal width 32767'],
  commands: ['show running-config'],
  enable: { command: 'enable', password_prompt: '[Pp]assword: ?$', prompt: '(?:^|[\\r\\n])[\\w.\\-@/:]+(?:\\([^()\\r\\n]*\\)){0,2}# ?$' },
  strip_patterns: ['^! Command: ', '^! device: ', '^! Time: ', '^! Startup-config last modified at ', '^show running-config\\s*$'],
  ignore_patterns: [],
  redact_patterns: [
    // username admin privilege 15 role network-admin secret sha512 $6$...
    { pattern: '^(username \\S+ .*?(?:secret|password)(?: sha512| [0-7])?) \\S+', replacement: '$1 <redacted>' },
    { pattern: '^(enable (?:secret|password)(?: sha512| [0-7])?) \\S+', replacement: '$1 <redacted>' },
    { pattern: '^(aaa root secret(?: sha512| [0-7])?) \\S+', replacement: '$1 <redacted>' },
    { pattern: '^(snmp-server community) \\S+', replacement: '$1 <redacted>' },
    // tacacs-server host 10.0.0.6 key 7 ..., radius-server key 7 ...
    { pattern: '^((?:tacacs|radius)-server (?:host \\S+ (?:vrf \\S+ )?)?key(?: [0-7])?) \\S+', replacement: '$1 <redacted>' },
    // router bgp: "   neighbor SPINES password 7 ..."
    { pattern: '^(\\s*neighbor \\S+ password(?: [0-7])?) \\S+', replacement: '$1 <redacted>' },
    { pattern: '^(\\s*ip ospf (?:authentication-key|message-digest-key \\d+ md5)(?: [0-7])?) \\S+', replacement: '$1 <redacted>' },
    { pattern: '^(\\s*key \\d+ secret(?: [0-7])?) \\S+', replacement: '$1 <redacted>' },
  ],
  // Change events: "%SYS-5-CONFIG_I: Configured from console by admin on vty3 (192.0.2.1)" (Arista EOS System
  // Message Guide, SYS-5-CONFIG_I: "Configured from [source] by [user] on [line] ([address])").
  change_events: ['%SYS-5-CONFIG_I: Configured from \\S+ by (?<user>[^\\s(]+)'],
  redact: false,
  exit_command: 'exit',
};
