// Platform detection's session: log in with one credential, read the banner and the first prompt, run each probe command once, leave.
import type { DetectObservation } from '../templates/detect';
import { CollectError, DEFAULT_LIMITS, type CollectFailure, type CollectLimits, type CollectTarget } from './types';
import { PromptSession } from './session';
import { detectPrompt } from './session-login';
import { connectSsh } from './transports/ssh';
import { connectTelnet, loginTelnet } from './transports/telnet';
import { describeEndpoint } from './transports/tcp';

/** A probe that the device does not answer within this stops the probing (the rest is scored as it is). */
export const PROBE_TIMEOUT_MS = 5_000;

export type ProbeResult = ({ ok: true } & DetectObservation & { host_key: string | null }) | CollectFailure;

/**
 * One detection session. Never throws: a refused login comes back as AUTH_FAILED, so the caller tries the next
 * credential. A probe that times out or closes the session ends the probing; what was seen so far is returned.
 * Nothing is changed on the device: the probes are read-only commands and pagers are answered by the engine's
 * default pager patterns.
 */
export async function probeDevice(target: CollectTarget, probes: readonly string[], limits: Partial<CollectLimits> = {}): Promise<ProbeResult> {
  const lim = { ...DEFAULT_LIMITS, ...limits };
  const started = performance.now();
  const where = describeEndpoint(target.host, target.port);
  const controller = new AbortController();
  const overall = setTimeout(() => controller.abort(new CollectError('TIMEOUT', `Detection on ${where} did not finish in time.`)), lim.overall_timeout_ms);
  let reachable = false;
  let hostKey: string | null = null;
  let session: PromptSession | null = null;
  let close = () => undefined as void;
  try {
    if (target.refused) throw new CollectError(target.refused.failure, target.refused.message, false);
    const options = {
      where,
      login_timeout_ms: lim.login_timeout_ms,
      command_timeout_ms: Math.min(lim.command_timeout_ms, PROBE_TIMEOUT_MS),
      max_output_bytes: 1024 * 1024,
      signal: controller.signal,
    };
    if (target.protocol === 'telnet') {
      const stream = await connectTelnet({ host: target.host, port: target.port, connect_timeout_ms: lim.connect_timeout_ms, signal: controller.signal });
      reachable = true;
      session = new PromptSession(stream, { ...options, newline: '\r\n' });
      close = () => session?.close();
      await loginTelnet(session, { ...target, password: target.password, template_prompt: null, login_timeout_ms: lim.login_timeout_ms });
    } else {
      const conn = await connectSsh({
        ...target,
        connect_timeout_ms: lim.connect_timeout_ms,
        login_timeout_ms: lim.login_timeout_ms,
        signal: controller.signal,
        onReachable: () => (reachable = true),
        onHostKey: (fp) => (hostKey = fp),
      });
      close = () => conn.close();
      session = new PromptSession(await conn.openShell(), { ...options, newline: '\n' });
    }
    const prompt = await detectPrompt(session, null);
    const banner = session.loginLines.join('\n');
    const outputs: Record<string, string | null> = {};
    for (const command of probes) outputs[command] = null;
    for (const command of probes) {
      try {
        outputs[command] = await session.runCommand(command);
      } catch (err) {
        if (!(err instanceof CollectError) || (err.failure !== 'TIMEOUT' && err.failure !== 'DISCONNECTED')) throw err;
        // A pager no pattern knows (PAN-OS "lines 1-24"), or a slow device: its first page is evidence too. The
        // session's state is unknown after it, so the probing ends here.
        if (err.failure === 'TIMEOUT') outputs[command] = session.takeLines().join('\n');
        break;
      }
    }
    session.exit('exit');
    return { ok: true, banner, prompt, probes: outputs, host_key: hostKey };
  } catch (err) {
    const e = controller.signal.aborted ? (controller.signal.reason as CollectError) : err;
    const c = e instanceof CollectError ? e : new CollectError('INTERNAL', `Internal error during detection (${String(e).slice(0, 160)}).`);
    return {
      ok: false,
      failure: c.failure,
      message: c.message,
      reachable: c.reachable ?? reachable,
      host_key: hostKey,
      duration_ms: Math.round(performance.now() - started),
    };
  } finally {
    clearTimeout(overall);
    close();
  }
}
