// The login steps of a shell session: the first prompt after login, then privileged (enable) mode.
import { CollectError } from './types';
import type { TemplateSpec } from '../templates/types';
import { matchesAny, safePattern } from './prompts';
import { formatSeconds } from './transports/tcp';
import { SURE_PROMPT_SETTLE_MS, type PromptSession } from './session';
import type { WaitOptions, WaitStep } from './session-types';

/**
 * Waits for the first prompt after login: the template's regex or a prompt-shaped last line once the output
 * is quiet; failing that, a quiet last line that comes back unchanged when Enter is pressed.
 */
export async function detectPrompt(s: PromptSession, templatePrompt: string | null): Promise<string> {
  const custom = templatePrompt ? safePattern(templatePrompt) : null;
  s.usePromptPattern(custom);
  const pager = { lines: -1 };
  let nudge: { candidate: string; at: number } | null = null;
  let nudges = 0;
  const { login_timeout_ms, nudge_ms, where } = s.options;
  const line = await s.waitFor<string>(
    () => {
      const cur = s.currentLine;
      const paging = cur ? s.answerPager(cur, pager) : false;
      if (paging !== false) return paging;
      // The template's own prompt pattern is believed after a shorter quiet moment than the generic prompt shape
      // (a banner line that merely looks like a prompt): it is what every backup waits on once per session.
      if (cur && custom && (custom.test(cur) || custom.test(s.rawCurrentLine))) return s.settled(cur, SURE_PROMPT_SETTLE_MS);
      if (cur && !custom && s.vocabulary.prompt.test(cur)) return s.settled(cur);
      if (nudge && s.bytes > nudge.at) {
        // The Enter's line break often comes before the prompt redrawn after it: wait for the prompt.
        if (!cur && nudge.candidate) return null;
        if (cur && cur === nudge.candidate) return s.settled(cur);
        nudge = null;
      }
      if (nudge || nudges >= 3) return null;
      const quiet = s.quietMs;
      if (quiet < nudge_ms) return { retry_ms: nudge_ms - quiet };
      nudge = { candidate: cur, at: s.bytes };
      nudges++;
      s.sendLine('');
      return null;
    },
    {
      idle_ms: login_timeout_ms,
      total_ms: login_timeout_ms,
      onIdle: () =>
        new CollectError('PROMPT_NOT_FOUND', `Logged in to ${where} but no CLI prompt was recognised within ${formatSeconds(login_timeout_ms)}.`, true),
      onClose: () => new CollectError('DISCONNECTED', `${where} closed the session right after login, before showing a prompt.`, true),
    },
  );
  s.loginLines = s.takeLines();
  s.adoptPrompt(line);
  return line;
}

/**
 * Enters privileged mode; ENABLE_FAILED when the secret is refused. A username question on the way is answered
 * with `username`. With `prompt_unchanged` the prompt says nothing about privilege: the step succeeds when the
 * prompt comes back and no line printed meanwhile reads as a refusal.
 */
export async function enterEnable(s: PromptSession, spec: NonNullable<TemplateSpec['enable']>, secret: string, username: string): Promise<void> {
  const unchanged = spec.prompt_unchanged === true;
  const privileged = spec.prompt ? safePattern(spec.prompt) : /#$/;
  if (!unchanged && privileged.test(s.prompt)) return;
  const passwordPrompt = safePattern(spec.password_prompt);
  const { vocabulary } = s;
  const isPassword = (line: string) => passwordPrompt.test(line) || matchesAny(vocabulary.password, line);
  const isPromptLike = (line: string) => privileged.test(line) || vocabulary.prompt.test(line);
  const { command_timeout_ms, where } = s.options;
  const waitOptions = (what: string): WaitOptions => ({
    idle_ms: command_timeout_ms,
    onIdle: () => new CollectError('ENABLE_FAILED', `${where} did not answer ${what} within ${formatSeconds(command_timeout_ms)}.`, true),
    onClose: () => new CollectError('ENABLE_FAILED', `${where} closed the connection while entering enable mode — check the enable secret.`, true),
  });
  /** After `echo` (or after a hidden answer when null): a question, or a prompt once it is certain. */
  const step = (echo: string | null) => {
    let echoSeen = echo === null;
    let scanned = 0;
    return (): WaitStep<'password' | 'username' | 'prompt'> => {
      // The answer starts on a new line, or on the same line once the device has wiped it and drawn anew
      // (ArubaOS-Switch redraws with cursor addressing and no CR/LF): the echo, or the question answered
      // without echo, must have been erased first, so the line still holding it is not read as the answer.
      if (s.lineCount === 0 && !(echo === null ? s.wipedLines.length > 0 : s.echoWiped(echo))) return null;
      const lines = s.recentLines;
      if (!echoSeen && echo !== null && s.echoWiped(echo)) echoSeen = true;
      for (; !echoSeen && scanned < Math.min(lines.length, 5); scanned++) echoSeen = lines[scanned].trimEnd().endsWith(echo ?? '');
      const cur = s.currentLine;
      if (isPassword(cur)) return { done: 'password' };
      if (matchesAny(vocabulary.username, cur)) return { done: 'username' };
      // Privileged and of the same host: no doubt. Anything else may be a reprinted prompt, so let it settle.
      if (!unchanged && echoSeen && s.lineCount > 0 && privileged.test(cur) && s.promptKind(cur) !== null) return { done: 'prompt' };
      return isPromptLike(cur) || s.promptKind(cur) !== null ? s.settled<'prompt'>('prompt') : null;
    };
  };
  const refusedSecret = () => new CollectError('ENABLE_FAILED', `${where} refused the enable secret — check the enable secret for this device.`, true);

  s.takeLines();
  s.sendLine(spec.command);
  let outcome = await s.waitFor(step(spec.command.trim()), waitOptions(`'${spec.command}'`));
  const said: string[] = [];
  if (outcome === 'username') {
    said.push(...s.takeLines());
    s.sendLine(username);
    outcome = await s.waitFor(step(username), waitOptions('the enable username'));
    if (outcome === 'username') {
      s.write('\x03');
      throw new CollectError('ENABLE_FAILED', `${where} asked for the enable username again — check the credential's username for enable mode.`, true);
    }
  }
  if (outcome === 'password') {
    said.push(...s.takeLines());
    s.sendLine(secret);
    outcome = await s.waitFor(step(null), waitOptions('the enable secret'));
    if (outcome !== 'prompt') {
      s.write('\x03'); // leave the repeated question before closing
      throw refusedSecret();
    }
  }
  const now = s.currentLine;
  said.push(...s.takeLines());
  if (unchanged) {
    // A refusal line (the template's enable_refused, then the defaults): the level did not change.
    if (said.some((line) => matchesAny(vocabulary.enableRefused, line))) throw refusedSecret();
    if (s.promptKind(now) === null) throw new CollectError('ENABLE_FAILED', `Enable mode was not confirmed on ${where}: an unexpected prompt came back.`, true);
    return;
  }
  if (!privileged.test(now)) {
    throw new CollectError('ENABLE_FAILED', `Enable mode was not entered on ${where} (the prompt stayed unprivileged) — check the enable secret.`, true);
  }
  s.adoptPrompt(now);
}
