// Built-in template: Cisco IOS and IOS-XE, running configuration over an interactive shell.
import type { TemplateSpec } from './types';

export const ciscoIos: TemplateSpec = {
  name: 'cisco-ios',
  vendor: 'Cisco IOS / IOS-XE',
  description:
    'Cisco IOS and IOS-XE routers and switches. Turns paging and line wrapping off for the session only ' +
    '(terminal length 0, terminal width 0) and stores "show running-config". Enters enable mode when the ' +
    'credential carries an enable secret; a user with privilege 15 needs none. The header lines that change on ' +
    'every run (Building configuration, byte count, last change / NVRAM timestamps) and the drifting ' +
    '"ntp clock-period" are dropped.',
  mode: 'shell',
  // hostname, optional config-mode suffix such as (config-if), then # or > at the very end of the buffer
  prompt: '(?:^|[\\r\\n])[\\w.\\-@/:]+(?:\\([^()\\r\\n]*\\)){0,2}[#>] ?$',
  pre_commands: ['terminal length 0', 'terminal width 0'],
  commands: ['show running-config'],
  enable: { command: 'enable', password_prompt: '[Pp]assword: ?$', prompt: '(?:^|[\\r\\n])[\\w.\\-@/:]+(?:\\([^()\\r\\n]*\\)){0,2}# ?$' },
  strip_patterns: [
    '^Building configuration\\.\\.\\.\\s*$',
    '^Current configuration ?: \\d+ bytes\\s*$',
    '^! Last configuration change at ',
    '^! NVRAM config last updated at ',
    '^! No configuration change since last restart',
    '^ntp clock-period \\d+',
    '^show running-config\\s*$',
  ],
  ignore_patterns: [],
  redact_patterns: [
    // enable secret 9 $9$..., enable password 7 0822455D0A16
    { pattern: '^(enable (?:secret|password)(?: level \\d+)?(?: [0-9])?) \\S+', replacement: '$1 <redacted>' },
    // username admin privilege 15 secret 9 $9$...
    { pattern: '^(username \\S+(?: .*?)? (?:secret|password)(?: [0-9])?) \\S+', replacement: '$1 <redacted>' },
    { pattern: '^(snmp-server community) \\S+', replacement: '$1 <redacted>' },
    // snmp-server host 10.0.0.5 [traps|informs] [version 1|2c] COMMUNITY [notification types]
    { pattern: '^(snmp-server host \\S+ (?:(?:traps|informs) )?(?:version (?:1|2c) )?)(?!version\\b)\\S+', replacement: '$1<redacted>' },
    // tacacs-server key 7 ..., radius-server key ..., and " key 7 ..." inside tacacs/radius server blocks;
    // a key-chain key id (" key 1") is left alone.
    { pattern: '^((?:tacacs-server|radius-server) key(?: [0-7])?) \\S+', replacement: '$1 <redacted>' },
    { pattern: '^( key [0-7]) \\S+$', replacement: '$1 <redacted>' },
    { pattern: '^( key) (?![0-9]+$)\\S+$', replacement: '$1 <redacted>' },
    { pattern: '^(\\s*key-string(?: [0-7])?) \\S+', replacement: '$1 <redacted>' },
    { pattern: '^(\\s*neighbor \\S+ password(?: [0-7])?) \\S+', replacement: '$1 <redacted>' },
    { pattern: '^(\\s*ip ospf (?:authentication-key|message-digest-key \\d+ md5)(?: [0-7])?) \\S+', replacement: '$1 <redacted>' },
    { pattern: '^(crypto isakmp key(?: [0-7])?) \\S+', replacement: '$1 <redacted>' },
    { pattern: '^(\\s*pre-shared-key(?: local| remote)?(?: [0-7])?) \\S+', replacement: '$1 <redacted>' },
    // line vty / line con: password 7 ...
    { pattern: '^(\\s+password(?: [0-7])?) \\S+', replacement: '$1 <redacted>' },
  ],
  // Change events: "%SYS-5-CONFIG_I: Configured from console by vty2 (10.34.195.36)" (Cisco IOS configuration
  // guides, "Configuring System Message Logging", Table "System Log Message Elements" example; IOS-XE System Message
  // Guide, SYS-5-CONFIG_I). The word after "by" is the user, or the line (vty2, console) when no user logged in.
  change_events: ['%SYS-5-CONFIG_I: Configured from \\S+ by (?<user>[^\\s(]+)'],
  redact: false,
  exit_command: 'exit',
};
