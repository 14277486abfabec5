// Built-in template: Huawei VRP (routers, CloudEngine and S-series switches, USG firewalls).
import type { TemplateSpec } from './types';

export const huaweiVrp: TemplateSpec = {
  name: 'huawei-vrp',
  vendor: 'Huawei VRP',
  description:
    'Huawei VRP 5 and 8: NE/AR routers, CloudEngine and S-series switches, USG firewalls. Turns paging off ' +
    'for this session only ("screen-length 0 temporary") and stores "display current-configuration". Users ' +
    'need level 3 (or the manage role): log in at that level, or give the credential an enable secret and the ' +
    'session sends "super" and its password first (the prompt does not show the level, so success is the prompt ' +
    'coming back without an "Error:" line). The "!Last configuration was updated/saved at" ' +
    'header lines are dropped; "!Software Version" is kept so upgrades show as a change.',
  mode: 'shell',
  // <HUAWEI>, [HUAWEI], [~HUAWEI-GE1/0/1] (VRP 8 two-stage commit), HRP_M<FW1> (firewall hot standby)
  prompt: '(?:^|[\\r\\n])(?:HRP_[MSA])?(?:<[^<>\\r\\n]+>|\\[[~*]?[^\\[\\]\\r\\n]+\\]) ?$',
  pre_commands: ['screen-length 0 temporary'],
  commands: ['display current-configuration'],
  enable: { command: 'super', password_prompt: '[Pp]assword: ?$', prompt: null, prompt_unchanged: true },
  strip_patterns: ['^!Last configuration was (?:updated|saved) at ', '^!Time: ', '^display current-configuration\\s*$'],
  ignore_patterns: [],
  redact_patterns: [
    // local-user x password irreversible-cipher $1c$..., snmp-agent community read cipher %^%#...%^%#,
    // radius-server shared-key cipher ..., peer 10.0.0.1 password cipher ..., ospf authentication-mode simple plain X.
    // The value after the last keyword is replaced, never the keyword itself; "ssh server cipher aes256_ctr"
    // names algorithms, not a secret.
    {
      pattern: '(?<!ssh (?:server|client) )\\b((?:irreversible-)?cipher|simple|plain) (?!(?:irreversible-)?cipher\\b|simple\\b|plain\\b)\\S+',
      replacement: '$1 <redacted>',
    },
    { pattern: '^(snmp-agent community (?:read|write)) (?!cipher\\b|simple\\b)\\S+', replacement: '$1 <redacted>' },
  ],
  // Change events (Huawei log references, CONFIGURATION module): "CONFIGURATION/6/CFG_FILE_CHANGE: Configuration file
  // was changed. (LogIndex=.., SrcCmd=.., SrcData=.., DestData=.., TerUser="admin", SrcAddr=..)" and
  // "CONFIGURATION/6/NETCONF_CONFIG_CHANGE_EVENT: The configuration changed. (Internal change =0, User name =admin, ...)".
  // On the wire the mnemonic carries VRP's flags: "%%01CONFIGURATION/6/CFG_FILE_CHANGE(l)[1]:Configuration file ...".
  change_events: [
    'CFG_FILE_CHANGE(?:\\([a-z]\\))?(?:\\[\\d+\\])?: ?Configuration file was changed\\.(?: \\(.*?TerUser="(?<user>[^"]*)")?',
    'NETCONF_CONFIG_CHANGE_EVENT(?:\\([a-z]\\))?(?:\\[\\d+\\])?: ?The configuration changed\\.(?: \\(.*?User name =(?<user>[^,)]*))?',
  ],
  redact: false,
  exit_command: 'quit',
};
