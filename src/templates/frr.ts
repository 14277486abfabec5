// Built-in template: FRRouting through vtysh, integrated running configuration.
import type { TemplateSpec } from './types';

export const frr: TemplateSpec = {
  name: 'frr',
  vendor: 'FRRouting (vtysh)',
  description:
    'FRRouting 7.x-10.x through vtysh, for a user whose login shell is vtysh (or VyOS/SONiC-style boxes that ' +
    'drop into it). Sends "terminal length 0" (silently accepted; FRR does not page unless "terminal paginate" ' +
    'is set) and stores "show running-config". The header lines "Building configuration...", ' +
    '"Current configuration:" and "frr version" are dropped, so an FRR upgrade alone is not a change.',
  mode: 'shell',
  // r1-lab#, r1-lab(config)#, r1-lab(config-router-af)#
  prompt: '(?:^|[\\r\\n])[\\w.\\-@/:]+(?:\\([^()\\r\\n]*\\)){0,2}[#>] ?$',
  pre_commands: ['terminal length 0'],
  commands: ['show running-config'],
  enable: { command: 'enable', password_prompt: '[Pp]assword: ?$', prompt: '(?:^|[\\r\\n])[\\w.\\-@/:]+(?:\\([^()\\r\\n]*\\)){0,2}# ?$' },
  strip_patterns: ['^Building configuration\\.\\.\\.\\s*$', '^Current configuration:\\s*$', '^frr version \\S+\\s*$', '^show running-config\\s*$'],
  ignore_patterns: [],
  redact_patterns: [
    { pattern: '^((?:enable )?password) \\S+', replacement: '$1 <redacted>' },
    { pattern: '^(\\s*neighbor \\S+ password) \\S+', replacement: '$1 <redacted>' },
    { pattern: '^(\\s*ip ospf (?:authentication-key|message-digest-key \\d+ md5)) \\S+', replacement: '$1 <redacted>' },
    { pattern: '^(\\s*ipv6 ospf6 authentication key-id \\d+ hash-algo \\S+ key) \\S+', replacement: '$1 <redacted>' },
    { pattern: '^(\\s*isis password (?:clear|md5)) \\S+', replacement: '$1 <redacted>' },
    { pattern: '^(\\s*(?:area|domain)-password (?:clear|md5)) \\S+', replacement: '$1 <redacted>' },
    { pattern: '^(\\s*key-string) \\S+', replacement: '$1 <redacted>' },
  ],
  // Change events: with "log commands" (FRR User Guide, Basic Commands: "log commands" logs every command
  // entered on a VTY), each daemon logs "<prompt><command>" at notice level, e.g.
  // "vty[5]@(vtysh)(config)# router bgp 65001" (lib/vty.c, vty_command); any command given in a configuration
  // node, or "configure terminal" itself, marks a change. FRR does not name the user.
  change_events: ['vty\\[[?\\d]*\\]@\\S*\\(config[^)]*\\)# \\S', 'vty\\[[?\\d]*\\]@\\S*# conf(?:igure)?(?: t(?:erminal)?)?\\s*$'],
  redact: false,
  exit_command: 'exit',
};
