// Built-in template: Palo Alto Networks PAN-OS firewalls and Panorama, running configuration in operational mode.
import type { TemplateSpec } from './types';

export const paloaltoPanos: TemplateSpec = {
  name: 'paloalto-panos',
  vendor: 'Palo Alto Networks PAN-OS',
  description:
    'PA-series and VM-series firewalls and Panorama. Turns the pager off for the session ("set cli pager off") ' +
    'and stores "show system info" (model, serial, PAN-OS release; clock, uptime and content versions dropped) ' +
    'followed by "show config running", the committed configuration as XML, the form the firewall imports back. ' +
    'Both run in operational mode, so the backup never enters configure mode, never shows up as a configuring ' +
    'admin and cannot touch the candidate configuration. For "set" commands instead, copy this template with ' +
    'pre-commands "set cli pager off", "set cli config-output-format set", "configure" and the command "show"; ' +
    'that shows the candidate, which differs from running while another admin has uncommitted changes. ' +
    'Redacted values read [redacted] so the XML stays well-formed.',
  mode: 'shell',
  // netops@PA-3220>, netops@PA-3220#, netops@PA-3220(active)>, netops@Panorama(primary-active)>
  prompt: '(?:^|[\\r\\n])[\\w.\\-]+@[\\w.\\-]+(?:\\([\\w\\-]+\\))?[>#] ?$',
  pre_commands: ['set cli pager off'],
  commands: ['show system info', 'show config running'],
  enable: null,
  strip_patterns: [
    '^(?:up)?time: ',
    // dynamic content versions move daily: app, av, threat, wildfire, url-filtering, global-protect data files
    '^(?:app|av|threat|wildfire|wf-private|url-filtering|global-protect-datafile|global-protect-clientless-vpn|device-dictionary|logdb)-(?:version|release-date): ',
  ],
  ignore_patterns: [],
  redact_patterns: [
    // <phash>$5$...</phash>, <secret>-AQ==...</secret>, <key>-AQ==...</key>, <snmp-community-string>...</...>
    {
      pattern:
        '(<(phash|password-hash|secret|key|bind-password|snmp-community-string|community|authentication-password|privacy-password|authpwd|privpwd|passphrase|private-key)>)[^<]*(</\\2>)',
      replacement: '$1[redacted]$3',
    },
  ],
  // No change-event patterns yet: event-driven backups need them (see the other templates).
  change_events: [],
  redact: false,
  exit_command: 'exit',
};
