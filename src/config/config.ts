// Appliance settings, resolved once: defaults → config file → CONFVAULT_* environment → command-line flags, validated and frozen.
import { isIP } from 'node:net';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { Cron } from 'croner';
import { parse as parseToml } from 'smol-toml';
import { z } from 'zod';
import { isDestinationEntry } from '../lib/destinations';
import { gitMirrorSchema } from './git-mirror-config';
import { ldapProblems, ldapSchema } from './ldap-config';
import { oidcProblems, oidcSchema } from './oidc-config';

const listenSchema = z
  .string()
  .regex(/^(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9.-]+):\d{1,5}$/, 'must be HOST:PORT, e.g. 127.0.0.1:8080')
  .refine((v) => {
    const port = Number(v.slice(v.lastIndexOf(':') + 1));
    return port >= 0 && port <= 65535;
  }, 'port must be 0-65535');

const timezoneSchema = z.string().refine(isValidTimeZone, 'unknown IANA time zone name');

export function isValidTimeZone(tz: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: tz });
    return true;
  } catch {
    return false;
  }
}

const cronSchema = z.string().min(1).max(128);

/** Whether croner (the scheduler's library) accepts the expression: five fields, or six with seconds first. */
export function isCronExpression(expr: string): boolean {
  try {
    new Cron(expr, { paused: true }).stop();
    return true;
  } catch {
    return false;
  }
}

export const configSchema = z
  .object({
    server: z
      .object({
        listen: listenSchema.default('127.0.0.1:8080'),
        tls_cert: z.string().default(''),
        tls_key: z.string().default(''),
        timezone: timezoneSchema.default('UTC'),
        trusted_proxies: z.array(z.string().refine(isAddressOrRange, 'expected an IP address or a CIDR range such as 10.0.0.0/24')).default([]),
        max_body_bytes: z
          .number()
          .int()
          .min(1024)
          .max(64 * 1024 * 1024)
          .default(1024 * 1024),
        header_timeout: z.number().int().min(1).max(300).default(10),
        request_timeout: z.number().int().min(1).max(3600).default(30),
      })
      .strict()
      .prefault({}),
    storage: z
      .object({
        data_dir: z.string().min(1).default('./data'),
        compress_snapshots: z.boolean().default(true),
        min_free_mb: z.number().int().min(0).max(10_485_760).default(100),
      })
      .strict()
      .prefault({}),
    backup: z
      .object({
        schedule: cronSchema.default('0 2 * * *'),
        concurrency: z.number().int().min(1).max(512).default(16),
        connect_timeout: z.number().int().min(1).max(600).default(10),
        login_timeout: z.number().int().min(1).max(600).default(20),
        command_timeout: z.number().int().min(1).max(3600).default(30),
        device_timeout: z.number().int().min(1).max(7200).default(120),
        max_output_mb: z.number().int().min(1).max(1024).default(32),
        capture_memory_mb: z.number().int().min(16).max(65536).default(512),
        retries: z.number().int().min(0).max(10).default(2),
        retry_backoff: z.number().int().min(0).max(3600).default(30),
        jitter: z.number().int().min(0).max(3600).default(60),
        reachability_interval: z.number().int().min(0).max(86400).default(300),
        redact_secrets: z.boolean().default(true),
        stale_after_hours: z.number().int().min(1).max(87600).default(48),
        detect_max_tries: z.number().int().min(1).max(10).default(3),
      })
      .strict()
      .prefault({}),
    retention: z
      .object({
        keep_days: z.number().int().min(0).max(36500).default(0),
        keep_min_versions: z.number().int().min(1).max(100000).default(10),
        orphan_grace_hours: z.number().int().min(0).max(87600).default(24),
      })
      .strict()
      .prefault({}),
    maintenance: z
      .object({
        // Empty turns the appliance's own database copies off.
        db_backup_schedule: z.union([z.literal(''), cronSchema.refine(isCronExpression, 'not a valid cron expression')]).default('30 2 * * *'),
        db_backup_keep: z.number().int().min(1).max(1000).default(7),
      })
      .strict()
      .prefault({}),
    // Continuous copy of the database and the snapshot files to a second disk or host (docs/replication.md).
    replication: z
      .object({
        enabled: z.boolean().default(false),
        // builtin: our own copy every interval; litestream: the Litestream binary streams the write-ahead log.
        engine: z.enum(['builtin', 'litestream']).default('builtin'),
        // A directory (local disk, NFS or any mounted file system; created when missing); with engine litestream also
        // sftp://USER@HOST[:PORT]/PATH or s3://BUCKET/PATH.
        replica: z.string().default(''),
        interval_seconds: z.number().int().min(1).max(86400).default(10),
        // The Litestream executable; empty: next to the confvault executable, then the bundled package, then PATH.
        litestream_path: z.string().default(''),
        // Where the snapshot files are mirrored by hash; empty: <replica>/snapshots (required for sftp:// and s3://).
        snapshot_mirror: z.string().default(''),
        // sftp:// replicas: the private key Litestream logs in with.
        sftp_key_file: z.string().default(''),
        // sftp:// replicas: the server's host key (SHA256:… fingerprint or ssh-keyscan line), checked before Litestream starts.
        sftp_host_key: z.string().default(''),
        // s3:// replicas: an S3-compatible endpoint (empty: AWS) and region; keys only from the environment.
        s3_endpoint: z.string().default(''),
        s3_region: z.string().default(''),
      })
      .strict()
      .prefault({}),
    notifications: z
      .object({
        min_interval_seconds: z.number().int().min(0).max(86400).default(60),
        max_attempts: z.number().int().min(1).max(100).default(8),
        allowed_destinations: z
          .array(z.string().refine(isDestinationEntry, 'expected a host name, an IP address or a CIDR range, each with an optional :port'))
          .max(1000)
          .default([]),
      })
      .strict()
      .prefault({}),
    git_mirror: gitMirrorSchema,
    events: z
      .object({
        syslog_listen: z.union([z.literal(''), listenSchema]).default(''),
        trust_hostname: z.boolean().default(false),
        debounce_seconds: z.number().int().min(0).max(3600).default(30),
        udp_receive_buffer_kb: z.number().int().min(0).max(1_048_576).default(4096),
      })
      .strict()
      .prefault({}),
    // Remote collectors (docs/collectors.md): the central's lease settings and the site's own settings, one section.
    collector: z
      .object({
        // Central: how long a lease holds before the backup returns to the queue, and when a silent collector counts as offline.
        lease_seconds: z.number().int().min(1).max(86_400).default(600),
        offline_after: z.number().int().min(10).max(86_400).default(180),
        // Central: an idle collector's lease request is held up to this long (at most 5 s) for work; a busy one asks again this often.
        poll_seconds: z.number().int().min(1).max(3600).default(10),
        // Site: the central appliance's URL (https:// in production), a CA file to trust for it, the spool bound.
        central_url: z.union([z.literal(''), z.string().regex(/^https?:\/\/[^\s/@]+(\/\S*)?$/, 'expected an http(s):// URL without a user in it')]).default(''),
        ca_file: z.string().default(''),
        spool_mb: z.number().int().min(1).max(100_000).default(256),
        // Site: devices backed up at once.
        concurrency: z.number().int().min(1).max(256).default(8),
        // Site: where the collector receives its zone's syslog (UDP and TCP) to forward to the central; empty: off.
        syslog_listen: z.union([z.literal(''), listenSchema]).default(''),
      })
      .strict()
      .prefault({}),
    // Speed-ups of this appliance's own (docs/performance.md: what each buys, measured, and the test that guards it).
    performance: z
      .object({
        history_page_cache: z.boolean().default(true),
        statement_cache: z.boolean().default(true),
        engine_sync_normal: z.boolean().default(true),
        loop_lag_hold: z.boolean().default(true),
        session_threads: z.boolean().default(true),
        search_index: z.boolean().default(true),
      })
      .strict()
      .prefault({}),
    auth: z
      .object({
        // TOTP second factor of local users: off, optional (each user may enrol), required (enrol at next sign-in).
        totp: z.enum(['off', 'optional', 'required']).default('optional'),
        // Local users allowed to sign in with a password (empty: every local user); the others are refused like a wrong password.
        local_users: z.array(z.string().min(1).max(64)).max(200).default([]),
        ldap: ldapSchema.prefault({}),
        oidc: oidcSchema.prefault({}),
      })
      .strict()
      .prefault({}),
    log: z
      .object({
        level: z.enum(['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent']).default('info'),
      })
      .strict()
      .prefault({}),
  })
  .strict();

export type AppConfig = z.infer<typeof configSchema>;
type RawConfig = Record<string, Record<string, unknown>>;

/** CONFVAULT_* environment variables and the key each one sets. */
export const ENV_KEYS: Record<string, [string, string, 'string' | 'int' | 'bool' | 'list']> = {
  CONFVAULT_LISTEN: ['server', 'listen', 'string'],
  CONFVAULT_TLS_CERT: ['server', 'tls_cert', 'string'],
  CONFVAULT_TLS_KEY: ['server', 'tls_key', 'string'],
  CONFVAULT_TIMEZONE: ['server', 'timezone', 'string'],
  CONFVAULT_TRUSTED_PROXIES: ['server', 'trusted_proxies', 'list'],
  CONFVAULT_DATA_DIR: ['storage', 'data_dir', 'string'],
  CONFVAULT_BACKUP_SCHEDULE: ['backup', 'schedule', 'string'],
  CONFVAULT_BACKUP_CONCURRENCY: ['backup', 'concurrency', 'int'],
  CONFVAULT_LOG_LEVEL: ['log', 'level', 'string'],
  CONFVAULT_NOTIFY_ALLOWED_DESTINATIONS: ['notifications', 'allowed_destinations', 'list'],
  CONFVAULT_COLLECTOR_CENTRAL_URL: ['collector', 'central_url', 'string'],
  CONFVAULT_COLLECTOR_LEASE_SECONDS: ['collector', 'lease_seconds', 'int'],
  CONFVAULT_COLLECTOR_POLL_SECONDS: ['collector', 'poll_seconds', 'int'],
  CONFVAULT_COLLECTOR_CONCURRENCY: ['collector', 'concurrency', 'int'],
  CONFVAULT_PERFORMANCE_HISTORY_PAGE_CACHE: ['performance', 'history_page_cache', 'bool'],
  CONFVAULT_PERFORMANCE_STATEMENT_CACHE: ['performance', 'statement_cache', 'bool'],
  CONFVAULT_PERFORMANCE_ENGINE_SYNC_NORMAL: ['performance', 'engine_sync_normal', 'bool'],
  CONFVAULT_PERFORMANCE_LOOP_LAG_HOLD: ['performance', 'loop_lag_hold', 'bool'],
  CONFVAULT_PERFORMANCE_SESSION_THREADS: ['performance', 'session_threads', 'bool'],
  CONFVAULT_PERFORMANCE_SEARCH_INDEX: ['performance', 'search_index', 'bool'],
};

export interface ConfigFlags {
  config?: string;
  dataDir?: string;
  listen?: string;
}

export class ConfigError extends Error {}

function setKey(raw: RawConfig, section: string, key: string, value: unknown): void {
  raw[section] ??= {};
  // A file with `server = 5` is reported by the schema ("server: expected object"), not by a TypeError here.
  if (typeof raw[section] === 'object' && !Array.isArray(raw[section])) raw[section][key] = value;
}

function envValue(name: string, where: string, value: string, kind: 'string' | 'int' | 'bool' | 'list'): unknown {
  if (kind === 'int') {
    if (!/^-?\d+$/.test(value.trim())) {
      throw new ConfigError(`invalid configuration: ${where}: expected a whole number, got "${value}" (set by ${name})`);
    }
    return Number(value);
  }
  if (kind === 'bool') return /^(1|true|yes|on)$/i.test(value);
  if (kind === 'list')
    return value
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean);
  return value;
}

/** Resolve the configuration; throws ConfigError with one line naming the key and the problem. */
export function loadConfig(flags: ConfigFlags = {}, env: NodeJS.ProcessEnv = process.env): Readonly<AppConfig> {
  const raw: RawConfig = {};
  const file = flags.config ?? env.CONFVAULT_CONFIG;
  if (file) {
    let text: string;
    try {
      text = readFileSync(file, 'utf8');
    } catch (err) {
      throw new ConfigError(`config file ${file}: cannot read (${(err as NodeJS.ErrnoException).code ?? 'error'})`);
    }
    try {
      Object.assign(raw, parseToml(text) as RawConfig);
    } catch (err) {
      const msg = (err as Error).message.split('\n')[0];
      const { line, column } = err as { line?: number; column?: number };
      const at = line ? ` (line ${line}, column ${column ?? 1})` : '';
      throw new ConfigError(`config file ${file}: invalid TOML${at}: ${msg}`);
    }
  }
  // Where a value came from when it was not the file, so an error points at the setting the operator wrote.
  const source = new Map<string, string>();
  for (const [name, [section, key, kind]] of Object.entries(ENV_KEYS)) {
    const v = env[name];
    if (v !== undefined && v !== '') {
      setKey(raw, section, key, envValue(name, `${section}.${key}`, v, kind));
      source.set(`${section}.${key}`, name);
    }
  }
  if (flags.dataDir) {
    setKey(raw, 'storage', 'data_dir', flags.dataDir);
    source.set('storage.data_dir', '--data-dir');
  }
  if (flags.listen) {
    setKey(raw, 'server', 'listen', flags.listen);
    source.set('server.listen', '--listen');
  }

  const parsed = configSchema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    let where = issue.path.join('.');
    let message = issue.message;
    if (issue.code === 'unrecognized_keys') {
      where = [...issue.path, issue.keys[0]].join('.');
      message = 'unknown key';
    }
    const from = source.get(where);
    throw new ConfigError(`invalid configuration: ${where || '(top level)'}: ${message}${from ? ` (set by ${from})` : ''}`);
  }
  const cfg = parsed.data;
  if (cfg.server.header_timeout > cfg.server.request_timeout) {
    throw new ConfigError('invalid configuration: server.header_timeout must not exceed server.request_timeout');
  }
  if (Boolean(cfg.server.tls_cert) !== Boolean(cfg.server.tls_key)) {
    throw new ConfigError('invalid configuration: server.tls_cert and server.tls_key must be set together');
  }
  const auth = [...ldapProblems(cfg.auth.ldap), ...oidcProblems(cfg.auth.oidc)];
  if (auth.length) throw new ConfigError(auth.join('\n'));
  cfg.storage.data_dir = path.resolve(cfg.storage.data_dir);
  checkReplication(cfg.replication, cfg.storage.data_dir);
  return deepFreeze(cfg);
}

/** Resolve the replication directories and refuse a replica that would not survive the data dir's disk. */
function checkReplication(r: AppConfig['replication'], dataDir: string): void {
  const remote = /^(sftp|s3):\/\//.test(r.replica);
  if (remote && r.engine !== 'litestream') {
    throw new ConfigError('invalid configuration: replication.replica: sftp:// and s3:// replicas need engine = "litestream"');
  }
  if (r.enabled && !r.replica)
    throw new ConfigError(
      'invalid configuration: replication.replica: a directory is required when replication.enabled is true (or, with engine = "litestream", an sftp:// or s3:// URL)',
    );
  if (r.enabled && remote && !r.snapshot_mirror) {
    throw new ConfigError('invalid configuration: replication.snapshot_mirror: a directory is required for an sftp:// or s3:// replica');
  }
  for (const key of ['replica', 'snapshot_mirror', 'litestream_path', 'sftp_key_file'] as const) {
    if (!r[key] || (key === 'replica' && remote)) continue;
    r[key] = path.resolve(r[key]);
    const fromDataDir = path.relative(dataDir, r[key]);
    if ((key === 'replica' || key === 'snapshot_mirror') && (fromDataDir === '' || !fromDataDir.startsWith('..'))) {
      throw new ConfigError(`invalid configuration: replication.${key}: must not be the data dir or inside it (it has to survive the loss of that disk)`);
    }
  }
}

function deepFreeze<T>(o: T): Readonly<T> {
  if (o && typeof o === 'object') {
    for (const v of Object.values(o)) deepFreeze(v);
    Object.freeze(o);
  }
  return o;
}

/** Split "HOST:PORT" (IPv6 in brackets) into its parts. */
export function parseListen(listen: string): { host: string; port: number } {
  const i = listen.lastIndexOf(':');
  return { host: listen.slice(0, i).replace(/^\[|\]$/g, ''), port: Number(listen.slice(i + 1)) };
}

/** An IPv4/IPv6 address, or one with a prefix length in range ("10.0.0.0/8", "fd00::/64"). */
function isAddressOrRange(entry: string): boolean {
  const [address, prefix, ...rest] = entry.trim().split('/');
  const family = isIP(address);
  if (!family || rest.length) return false;
  if (prefix === undefined) return true;
  return /^\d{1,3}$/.test(prefix) && Number(prefix) <= (family === 4 ? 32 : 128);
}
