// An independent secret detector for configuration text, written from the vendors' command references (not from
// the templates' redact rules): the corpus test checks the templates against it.
//
// Sources, one per family (the statements that carry a secret, as the references print them):
// - Cisco IOS / IOS-XE: Security Command Reference (enable, username, key chain, crypto isakmp/keyring), SNMP
//   Command Reference (snmp-server community/host/user), Basic System Management (ntp authentication-key, 17.x
//   algorithms cmac-aes-128, hmac-sha1, hmac-sha2-256), IP Routing (neighbor password, ip ospf, isis
//   password/area-password/domain-password), FHRP (standby/vrrp authentication), C9800 Configuration Guide (wlan
//   security wpa psk set-key, ap profile dot1x and mgmtuser).
// - Cisco IOS-XR: System Security (username secret, key chain key-string), Routing (BGP neighbor password, IS-IS
//   lsp-password/hello-password), System Management (ntp authentication-key, snmp-server).
// - Cisco NX-OS, Arista EOS, ASA, A10 ACOS, Cumulus (FRR / NCLU): the same statements in their own command
//   references (ASA: passwd, failover key, ikev1/ikev2 pre-shared-key, aaa-server host key, ntp sha1/sha256).
// - Junos: CLI reference (encrypted-password, authentication-key, secret, pre-shared-key ascii-text/hexadecimal,
//   snmp community, v3 authentication-key/privacy-key, ntp authentication-key ... value), set and brace forms.
// - PAN-OS: CLI and XML API reference (phash, password, secret, key, bind-password, auth-password,
//   snmp-community-string, encrypted values "-AQ==").
// - FortiOS: CLI reference (set password/passwd/psksecret/secret/key ..., ENC values; snmp community name).
// - F5 TMOS: tmsh reference (password, secret, passphrase, community-name, auth-password, privacy-password, bind-pw).
// - Nokia SR OS: classic CLI reference (authentication-key, password, secret ... hash/hash2, snmp community).
// - Check Point Gaia: clish reference (password-hash, snmp community, auth-pass-phrase, privacy-pass-phrase).
// - Crypt hashes anywhere ($1$, $5$, $6$, $8$, $9$ …, Junos $9$) and PEM private key bodies.

export type Family = 'cisco' | 'asa' | 'junos' | 'panos' | 'fortios' | 'f5' | 'sros' | 'gaia' | 'procurve';

/** The family of each platform the corpus covers (the corpus folder is the template's name). */
export const FAMILY_OF: Record<string, Family> = {
  'cisco-ios': 'cisco',
  'cisco-nxos': 'cisco',
  'cisco-iosxr': 'cisco',
  'arista-eos': 'cisco',
  'a10-acos': 'cisco',
  'nvidia-cumulus': 'cisco',
  'cisco-asa': 'asa',
  'juniper-junos': 'junos',
  'paloalto-panos': 'panos',
  'fortinet-fortios': 'fortios',
  'f5-tmos': 'f5',
  'nokia-sros': 'sros',
  'checkpoint-gaia': 'gaia',
  'aruba-procurve': 'procurve',
};

/** A value: quoted (spaces allowed), or one word without the brace syntax around it. */
const V = String.raw`(?<v>"[^"]*"|'[^']*'|[^\s;{}"']+)`;
const T = String.raw`(?: (?:[0-9]|encrypted|clear|password))?`;

const re = (s: string) => new RegExp(s);

const COMMON = [
  // crypt(3) hashes and Junos $9$ strings, wherever they stand
  /(?<v>\$(?:1|5|6|8|9|y|sha512|apr1)\$[^\s"';<]+)/,
];

const CISCO_LIKE = [
  re(String.raw`^\s*enable (?:secret|password)(?: level \d+)?(?: [0-9])? ${V}`),
  re(String.raw`^\s*username \S+ (?:.*? )?(?:secret|password)(?: [0-9]| sha512| encrypted)? ${V}`),
  re(String.raw`^\s+(?:secret|password)(?: [0-9]+| encrypted| clear| sha512)? (?!(?:inheritance-disable|disable|encryption)\b)${V}`),
  re(String.raw`^\s*snmp-server community ${V}`),
  re(String.raw`(?:^|net add )snmp-server (?:readonly|readwrite)-community ${V}`),
  re(
    String.raw`^\s*snmp-server host \S+(?: (?:vrf|use-vrf) \S+)?(?: (?:traps|informs|trap|inform))?(?: version (?:1|2c))?(?: (?:encrypted|clear))? (?!(?:version|vrf|use-vrf|filter-vrf|source-interface|traps|informs|trap|inform|encrypted|clear)\b)${V}`,
  ),
  re(String.raw`^\s*ip (?:ftp|http client) password(?: [0-9])? ${V}`),
  re(String.raw`^\s+authentication text ${V}`),
  // A10 health monitors: "password encrypted X", "key-pass-phrase encrypted X"
  re(String.raw`\b(?:password|key-pass-phrase) encrypted ${V}`),
  re(String.raw`^\s*snmp-server user .*?\bauth (?:md5|sha\S*)(?: (?:encrypted|clear))? ${V}`),
  re(String.raw`^\s*snmp-server user .*?\bpriv(?: (?:des|3des|des56|aes|aes-\d+))?(?: \d+)?(?: (?:encrypted|clear))? ${V}`),
  re(String.raw`^\s*(?:tacacs|radius)-server (?:.*? )?key(?: [0-9])? ${V}`),
  re(String.raw`^\s+key(?: [0-9])? (?!\d+$)${V}$`),
  re(String.raw`\bserver-key(?: [0-9])? ${V}`),
  re(String.raw`\bkey-string${T}(?: [0-9])? ${V}`),
  re(String.raw`\bneighbor \S+ password${T}(?: [0-9])? ${V}`),
  re(String.raw`\b(?:ip )?ospf (?:authentication-key|message-digest-key \d+ md5)${T}(?: [0-9])? ${V}`),
  re(String.raw`^\s+(?:authentication-key|message-digest-key \d+ md5)(?: encrypted| clear| [0-9])? (?!\d+ |(?:md5|sha\S*|hmac-\S+|cmac\S*)\b)${V}`),
  re(String.raw`\bisis password(?: [0-9])? ${V}`),
  re(String.raw`\b(?:area|domain|lsp|hello)-password(?: (?:hmac-md5|text))?(?: (?:encrypted|clear|[0-9]))? ${V}`),
  re(String.raw`^\s*(?:ntp )?authentication-key \d+ (?:md5|sha\S*|hmac-\S+|cmac\S*)(?: (?:encrypted|clear))? ${V}`),
  re(String.raw`^\s*crypto isakmp key(?: [0-9])? ${V}`),
  re(String.raw`\bpre-shared-key(?: (?:local|remote))?(?: (?:[0-9]|clear|encrypted|password))? (?!(?:address|hostname|local|remote)\b)${V}`),
  re(String.raw`\bpre-shared-key (?:address|hostname) \S+(?: \S+)? key(?: [0-9])? ${V}`),
  re(String.raw`\bstandby(?: \d+)? authentication (?:text )?(?!(?:md5|text)\b)${V}`),
  re(String.raw`\bvrrp \d+ (?:peer )?auth(?:entication)? text ${V}`),
  re(String.raw`\bppp (?:chap|pap sent-username \S+) password(?: [0-9])? ${V}`),
  re(String.raw`\bip nhrp authentication ${V}`),
  re(String.raw`\bpsk set-key (?:ascii|hex) [0-9] (?<v>.+)$`),
  re(String.raw`\bdot1x username \S+ password [0-9] (?<v>.+)$`),
  re(String.raw`\bmgmtuser username \S+ password [0-9] (?<v>.+?)(?= secret [0-9] |$)`),
  re(String.raw`\bmgmtuser username \S+ .*? secret [0-9] (?<v>.+)$`),
];

const RULES: Record<Family, RegExp[]> = {
  cisco: CISCO_LIKE,
  asa: [
    ...CISCO_LIKE.filter((r) => !/snmp-server (?:community|host)/.test(r.source)),
    re(String.raw`^passwd ${V}`),
    re(String.raw`^failover (?:ipsec pre-shared-)?key(?: [0-9])? ${V}`),
    re(String.raw`^\s*ikev[12] .*?pre-shared-key(?: [0-9])? ${V}`),
    re(String.raw`^snmp-server host \S+ \S+ (?:.*? )?community(?: [0-9])? ${V}`),
    re(String.raw`^snmp-server community(?: [0-9])? ${V}`),
    re(String.raw`^\s*ldap-login-password ${V}`),
  ],
  junos: [
    re(
      String.raw`\b(?:encrypted-password|secret|hello-authentication-key|privacy-key|authentication-password|privacy-password|ascii-text|hexadecimal|simple-password) ${V}`,
    ),
    re(String.raw`\bauthentication-key (?!\d+ (?:type|value)\b)${V}`),
    re(String.raw`\bmd5 \d+ key ${V}`),
    re(String.raw`\bauthentication-key \d+ (?:type \S+ )?value ${V}`),
    re(String.raw`^set snmp community ${V}`),
    // trap-group statement: "The name of the trap group is embedded in SNMP trap notification packets as ... the
    // community name" (Junos Network Management reference)
    re(String.raw`^set snmp trap-group ${V}`),
  ],
  panos: [
    re(
      String.raw`\b(?:phash|password|secret|bind-password|auth-password|priv-password|authpwd|privpwd|snmp-community-string|community-string|passphrase|api-key|password-hash) ${V}`,
    ),
    re(String.raw`(?<![\w-])key (?!\{)${V}`),
    /(?<v>-AQ==[^\s;"']+)/,
  ],
  fortios: [
    re(String.raw`^\s*set (?:[\w-]*(?:password|passwd|secret|psk|pwd|passphrase)|key|api-key|md5-key|authentication-key|auth-key|private-key)(?: ENC)? ${V}`),
  ],
  f5: [
    re(
      String.raw`^\s*(?:encrypted-password|password|secret|passphrase|bind-pw|auth-password|privacy-password|community-name|shared-secret|psk|preshared-key) (?!(?:none|\{)(?:\s|$))${V}`,
    ),
    re(String.raw`\bneighbor \S+ password(?: [0-9])? ${V}`),
  ],
  sros: [
    re(String.raw`\b(?:authentication-key|password|secret|hello-authentication-key|usm-community|auth-key|priv-key) ${V}`),
    re(String.raw`\bmessage-digest-key \d+ md5 ${V}`),
    re(String.raw`^\s*community ${V} (?:r|rw|rwa|mgmt|vpls-mgmt)\b`),
  ],
  gaia: [re(String.raw`\b(?:password-hash|auth-pass-phrase|privacy-pass-phrase|expert-password-hash|secret) ${V}`), re(String.raw`^set snmp community ${V}`)],
  procurve: [
    re(String.raw`^password (?:manager|operator|all)\b.*? (?:plaintext|sha1|sha-256) ${V}`),
    re(String.raw`^snmp-server community ${V}`),
    re(String.raw`^(?:radius|tacacs)-server (?:.*? )?key ${V}`),
  ],
};

/** Each family's rules with the g flag, compiled once. */
const GLOBAL = Object.fromEntries(Object.entries(RULES).map(([f, rules]) => [f, [...COMMON, ...rules].map((r) => new RegExp(r.source, 'g'))])) as Record<
  Family,
  RegExp[]
>;

export interface FoundSecret {
  line: number;
  value: string;
}

/** Where brace-format context decides: a Junos/F5 `community NAME {` inside snmp, a FortiOS snmp community name. */
class Context {
  private stack: string[] = [];
  private fortiSnmp = 0;

  constructor(private readonly family: Family) {}

  /** Secrets the context alone reveals on this line, then the line's effect on the context. */
  see(line: string): string[] {
    const out: string[] = [];
    const t = line.trim();
    if (this.family === 'junos') {
      const top = this.stack[this.stack.length - 1];
      const m = /^(?:community|trap-group) (?<v>"[^"]*"|[^\s;{]+)\s*[{;]/.exec(t);
      if (m?.groups && top === 'snmp') out.push(m.groups.v);
      const open = /^([\w-]+)(?: [^{;]*)?\{$/.exec(t);
      if (open) this.stack.push(open[1]);
      else if (t === '}') this.stack.pop();
    } else if (this.family === 'fortios') {
      if (/^config system snmp community$/.test(t)) this.fortiSnmp = 1;
      else if (this.fortiSnmp && /^config /.test(t)) this.fortiSnmp++;
      else if (this.fortiSnmp && t === 'end') this.fortiSnmp--;
      else if (this.fortiSnmp === 1) {
        const m = /^set name (?<v>"[^"]*"|\S+)$/.exec(t);
        if (m?.groups) out.push(m.groups.v);
      }
    }
    return out;
  }
}

const unquote = (v: string) => (/^(["']).*\1$/s.test(v) ? v.slice(1, -1) : v);

/** A value that is not a secret whatever the keyword before it: a redaction token, a placeholder, an empty string. */
function isValue(v: string): boolean {
  // "<removed>", "<redacted private key>": a placeholder another tool already put in the secret's place
  return v !== '' && !/^<secret:[0-9a-f]{8}>$/.test(v) && !/^<[a-z ]+>$/.test(v) && !/^\*+$/.test(v);
}

/** Every secret the references say this text carries, with its line (0-based). PEM private key bodies count as one each. */
export function detectSecrets(text: string, family: Family): FoundSecret[] {
  const found: FoundSecret[] = [];
  const ctx = new Context(family);
  const rules = GLOBAL[family];
  let inKey = false;
  text.split('\n').forEach((line, i) => {
    if (/-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----/.test(line)) inKey = !/-----END [A-Z0-9 ]*PRIVATE KEY-----/.test(line);
    else if (/-----END [A-Z0-9 ]*PRIVATE KEY-----/.test(line)) inKey = false;
    else if (inKey && line.trim() !== '' && line.trim() !== '<redacted private key>') found.push({ line: i, value: line.trim() });
    const values = new Set<string>(ctx.see(line));
    for (const r of rules) {
      for (const m of line.matchAll(r)) if (m.groups?.v !== undefined) values.add(m.groups.v);
    }
    for (const v of values) {
      const value = unquote(v);
      if (isValue(value)) found.push({ line: i, value });
    }
  });
  return found;
}
