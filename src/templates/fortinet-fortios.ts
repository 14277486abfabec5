// Built-in template: Fortinet FortiGate (FortiOS), configuration over an interactive shell.
import type { TemplateSpec } from './types';

export const fortinetFortios: TemplateSpec = {
  name: 'fortinet-fortios',
  vendor: 'Fortinet FortiOS',
  description:
    'FortiGate firewalls running FortiOS 6.x/7.x without VDOMs. FortiOS has no per-session pager switch: the ' +
    'pre-commands set "config system console / set output standard / end", which is a persistent setting and ' +
    'appears in the backup. Stores "show" (non-default settings, the same content as a configuration backup ' +
    'file) rather than "show full-configuration", whose tens of thousands of default lines change with every ' +
    'firmware release. With VDOMs enabled, copy this template and send "config global" first. The ' +
    '"#conf_file_ver=" header changes on every save and is dropped. Values stored as "ENC <ciphertext>" are ' +
    'encrypted with a fresh salt each time they are printed, so those lines are kept but not counted as a change.',
  mode: 'shell',
  // FGT-HQ # , FGT-HQ (console) # , FGT-HQ (global) # ; read-only admins get $. A member of an HA cluster
  // (FortiOS 7.6) shows its role glued to the name: FGT-HQ(Primary) # , FGT-HQ(Secondary) (global) #
  prompt: '(?:^|[\\r\\n])[\\w.\\-]+(?:\\([^()\\s]{1,32}\\))?(?: \\([^()\\r\\n]*\\))? [#$] ?$',
  pre_commands: ['config system console', 'set output standard', 'end'],
  commands: ['show'],
  enable: null,
  strip_patterns: ['^#conf_file_ver=', '^show\\s*$'],
  ignore_patterns: ['^\\s*set \\S+ ENC \\S+'],
  redact_patterns: [
    // set password ENC SH2..., set passwd ENC ..., set psksecret ENC ..., set secret ENC ..., set key ENC ...
    { pattern: '^(\\s*set [\\w-]+ ENC) \\S+', replacement: '$1 <redacted>' },
    { pattern: '^(#private-encryption-key=)\\S+', replacement: '$1<redacted>' },
  ],
  // Change events (FortiOS Log Message Reference, logid 0100032102 "Configuration changed" and 0100044547 "Object
  // attribute configured"; Fortinet community article 193344): ... logdesc="Configuration changed" user="admin"
  // ui="https(192.0.2.1)" msg="Configuration is changed in the admin session", and ... logdesc="Object attribute
  // configured" user="admin" ui="GUI(192.0.2.1)" action="Edit" cfgtid=126746709 cfgpath="firewall.policy" ...
  change_events: [
    'logdesc="Configuration changed"(?:.*? user="(?<user>[^"]*)")?',
    'logdesc="(?:Object )?[Aa]ttribute configured"(?:.*? user="(?<user>[^"]*)")?.*? cfgpath="',
  ],
  redact: false,
  exit_command: 'exit',
};
