// Built-in template: MikroTik RouterOS 7, terse export over SSH exec.
import type { TemplateSpec } from './types';

export const mikrotikRouteros: TemplateSpec = {
  name: 'mikrotik-routeros',
  vendor: 'MikroTik RouterOS',
  description:
    'MikroTik RouterOS 7. Runs "/export terse show-sensitive" over an SSH exec channel: exec sessions get no ' +
    'colours, no terminal probing and no pager, so no "+ct" login-name suffix is needed. "terse" prints every ' +
    'item as one complete line (no "\\" continuations), so diffs and redaction work line by line; ' +
    '"show-sensitive" keeps keys and secrets (RouterOS 7 hides them otherwise), so the backup can be restored. ' +
    'RouterOS 6: copy this template with "/export terse" (6.x exports secrets by default and rejects ' +
    'show-sensitive). Over Telnet the session falls back to the shell: log in as "<user>+ct" to turn off ' +
    'colours and terminal detection. The "# <date> by RouterOS x.y" header line is dropped.',
  mode: 'exec',
  // [admin@MikroTik] > , [admin@MikroTik] /ip address> , [admin@MikroTik] <SAFE> (colour codes are resolved
  // before matching)
  prompt: '(?:^|[\\r\\n])\\[[^\\]\\r\\n]+@[^\\]\\r\\n]+\\][^\\r\\n>]*> ?$',
  pre_commands: [],
  commands: ['/export terse show-sensitive'],
  enable: null,
  strip_patterns: [
    // 6.x and early 7.x: "# mar/08/2024 10:15:02 by RouterOS 7.9"; 7.10+: "# 2024-03-08 10:15:02 by RouterOS 7.14.1"
    '^# \\S+ \\d\\d:\\d\\d:\\d\\d by RouterOS ',
  ],
  ignore_patterns: [],
  redact_patterns: [
    // password=, authentication-password=, secret=, wpa2-pre-shared-key=, private-key=, tcp-md5-key=, ...
    {
      pattern:
        '\\b((?:[\\w-]*password|secret|[\\w-]*pre-shared-key|preshared-key|private-key|passphrase|tcp-md5-key|auth-key|authentication-key)=)(?:"(?:[^"\\\\]|\\\\.)*"|\\S+)',
      replacement: '$1<redacted>',
    },
    // the SNMP community name is itself the secret
    { pattern: '^(/snmp community (?:add|set) .*\\bname=)(?:"(?:[^"\\\\]|\\\\.)*"|\\S+)', replacement: '$1<redacted>' },
  ],
  // Change events (MikroTik RouterOS manual, System / Log): "system,info mangle rule changed by admin",
  // "system,info item added by admin", "... moved by admin"; RouterOS 7 names the session:
  // "filter rule changed by winbox-3.40/tcp-msg(winbox):admin@192.0.2.1 (...)".
  change_events: ['\\b(?:added|changed|removed|moved) by (?:\\S*\\):)?(?<user>[^@\\s()]+)'],
  redact: false,
  exit_command: '/quit',
};
