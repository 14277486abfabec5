// Built-in template: BIRD 2 through birdc, protocol state as the closest thing BIRD's CLI has to a configuration.
import type { TemplateSpec } from './types';

export const bird: TemplateSpec = {
  name: 'bird',
  vendor: 'BIRD Internet Routing Daemon (birdc)',
  description:
    'BIRD 2.x for a user whose login shell is birdc. birdc cannot print bird.conf, so this template stores what ' +
    'it can show of the configuration: "show status" (version, router ID) and "show protocols all" (every ' +
    'protocol with its neighbours, AS numbers, tables, preferences and filters). Clocks, timers and route ' +
    'counters are dropped; lines that follow session state (state and uptime, BGP state, negotiated ' +
    'capabilities, last error) are kept but not counted as a change. To back up bird.conf itself, log in to ' +
    'the host with the linux template and a command such as "cat /etc/bird/bird.conf". birdc prints no ' +
    'passwords, so there is nothing to redact.',
  mode: 'shell',
  // "bird> " (readline's bracketed-paste and line-clearing codes are resolved before matching)
  prompt: '(?:^|[\\r\\n])bird> ?$',
  pre_commands: [],
  commands: ['show status', 'show protocols all'],
  enable: null,
  strip_patterns: [
    '^BIRD [\\w.\\-]+ ready\\.\\s*$',
    '^Current server time is ',
    '^Last reboot on ',
    '^Last reconfiguration on ',
    '^\\s+(?:Hold timer|Keepalive timer|Send hold timer|Connect delay|Error wait|Start delay|Restart timer): ',
    '^\\s+Routes: +\\d+ imported',
    '^\\s+Route change stats: ',
    '^\\s+(?:Import|Export) (?:updates|withdraws): ',
  ],
  ignore_patterns: [
    // protocol summary line: name, protocol, table, state, since, info
    '^\\S+ +\\S+ +\\S+ +(?:up|down|start|stop|flush) +\\S',
    '^Daemon is ',
    '^\\s+(?:BGP state|State|Neighbor ID|Session|Source address|Last error|BGP Next hop): ',
    '^\\s+(?:Local|Neighbor) capabilities\\s*$',
    '^\\s+Neighbor graceful restart active\\s*$',
    // capability details under "Local capabilities" / "Neighbor capabilities"
    '^ {6,}\\S',
  ],
  redact_patterns: [],
  // No change-event patterns yet: event-driven backups need them (see the other templates).
  change_events: [],
  redact: false,
  exit_command: 'exit',
};
