// Backs up one device: connect, drive the CLI per its template, return store-ready text or a classified failure.
import { CollectError, DEFAULT_LIMITS } from './types';
import type { CollectFailure, CollectLimits, CollectResult, CollectSuccess, CollectTarget } from './types';
import type { TemplateSpec } from '../templates/types';
import type { RedactionKey } from '../templates/redact';
import { applyTemplate, cleanTerminalOutput } from './normalise';
import { PromptSession, type SessionOptions } from './session';
import { sessionVocabulary, type SessionVocabulary } from './prompts';
import { captured, commandRejected, driveShell } from './shell';
import { isCommandRejected } from './command-errors';
import { connectSsh, type ByteBudget, type SshConnection } from './transports/ssh';
import { connectTelnet, loginTelnet } from './transports/telnet';
import { describeEndpoint, formatSeconds } from './transports/tcp';
import { deflatedText, inflatedText, type DeflatedOutput } from './captured-output';
import { decodeConfigBytes, type SourceEncoding } from '../lib/decode';

export interface CollectOptions {
  /**
   * The appliance redacts (`redact_secrets` on): secrets become tokens keyed with this, unless the template says
   * `redact: false`. Absent or null: stored as received.
   */
  redact_key?: RedactionKey | null;
  signal?: AbortSignal;
}

/** Redaction happens when the appliance turns it on (a key is given) and the template does not turn it off. */
export function redaction(
  template: Pick<TemplateSpec, 'redact'>,
  key: RedactionKey | null | undefined,
): { redact: false } | { redact: true; key: RedactionKey } {
  return key && template.redact ? { redact: true, key } : { redact: false };
}

interface CollectState {
  reachable: boolean;
  host_key: string | null;
  /** How the device's bytes were decoded when they were not plain UTF-8 (lib/decode.ts). */
  encoding: SourceEncoding | null;
}

/**
 * Collects one device's configuration. Never throws: every failure comes back as a CollectFailure with a
 * FailureType and one sentence for a network engineer, never holding configuration text or secrets.
 */
export async function collectConfig(
  target: CollectTarget,
  template: TemplateSpec,
  limits?: Partial<CollectLimits>,
  opts?: CollectOptions,
): Promise<CollectResult> {
  const captured = await captureRaw(target, template, limits, opts);
  if (!captured.ok) return captured;
  try {
    const text = applyTemplate(captured.raw, template, redaction(template, opts?.redact_key));
    if (!text) throw emptyCapture(target);
    return { ...captured, text };
  } catch (err) {
    return capturedButFailed(err, target, captured);
  }
}

/**
 * An empty backup is nearly always a capture gone wrong; storing it would hide the real configuration.
 * Raised (or returned) after strip and redaction left nothing.
 */
export function emptyCapture(target: Pick<CollectTarget, 'host' | 'port'>): CollectError {
  return new CollectError('COMMAND_FAILED', `The capture commands on ${describeEndpoint(target.host, target.port)} returned no configuration text.`, true);
}

/** A failure after the output was captured (strip/redaction refused the template, nothing left): the device was reachable. */
export function capturedButFailed(err: unknown, target: CollectTarget, captured: Pick<RawCapture, 'host_key' | 'duration_ms'>): CollectFailure {
  const e = err instanceof CollectError ? err : internalError(err);
  return {
    ok: false,
    failure: e.failure,
    message: scrubSecrets(e.message, target),
    reachable: true,
    host_key: captured.host_key,
    duration_ms: captured.duration_ms,
  };
}

/** A successful capture before strip and redaction (collectConfig applies them here; the runner in a worker thread). */
export type RawCapture = Omit<CollectSuccess, 'text'>;

/** A successful capture as deflated UTF-8 parts (as the session packed them), before strip and redaction. */
export type CapturedParts = Omit<RawCapture, 'raw'> & {
  /** Deflated as the session packed them (DeflatedOutput). */
  parts: Buffer[];
  /** Their UTF-8 size inflated. */
  inflated_bytes: number;
};

/** The device's output as captured (decoded, terminal clean-up, command_output cuts), or a classified failure. Never throws. */
export async function captureRaw(
  target: CollectTarget,
  template: TemplateSpec,
  limits?: Partial<CollectLimits>,
  opts?: Pick<CollectOptions, 'signal'>,
): Promise<RawCapture | CollectFailure> {
  const captured = await captureParts(target, template, limits, opts);
  if (!captured.ok) return captured;
  const { parts, inflated_bytes, ...rest } = captured;
  return { ...rest, raw: inflatedText({ parts, bytes: inflated_bytes }) };
}

/**
 * captureRaw's capture with the output left in the UTF-8 parts it was gathered in (the runner moves them to a capture
 * worker). `onReceived` is told the size of every chunk the device sends, as it arrives.
 */
export async function captureParts(
  target: CollectTarget,
  template: TemplateSpec,
  limits?: Partial<CollectLimits>,
  opts?: Pick<CollectOptions, 'signal'> & { onReceived?: (bytes: number) => void },
): Promise<CapturedParts | CollectFailure> {
  const started = performance.now();
  const lim = resolveLimits(limits);
  const state: CollectState = { reachable: false, host_key: null, encoding: null };
  const where = describeEndpoint(target.host, target.port);
  const controller = new AbortController();
  const overall = setTimeout(
    () =>
      controller.abort(
        new CollectError('TIMEOUT', `The backup of ${where} did not finish within ${formatSeconds(lim.overall_timeout_ms)} (overall time limit).`),
      ),
    lim.overall_timeout_ms,
  );
  const onCancel = () => controller.abort(new CollectError('INTERRUPTED', `The backup of ${where} was cancelled before it finished.`));
  if (opts?.signal?.aborted) onCancel();
  else opts?.signal?.addEventListener('abort', onCancel, { once: true });
  const duration = () => Math.round(performance.now() - started);

  try {
    // Defence in depth: a refused target carries no secret and is never connected to.
    if (target.refused) throw new CollectError(target.refused.failure, target.refused.message, false);
    const vocabulary = sessionVocabulary(template);
    const session = { signal: controller.signal, onReceived: opts?.onReceived };
    const out =
      target.protocol === 'telnet'
        ? await collectTelnet(target, template, lim, session, state, vocabulary)
        : await collectSsh(target, template, lim, session, state, vocabulary);
    // A cancel or timeout that lands as the last byte arrives still wins: the caller asked to stop.
    if (controller.signal.aborted) throw controller.signal.reason;
    return { ok: true, parts: out.parts, inflated_bytes: out.bytes, encoding: state.encoding, host_key: state.host_key, duration_ms: duration() };
  } catch (err) {
    const failure: unknown = controller.signal.aborted && !(err instanceof CollectError && err.failure === 'OUTPUT_TOO_LARGE') ? controller.signal.reason : err;
    const e = failure instanceof CollectError ? failure : internalError(failure);
    return {
      ok: false,
      failure: e.failure,
      message: scrubSecrets(e.message, target),
      reachable: e.reachable ?? state.reachable,
      host_key: state.host_key,
      duration_ms: duration(),
    };
  } finally {
    clearTimeout(overall);
    opts?.signal?.removeEventListener('abort', onCancel);
  }
}

/** Defaults for every limit not given as a positive number (an explicit undefined must not mean "0 ms"). */
function resolveLimits(limits: Partial<CollectLimits> | undefined): CollectLimits {
  const out: CollectLimits = { ...DEFAULT_LIMITS };
  for (const key of Object.keys(out) as (keyof CollectLimits)[]) {
    const v = limits?.[key];
    if (typeof v === 'number' && Number.isFinite(v) && v > 0) out[key] = v;
  }
  return out;
}

function internalError(err: unknown): CollectError {
  const detail = err instanceof Error ? err.message : String(err);
  return new CollectError('INTERNAL', `Internal error in the collection engine (${detail.slice(0, 160)}).`);
}

/** Defence in depth: our messages are built from templates, but a secret must never leave in one. */
function scrubSecrets(message: string, target: CollectTarget): string {
  let out = message;
  for (const secret of [target.password, target.enable_secret, target.passphrase]) {
    if (secret && secret.length >= 3) out = out.split(secret).join('********');
  }
  return out;
}

/** The session's abort signal and byte counter. */
type SessionHooks = Pick<SessionOptions, 'onReceived'> & { signal: AbortSignal };

async function collectSsh(
  target: CollectTarget,
  template: TemplateSpec,
  lim: CollectLimits,
  hooks: SessionHooks,
  state: CollectState,
  vocabulary: SessionVocabulary,
): Promise<DeflatedOutput> {
  const { signal } = hooks;
  const conn = await connectSsh({
    host: target.host,
    port: target.port,
    username: target.username,
    password: target.password,
    private_key: target.private_key,
    passphrase: target.passphrase,
    known_host_key: target.known_host_key,
    accepted_host_key: target.accepted_host_key,
    connect_timeout_ms: lim.connect_timeout_ms,
    login_timeout_ms: lim.login_timeout_ms,
    signal,
    onReachable: () => {
      state.reachable = true;
    },
    onHostKey: (fingerprint) => {
      state.host_key = fingerprint;
    },
  });
  try {
    if (template.mode === 'exec') return await collectExec(conn, template, lim, vocabulary, state, hooks.onReceived);
    const stream = await conn.openShell();
    const session = new PromptSession(stream, {
      where: describeEndpoint(target.host, target.port),
      newline: '\n',
      login_timeout_ms: lim.login_timeout_ms,
      command_timeout_ms: lim.command_timeout_ms,
      max_output_bytes: lim.max_output_bytes,
      ...hooks,
      vocabulary,
    });
    const out = await driveShell(session, template, target);
    state.encoding = session.encoding;
    return out;
  } finally {
    conn.close();
  }
}

/**
 * One exec channel per command, no prompt handling; pre-commands run too, their output and status ignored.
 * A capture command's output is kept even with a non-zero exit status, unless it is only the CLI refusing
 * the command (vtysh: "% Unknown command: ...", exit 1), which must not be stored as a configuration.
 */
async function collectExec(
  conn: SshConnection,
  template: TemplateSpec,
  lim: CollectLimits,
  vocabulary: SessionVocabulary,
  state: CollectState,
  onReceived?: (bytes: number) => void,
): Promise<DeflatedOutput> {
  const budget: ByteBudget = { used: 0, max: lim.max_output_bytes, onReceived };
  for (const command of template.pre_commands) await conn.exec(command, { idle_ms: lim.command_timeout_ms, budget });
  let out = '';
  for (const command of template.commands) {
    const result = await conn.exec(command, { idle_ms: lim.command_timeout_ms, budget });
    if (result.output.length === 0 && result.exit_code !== null && result.exit_code !== 0) {
      throw new CollectError('COMMAND_FAILED', `'${command}' failed with exit status ${result.exit_code} and produced no output.`, true);
    }
    const decoded = decodeConfigBytes(result.output);
    state.encoding ??= decoded.encoding;
    const text = cleanTerminalOutput(decoded.text);
    if (isCommandRejected(text, vocabulary.commandErrors)) throw commandRejected(command);
    out += captured(template, command, text);
  }
  return deflatedText(out);
}

/** Telnet has no exec channel, so exec templates run through the prompt-driven shell too. */
async function collectTelnet(
  target: CollectTarget,
  template: TemplateSpec,
  lim: CollectLimits,
  hooks: SessionHooks,
  state: CollectState,
  vocabulary: SessionVocabulary,
): Promise<DeflatedOutput> {
  const { signal } = hooks;
  const stream = await connectTelnet({
    host: target.host,
    port: target.port,
    connect_timeout_ms: lim.connect_timeout_ms,
    signal,
    onReachable: () => {
      state.reachable = true;
    },
  });
  const session = new PromptSession(stream, {
    where: describeEndpoint(target.host, target.port),
    newline: '\r\n',
    login_timeout_ms: lim.login_timeout_ms,
    command_timeout_ms: lim.command_timeout_ms,
    max_output_bytes: lim.max_output_bytes,
    ...hooks,
    vocabulary,
  });
  try {
    await loginTelnet(session, {
      host: target.host,
      port: target.port,
      username: target.username,
      password: target.password,
      template_prompt: template.prompt,
      login_timeout_ms: lim.login_timeout_ms,
    });
    const out = await driveShell(session, template, target);
    state.encoding = session.encoding;
    return out;
  } finally {
    session.close();
  }
}
