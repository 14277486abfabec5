// Built-in template: HPE ProCurve / Aruba ArubaOS-Switch (ProVision), running configuration.
import type { TemplateSpec } from './types';

export const arubaProcurve: TemplateSpec = {
  name: 'aruba-procurve',
  vendor: 'HPE ProCurve / ArubaOS-Switch',
  description:
    'HPE ProCurve and Aruba 2530/2540/2920/2930/3810/5400R switches (ArubaOS-Switch, ProVision firmware; not ' +
    'AOS-CX). These switches show a banner ending in "Press any key to continue" before the first prompt; the ' +
    'session driver answers it. Turns paging off ("no page") and widens the terminal, then stores ' +
    '"show running-config". Enters enable (manager) mode when the credential carries an enable secret, answering ' +
    'a "Username:" question with the credential\'s username. Passwords ' +
    'appear only when "include-credentials" is configured.',
  mode: 'shell',
  // HP-2920-24G#, Aruba-2930F(config)#, Aruba-2930F(vlan-10)#; matched on the line as drawn, after the
  // cursor-positioning codes these switches send are resolved
  prompt: '(?:^|[\\r\\n])[\\w.\\-]+(?:\\([^()\\r\\n]*\\))?[#>] ?$',
  pre_commands: ['no page', 'terminal width 1920'],
  commands: ['show running-config'],
  enable: {
    command: 'enable',
    password_prompt: '[Pp]assword: ?$',
    prompt: '(?:^|[\\r\\n])[\\w.\\-]+(?:\\([^()\\r\\n]*\\))?# ?$',
  },
  strip_patterns: ['^Running configuration:\\s*$', '^show running-config\\s*$'],
  ignore_patterns: [],
  redact_patterns: [
    // password manager user-name "admin" sha1 "..." / plaintext "..."
    { pattern: '\\b(sha1|sha256|plaintext) "[^"]*"', replacement: '$1 "<redacted>"' },
    // radius-server host 10.0.0.5 key "...", tacacs-server key "...", encrypted-key "..."
    { pattern: '\\b(key|encrypted-key) "[^"]*"', replacement: '$1 "<redacted>"' },
    { pattern: '^(snmp-server community) "[^"]*"', replacement: '$1 "<redacted>"' },
    { pattern: '^(snmp-server host \\S+ community) "[^"]*"', replacement: '$1 "<redacted>"' },
  ],
  // Change events (HPE ArubaOS-Switch / ProCurve Event Log Message Reference, mgr event 03125):
  // "mgr: Startup configuration changed by CLI. New seq. number 12" (also "by SNMP", "by WebUI"); the word after
  // "by" is the interface, not a user, so no user is recorded.
  change_events: ['mgr: +(?:Startup|Running) configuration changed by '],
  redact: false,
  exit_command: 'logout',
};
