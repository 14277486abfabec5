// Built-in template: Juniper Junos, configuration as "set" commands over an interactive shell.
import type { TemplateSpec } from './types';

export const juniperJunos: TemplateSpec = {
  name: 'juniper-junos',
  vendor: 'Juniper Junos',
  description:
    'Juniper MX, EX, QFX and SRX. Sets the CLI screen length and width to 0 for the session and stores ' +
    '"show configuration | display set": one complete statement per line, so diffs and redaction work line by ' +
    'line. For the hierarchical form, copy this template and use "show configuration" as the command (its ' +
    '"## Last commit:" header is already in the strip list). Log in as a user whose shell is the Junos CLI ' +
    '(not root, which lands in the FreeBSD shell); a user without the "secret" permission sees ' +
    '/* SECRET-DATA */ instead of hashes. The "{master:0}"-style line printed above the prompt on virtual ' +
    'chassis and clusters is dropped.',
  mode: 'shell',
  // netops@mx1>, netops@mx1# (configuration mode)
  prompt: '(?:^|[\\r\\n])[\\w.\\-]+@[\\w.\\-]+[>#] ?$',
  pre_commands: ['set cli screen-length 0', 'set cli screen-width 0'],
  commands: ['show configuration | display set'],
  enable: null,
  strip_patterns: [
    '^## Last commit: ',
    '^## Last changed: ',
    '^\\{(?:master|backup|linecard|primary|secondary|hold|ineligible)(?::[\\w-]+)?\\}\\s*$',
    '^\\[edit\\]\\s*$',
    '^show configuration \\| display set\\s*$',
  ],
  ignore_patterns: [],
  redact_patterns: [
    // encrypted-password, secret, authentication-key, pre-shared-key ascii-text, md5 N key, simple-password
    {
      pattern: '\\b(encrypted-password|secret|authentication-key|ascii-text|hexadecimal-text|simple-password|key) "[^"]*"',
      replacement: '$1 "<redacted>"',
    },
    { pattern: '\\b(encrypted-password) (?!")\\S+', replacement: '$1 <redacted>' },
    { pattern: '^(set snmp community) \\S+', replacement: '$1 <redacted>' },
  ],
  // Change events (Junos OS System Log Messages reference, UI_COMMIT and UI_COMMIT_COMPLETED):
  // "UI_COMMIT: User 'admin' requested 'commit' operation (comment: none)" and "UI_COMMIT_COMPLETED: commit complete".
  change_events: ["\\bUI_COMMIT: User '(?<user>[^']*)' requested ", '\\bUI_COMMIT_COMPLETED\\b'],
  redact: false,
  exit_command: 'exit',
};
