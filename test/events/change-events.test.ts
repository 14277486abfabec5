// Each built-in template's change-event patterns against message samples from the vendor's documentation (cited in the template).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { compileChangeEvents, parseSyslog } from '../../src/events/syslog';
import { getBuiltinTemplate, isBuiltinPattern, validateTemplate } from '../../src/templates/index';

/** [template, full syslog line as received, expected user (null: a change with no user named)]. */
const CHANGES: [string, string, string | null][] = [
  ['cisco-ios', '<189>123: *Mar  1 18:46:11: %SYS-5-CONFIG_I: Configured from console by vty2 (10.34.195.36)', 'vty2'],
  ['cisco-ios', '<189>226: Mar  5 02:09:10 UTC: %SYS-5-CONFIG_I: Configured from console by admin on vty0 (192.0.2.9)', 'admin'],
  ['cisco-nxos', '<189>2026 Nov 24 10:00:00 n9k %VSHD-5-VSHD_SYSLOG_CONFIG_I: Configured from vty by admin on 192.0.2.1@pts/0', 'admin'],
  ['cisco-asa', "<165>Nov 24 2026 10:00:00: %ASA-5-111008: User 'enable_15' executed the 'hostname fw1' command.", 'enable_15'],
  ['cisco-asa', "<165>%ASA-5-111010: User 'admin', running 'CLI' from IP 192.0.2.5, executed 'write memory'", 'admin'],
  ['arista-eos', '<189>Nov 24 10:00:00 leaf1 ConfigAgent: %SYS-5-CONFIG_I: Configured from console by admin on vty3 (192.0.2.1)', 'admin'],
  ['juniper-junos', "<189>Nov 24 10:00:00 mx1 mgd[4151]: UI_COMMIT: User 'ops' requested 'commit' operation (comment: none)", 'ops'],
  ['juniper-junos', '<189>1 2026-11-24T10:00:01.000Z mx1 mgd 4151 UI_COMMIT_COMPLETED [junos@2636.1.1.1.2.9] commit complete', null],
  [
    'fortinet-fortios',
    '<185>date=2021-03-12 time=14:06:09 logid="0100032102" type="event" subtype="system" level="alert" vd="root" eventtime=1615529168900386234 tz="+0800" logdesc="Configuration changed" user="admin" ui="https(192.168.244.133)" msg="Configuration is changed in the admin session"',
    'admin',
  ],
  [
    'fortinet-fortios',
    '<189>date=2025-04-10 time=05:03:10 eventtime=1744286590387128198 tz="-0700" logid="0100044547" type="event" subtype="system" level="information" vd="root" logdesc="Object attribute configured" user="netops" ui="GUI(10.32.22.115)" action="Edit" cfgtid=126746709 cfgpath="firewall.policy" cfgobj="8" cfgattr="dstintf[port1->port2]" msg="Edit firewall.policy 8"',
    'netops',
  ],
  [
    'huawei-vrp',
    '<190>Nov 24 2026 10:00:00 CE1 %%01CONFIGURATION/6/CFG_FILE_CHANGE(l)[1]:Configuration file was changed. (LogIndex=12, SrcCmd=1, SrcData=3, DestData=2, TerUser="admin", SrcAddr=192.0.2.7, ConfigChangeId=4, LogTime=123, CfgBaselineTime="2026-11-24 09:00:00")',
    'admin',
  ],
  [
    'huawei-vrp',
    '<190>Nov 24 2026 10:00:00 NE1 %%01CONFIGURATION/6/NETCONF_CONFIG_CHANGE_EVENT(l):The configuration changed. (Internal change =0, User name =netconf1, Session ID =5, Command source address =192.0.2.8, Storage type =1, Terminal type =2)',
    'netconf1',
  ],
  [
    'hpe-comware',
    '<189>Nov 24 10:00:00 2026 S5130 %%10CFGMAN/5/CFGMAN_CFGCHANGED: -EventIndex=26-CommandSource=2-ConfigSource=4-ConfigDestination=2; Configuration changed.',
    null,
  ],
  ['aruba-procurve', '<14>Nov 24 10:00:00 192.0.2.20 00076 mgr: Startup configuration changed by CLI. New seq. number 12', null],
  ['mikrotik-routeros', '<14>Nov 24 10:00:00 MikroTik system,info mangle rule changed by admin', 'admin'],
  ['mikrotik-routeros', '<14>system,info item added by admin', 'admin'],
  ['mikrotik-routeros', '<14>system,info filter rule changed by winbox-3.40/tcp-msg(winbox):ops@192.0.2.3 (*3 = /ip firewall filter set *3 comment=x)', 'ops'],
  ['frr', '<29>Nov 24 10:00:00 r1 bgpd[812]: vty[5]@(vtysh)(config-router)# neighbor 192.0.2.1 remote-as 65002', null],
  ['frr', '<29>Nov 24 10:00:00 r1 zebra[800]: vty[3]@(vtysh)# configure terminal', null],
  // FRR 8.4 as the lab's rsyslog forwards it (RFC 5424, message id prefix, empty vty address).
  ['frr', '<29>1 2026-11-24T11:24:05.120000+00:00 r1-lab staticd 71 - -  [M7Q4P-46WDR] vty[14]@(config)# ip route 203.0.113.77/32 Null0', null],
];

/** Messages from the same vendors that are NOT configuration changes. */
const NOT_CHANGES: [string, string][] = [
  ['cisco-ios', '<189>%LINEPROTO-5-UPDOWN: Line protocol on Interface GigabitEthernet0/1, changed state to down'],
  ['cisco-ios', '<189>%SYS-5-CONFIG_E: Enter configuration mode from console by admin'],
  ['cisco-asa', "<167>%ASA-7-111009: User 'admin' executed cmd: show running-config"],
  ['juniper-junos', "<189>mgd[4151]: UI_CMDLINE_READ_LINE: User 'ops', command 'show configuration '"],
  ['fortinet-fortios', '<189>logid="0100032001" logdesc="Admin login successful" user="admin" ui="https(192.168.244.133)"'],
  ['mikrotik-routeros', '<14>system,info,account user admin logged in from 10.1.101.212 via winbox'],
  ['frr', '<29>r1 zebra[800]: vty[3]@(vtysh)# show running-config'],
  ['hpe-comware', '<189>%%10SHELL/6/SHELL_CMD: -Line=vty0-IPAddr=192.0.2.5-User=admin; Command is display current-configuration'],
];

function matcher(name: string) {
  const t = getBuiltinTemplate(name);
  assert.ok(t, name);
  assert.ok((t.change_events ?? []).length > 0, `${name} has change events`);
  return compileChangeEvents(t.change_events ?? [], isBuiltinPattern);
}

for (const [name, line, user] of CHANGES) {
  test(`${name}: "${line.slice(0, 70)}..." is a change by ${user ?? '(unnamed)'}`, () => {
    const msg = parseSyslog(line);
    assert.ok(msg, 'parses');
    assert.deepEqual(matcher(name).match(msg.text), { user });
  });
}

for (const [name, line] of NOT_CHANGES) {
  test(`${name}: "${line.slice(0, 70)}..." is not a change`, () => {
    const msg = parseSyslog(line);
    assert.ok(msg);
    assert.equal(matcher(name).match(msg.text), null);
  });
}

test('every built-in template with change events still validates; custom patterns must be RE2 and not match everything', () => {
  for (const name of ['cisco-ios', 'frr', 'fortinet-fortios', 'juniper-junos']) assert.deepEqual(validateTemplate(getBuiltinTemplate(name)!), [], name);
  const base = getBuiltinTemplate('cisco-ios')!;
  const fields = (change_events: string[]) => validateTemplate({ ...base, name: 'custom-x', change_events }).map((e) => e.field);
  assert.deepEqual(fields(['(?<=x)CONFIG']), ['change_events.0']);
  assert.deepEqual(fields(['.*']), ['change_events.0']);
  assert.deepEqual(fields(['CONFIG_I: Configured from \\S+ by (?<user>\\S+)']), []);
});

test('a custom (RE2) pattern gives the user from its named group', () => {
  const m = compileChangeEvents(['CHANGED by (?<user>\\w+)', 'NOUSER'], () => false);
  assert.deepEqual(m.match('x CHANGED by bob now'), { user: 'bob' });
  assert.deepEqual(m.match('NOUSER here'), { user: null });
  assert.equal(m.match('nothing'), null);
});
