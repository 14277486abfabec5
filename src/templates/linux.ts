// Built-in template: a Linux host's network configuration files over SSH exec.
import type { TemplateSpec } from './types';

export const linux: TemplateSpec = {
  name: 'linux',
  vendor: 'Linux',
  description:
    'Linux servers and appliances with a POSIX shell (Debian/Ubuntu ifupdown layout). Stores /etc/hostname, ' +
    '/etc/hosts and /etc/network/interfaces, each through its own SSH exec channel, so no prompt, MOTD or ' +
    "terminal escape codes get in the way. For netplan, NetworkManager, nftables or a routing daemon's file " +
    '(bird.conf, frr.conf), copy this template and change the commands. Over Telnet the session falls back to ' +
    'the shell and matches a user@host:path$ prompt. Wi-Fi pre-shared keys in the interfaces file are redacted ' +
    'when redaction is on.',
  mode: 'exec',
  // linuxops@srv1-lab:~$ , root@srv1:/etc#
  prompt: '(?:^|[\\r\\n])[\\w.\\-]+@[\\w.\\-]+:[^\\r\\n$#]*[$#] ?$',
  pre_commands: [],
  commands: ['cat /etc/hostname', 'cat /etc/hosts', 'cat /etc/network/interfaces'],
  enable: null,
  strip_patterns: [],
  ignore_patterns: [],
  redact_patterns: [{ pattern: '^(\\s*wpa-(?:psk|passphrase|password)) \\S+', replacement: '$1 <redacted>' }],
  // No change-event patterns yet: event-driven backups need them (see the other templates).
  change_events: [],
  redact: false,
  exit_command: 'exit',
};
