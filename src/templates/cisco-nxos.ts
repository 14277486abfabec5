// Built-in template: Cisco NX-OS (Nexus), running configuration over an interactive shell.
import type { TemplateSpec } from './types';

export const ciscoNxos: TemplateSpec = {
  name: 'cisco-nxos',
  vendor: 'Cisco NX-OS',
  description:
    'Cisco Nexus switches running NX-OS. Turns paging off and widens the terminal to its maximum (511) for the ' +
    'session, then stores "show running-config". NX-OS users log in with their role, so there is no enable step. ' +
    'The "!Time:" and "!Running configuration last done at:" header lines change on every run and are dropped.',
  mode: 'shell',
  prompt: '(?:^|[\\r\\n])[\\w.\\-@/:]+(?:\\([^()\\r\\n]*\\)){0,2}[#>] ?$',
  pre_commands: ['terminal length 0', 'terminal width 511'],
  commands: ['show running-config'],
  enable: null,
  strip_patterns: ['^!Time: ', '^!Running configuration last done at: ', '^!NVRAM config last updated at ', '^show running-config\\s*$'],
  ignore_patterns: [],
  redact_patterns: [
    // username admin password 5 $5$...  role network-admin
    { pattern: '^(username \\S+ password(?: [0-9])?) \\S+', replacement: '$1 <redacted>' },
    // snmp-server user admin network-admin auth md5 0x... priv [aes-128] 0x... localizedkey
    {
      pattern: '^(snmp-server user \\S+(?: \\S+)? auth \\S+) \\S+( priv(?: aes-128)?) \\S+',
      replacement: '$1 <redacted>$2 <redacted>',
    },
    { pattern: '^(snmp-server user \\S+(?: \\S+)? auth \\S+) \\S+', replacement: '$1 <redacted>' },
    { pattern: '^(snmp-server community) \\S+', replacement: '$1 <redacted>' },
    { pattern: '^(snmp-server host \\S+ (?:traps|informs) version (?:1|2c) )\\S+', replacement: '$1<redacted>' },
    // tacacs-server key 7 "...", tacacs-server host 10.0.0.6 key 7 "...", radius-server host ... key 7 "..." ...
    { pattern: '^((?:tacacs|radius)-server (?:host \\S+ )?key(?: [0-7])?) (?:"[^"]*"|\\S+)', replacement: '$1 <redacted>' },
    // router bgp: "    password 3 a667d47acc18ea6b"
    { pattern: '^(\\s+password(?: [0-7])?) \\S+', replacement: '$1 <redacted>' },
    { pattern: '^(\\s*ip ospf (?:authentication-key|message-digest-key \\d+ md5)(?: [0-7])?) \\S+', replacement: '$1 <redacted>' },
    { pattern: '^(\\s*key-string(?: [0-7])?) \\S+', replacement: '$1 <redacted>' },
  ],
  // Change events: "%VSHD-5-VSHD_SYSLOG_CONFIG_I: Configured from vty by admin on 192.0.2.1@pts/0" (Cisco Nexus
  // NX-OS System Messages Reference, VSHD messages: "Configured from vty by [chars] on [chars]").
  change_events: ['%VSHD-5-VSHD_SYSLOG_CONFIG_I: Configured from \\S+ by (?<user>\\S+)'],
  redact: false,
  exit_command: 'exit',
};
