// Built-in template: HPE / H3C Comware 5 and 7 switches and routers.
import type { TemplateSpec } from './types';

export const hpeComware: TemplateSpec = {
  name: 'hpe-comware',
  vendor: 'HPE Comware (H3C)',
  description:
    'HPE FlexNetwork / FlexFabric and H3C devices running Comware 5 or 7. Turns paging off for the session ' +
    '("screen-length disable") and stores "display current-configuration". Users need the network-admin role ' +
    '(Comware 7) or level 3 (Comware 5): log in with it, or give the credential an enable secret and the session ' +
    'sends "super" and its password first (the prompt does not show the level, so success is the prompt coming ' +
    'back without an error line such as "Invalid password."). The configuration carries no timestamps.',
  mode: 'shell',
  // <HPE-5130>, [HPE-5130], [HPE-5130-GigabitEthernet1/0/1], RBM_P<FW> (firewall hot backup)
  prompt: '(?:^|[\\r\\n])(?:RBM_[PS])?(?:<[^<>\\r\\n]+>|\\[[^\\[\\]\\r\\n]+\\]) ?$',
  pre_commands: ['screen-length disable'],
  commands: ['display current-configuration'],
  enable: { command: 'super', password_prompt: '[Pp]assword: ?$', prompt: null, prompt_unchanged: true },
  strip_patterns: ['^display current-configuration\\s*$'],
  ignore_patterns: [],
  redact_patterns: [
    // password hash $h$6$..., password cipher $c$3$..., key authentication cipher ..., snmp-agent community read simple ...
    // "authentication-mode simple cipher X" redacts X, not the word "cipher"; "ssh2 algorithm cipher aes128-ctr"
    // names algorithms, not a secret.
    // snmp-agent target-host ... params securityname <community> v2c (shown in clear)
    { pattern: '^(\\s*snmp-agent target-host .* securityname) (?!cipher\\b|simple\\b)\\S+', replacement: '$1 <redacted>' },
    { pattern: '(?<!algorithm )\\b(cipher|hash|simple) (?!cipher\\b|hash\\b|simple\\b|plain\\b)\\S+', replacement: '$1 <redacted>' },
  ],
  // Change events (HPE Comware 7 System Log Messages Reference, CFGMAN): "%%10CFGMAN/5/CFGMAN_CFGCHANGED:
  // -EventIndex=[INT32]-CommandSource=[INT32]-ConfigSource=[INT32]-ConfigDestination=[INT32]; Configuration changed."
  // and the older "CFGMAN/5/CFGMAN_OPTCOMPLETION" is not used (it reports save/copy operations).
  change_events: ['\\bCFGMAN_CFGCHANGED\\b'],
  redact: false,
  exit_command: 'quit',
};
