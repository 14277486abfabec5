// Built-in template: Cisco ASA firewalls, full running configuration over an interactive shell.
import type { TemplateSpec } from './types';

export const ciscoAsa: TemplateSpec = {
  name: 'cisco-asa',
  vendor: 'Cisco ASA',
  description:
    'Cisco ASA (single context, or the context the user lands in). Turns the pager off for the session ' +
    '(terminal pager 0) and stores "more system:running-config": unlike "show running-config", which prints ' +
    'pre-shared and AAA keys as *****, it keeps them, so the backup can be restored. Enters enable mode when the ' +
    'credential carries an enable secret. The "Cryptochecksum:" and ": Written by" lines are dropped.',
  mode: 'shell',
  // asa-fw1>, asa-fw1#, asa-fw1(config)#, asa-fw1/pri/act#, asa-fw1/ctx1(config-if)#
  prompt: '(?:^|[\\r\\n])[\\w.\\-@/:]+(?:\\([^()\\r\\n]*\\)){0,2}[#>] ?$',
  pre_commands: ['terminal pager 0'],
  commands: ['more system:running-config'],
  enable: { command: 'enable', password_prompt: '[Pp]assword: ?$', prompt: '(?:^|[\\r\\n])[\\w.\\-@/:]+(?:\\([^()\\r\\n]*\\)){0,2}# ?$' },
  strip_patterns: ['^Cryptochecksum:', '^: Written by ', '^more system:running-config\\s*$'],
  ignore_patterns: [],
  redact_patterns: [
    // enable password $sha512$5000$...$... pbkdf2 / enable password 8Ry2YjIyt7RRXU24 encrypted
    { pattern: '^(enable password) \\S+', replacement: '$1 <redacted>' },
    { pattern: '^(username \\S+ password) \\S+', replacement: '$1 <redacted>' },
    { pattern: '^(passwd) \\S+', replacement: '$1 <redacted>' },
    { pattern: '^(\\s*ikev1 pre-shared-key) \\S+', replacement: '$1 <redacted>' },
    { pattern: '^(\\s*ikev2 (?:local|remote)-authentication pre-shared-key) \\S+', replacement: '$1 <redacted>' },
    // aaa-server TACACS (inside) host 10.0.0.6 / " key T4c4csK3y"
    { pattern: '^(\\s+key) \\S+', replacement: '$1 <redacted>' },
    { pattern: '^(\\s*ldap-login-password) \\S+', replacement: '$1 <redacted>' },
    { pattern: '^(snmp-server host \\S+ \\S+ (?:poll |trap )?community) \\S+', replacement: '$1 <redacted>' },
    { pattern: '^(snmp-server community) \\S+', replacement: '$1 <redacted>' },
    { pattern: '^(\\s*neighbor \\S+ password(?: [0-9])?) \\S+', replacement: '$1 <redacted>' },
    { pattern: '^(\\s*ospf (?:authentication-key|message-digest-key \\d+ md5)) \\S+', replacement: '$1 <redacted>' },
  ],
  // Change events (Cisco ASA Series Syslog Messages, 111xxx): "%ASA-5-111008: User 'user' executed the 'command'
  // command." and "%ASA-5-111010: User 'username', running 'application-name' from IP ip_addr, executed 'cmd'".
  // 111008 is logged for configuration commands (show commands are 111009, at severity 7).
  change_events: ["%ASA-5-111008: User '(?<user>[^']*)' executed the ", "%ASA-5-111010: User '?(?<user>[^',]*)'?, running "],
  redact: false,
  exit_command: 'exit',
};
